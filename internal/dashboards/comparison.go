package dashboards

import (
	"fmt"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// sideSel selects the last-run points of every side being compared.
const sideSel = `instance=~"$instance", target=~"$target", ioprobe_job=~"$ioprobe_job"`

// baseSel selects the baseline's points.
const baseSel = `instance="$baseline_instance", target="$baseline_target", ioprobe_job=~"$ioprobe_job"`

// shapeOn matches a point with the same point of another side: same
// access specification, whatever host, target or job ran it.
const shapeOn = "workload, block_size_bytes, read_pct, random_pct, queue_depth, workers"

// aggBy keeps what identifies a point when summing over hosts and targets.
const aggBy = "ioprobe_job, workload, block_size_bytes, read_pct, random_pct, queue_depth, workers"

// side labels each series with the host and target it measured ("side"),
// the columns of the side-by-side figures.
func side(expr string) string {
	return fmt.Sprintf(`label_join(%s, "side", " ", "instance", "target")`, expr)
}

// point labels each series with what it ran ("point": "job: workload size"),
// the rows or bars where a figure mixes points.
func point(expr string, withWorkers bool) string {
	src, format := `"ioprobe_job", "workload", "block_size_bytes"`, "$1: $2 $3 B"
	if withWorkers {
		src, format = src+`, "workers"`, "$1: $2 $3 B, $4 workers"
	}
	n := strings.Count(src, ",") + 1
	re := strings.TrimSuffix(strings.Repeat(`(.*)\\|`, n), `\\|`)
	return fmt.Sprintf(`label_replace(label_join(%s, "point", "|", %s), "point", "%s", "point", "%s")`, expr, src, format, re)
}

// versusBaseline divides each side's value of a per-point gauge by the
// baseline's value of the same point.
func versusBaseline(metric, filter string) string {
	return fmt.Sprintf("%s / on (%s) group_left () avg by (%s) (%s{%s%s})",
		side(fmt.Sprintf("%s{%s%s}", metric, sideSel, filter)), shapeOn, shapeOn, metric, baseSel, filter)
}

// comparison puts hosts and targets side by side, as the esx35 (storage
// protocols) and esg (iSCSI initiators) reports do, and sums hosts for the
// multi-VM scaling figures of esx35 and vsphere5.
func comparison() (board, error) {
	business, err := patterns("business")
	if err != nil {
		return board{}, err
	}
	bizFilter := fmt.Sprintf(`, workload=~"%s"`, anyOf(business))
	bySize := grid{row: "block_size_bytes", col: "side", rowTitle: "Block size", numeric: true, rowUnit: "bytes"}
	byWorkload := grid{row: "workload", col: "side", rowTitle: "Workload"}
	byPoint := grid{row: "point", col: "side", rowTitle: "Point"}
	byWorkers := grid{row: "workers", col: "point", rowTitle: "Workers", numeric: true}
	perInstance := grid{row: "point", col: "instance", rowTitle: "Point"}

	seq := func(metric, scale, workload string) string {
		return side(fmt.Sprintf(`%s * %s{%s, workload="%s"}`, scale, metric, sideSel, workload))
	}
	// A mixed run's workers label joins its specifications' ("1+1"): no
	// place on a workers axis.
	scaleSel := sideSel + `, workers=~"[0-9]+"`
	sum := func(metric, sel string) string {
		return fmt.Sprintf("sum by (%s) (%s{%s})", aggBy, metric, sel)
	}
	weightedLatency := func(sel string) string {
		return fmt.Sprintf("1e3 * sum by (%s) (ioprobe_run_latency_mean_seconds{%s} * ioprobe_run_iops{%s}) / sum by (%s) (ioprobe_run_iops{%s})",
			aggBy, sel, sel, aggBy, sel)
	}

	rows := []row{
		{title: "Sequential throughput and response time by block size (esx35 Figures 1–4)", panels: []cog.Builder[dashboard.Panel]{
			matrixBars("Sequential read throughput (MB/s)", "esx35 Figure 1: 100% sequential read MB/s by block size, "+
				"a bar per host and target (higher is better).", "MBs", bySize,
				instant("A", seq("ioprobe_run_throughput_bytes_per_second", "1e-6", "Sequential Read"))),
			matrixBars("Sequential write throughput (MB/s)", "esx35 Figure 2: 100% sequential write MB/s by block size "+
				"(higher is better).", "MBs", bySize,
				instant("A", seq("ioprobe_run_throughput_bytes_per_second", "1e-6", "Sequential Write"))),
			matrixBars("Sequential read response time (ms)", "esx35 Figure 3: mean response time of 100% sequential reads "+
				"by block size (lower is better).", "ms", bySize,
				instant("A", seq("ioprobe_run_latency_mean_seconds", "1e3", "Sequential Read"))),
			matrixBars("Sequential write response time (ms)", "esx35 Figure 4: mean response time of 100% sequential writes "+
				"by block size (lower is better).", "ms", bySize,
				instant("A", seq("ioprobe_run_latency_mean_seconds", "1e3", "Sequential Write"))),
		}},
		{title: "Business workloads against the baseline (esg Figures 8, 9, 13)", panels: []cog.Builder[dashboard.Panel]{
			matrixBars("IOPS relative to the baseline (%)", "esg Figures 8, 9 and 13: each side's IOPS for each business "+
				"workload (esg appendix) as a percentage difference from the baseline's (positive: faster).", "percent", byWorkload,
				instant("A", fmt.Sprintf("100 * (%s - 1)", versusBaseline("ioprobe_run_iops", bizFilter)))),
			matrixBars("Mean response time relative to the baseline (%)", "Each side's mean response time for each business "+
				"workload as a percentage difference from the baseline's (negative: faster).", "percent", byWorkload,
				instant("A", fmt.Sprintf("100 * (%s - 1)", versusBaseline("ioprobe_run_latency_mean_seconds", bizFilter)))),
		}},
		{title: "CPU cost per I/O (esx35 Figure 6, vsphere5 Figure 5)", panels: []cog.Builder[dashboard.Panel]{
			matrixBars("Host CPU per I/O relative to the baseline", "esx35 Figure 6: each side's host CPU time per I/O "+
				"divided by the baseline's for the same point (1 = the baseline's cost; lower is better).", "none", byPoint,
				instant("A", point(versusBaseline("ioprobe_run_host_cpu_seconds_per_io", ""), false))),
			matrixTable("Cycles per I/O", "vsphere5 Figure 5: host CPU cycles per I/O of each point and side "+
				"(busy share × rated clock × CPUs / IOPS).", "none", 0, byPoint,
				instant("A", point(side(fmt.Sprintf("ioprobe_run_cycles_per_io{%s}", sideSel)), false))),
		}},
		{title: "Scaling over workers and hosts (esx35 Figure 5, vsphere5 Figure 2)", panels: []cog.Builder[dashboard.Panel]{
			matrixBars("Aggregate throughput against workers (MB/s)", "esx35 Figure 5: MB/s summed over the chosen hosts "+
				"and targets at each number of workers (the reports' VMs); hosts that start together (align: true) load "+
				"shared storage at once.", "MBs", byWorkers,
				instant("A", point(fmt.Sprintf("1e-6 * %s", sum("ioprobe_run_throughput_bytes_per_second", scaleSel)), false))),
			matrixBars("Aggregate IOPS against workers", "vsphere5 Figure 2: IOPS summed over the chosen hosts and targets "+
				"at each number of workers.", "none", byWorkers,
				instant("A", point(sum("ioprobe_run_iops", scaleSel), false))),
			matrixBars("Mean response time against workers (ms)", "The latency line of vsphere5 Figure 2: mean "+
				"response time over all hosts and targets (each weighted by its IOPS) at each number of workers.", "ms", byWorkers,
				instant("A", point(weightedLatency(scaleSel), false))),
			matrixBars("IOPS per instance", "Each host's share of the aggregate IOPS of each point, stacked: the stack "+
				"is the aggregate.", "none", perInstance,
				instant("A", point(fmt.Sprintf("sum by (instance, %s) (ioprobe_run_iops{%s})", aggBy, sideSel), true))).
				Stacking(common.StackingModeNormal),
			listTable("Aggregate over hosts", "Every point summed over the chosen hosts and targets: how many took part, "+
				"their total IOPS and MB/s, and their IOPS-weighted mean response time.",
				map[string]any{
					"excludeByName": map[string]any{"Time": true, "read_pct": true, "random_pct": true},
					"indexByName": map[string]any{"ioprobe_job": 0, "workload": 1, "block_size_bytes": 2, "queue_depth": 3,
						"workers": 4, "Value #A": 5, "Value #B": 6, "Value #C": 7, "Value #D": 8},
					"renameByName": map[string]any{"ioprobe_job": "Job", "workload": "Workload", "block_size_bytes": "Block size (bytes)",
						"queue_depth": "Outstanding I/Os", "workers": "Workers", "Value #A": "Instances", "Value #B": "IOPS",
						"Value #C": "MB/s", "Value #D": "Mean response time (ms)"},
				},
				instant("A", fmt.Sprintf("count by (%s) (ioprobe_run_iops{%s})", aggBy, sideSel)),
				instant("B", sum("ioprobe_run_iops", sideSel)),
				instant("C", fmt.Sprintf("1e-6 * %s", sum("ioprobe_run_throughput_bytes_per_second", sideSel))),
				instant("D", weightedLatency(sideSel))).
				Decimals(1).Span(24),
			lines("Aggregate live IOPS", "IOPS summed over the chosen hosts and targets, by job: the multi-host load "+
				"as it happens.", "iops",
				series("A", fmt.Sprintf("sum by (ioprobe_job) (rate(ioprobe_io_operations_total{%s}[$__rate_interval]))", sideSel),
					"{{ioprobe_job}}")),
			lines("Aggregate live throughput (MB/s)", "Bytes per second summed over the chosen hosts and targets, by job.", "Bps",
				series("A", fmt.Sprintf("sum by (ioprobe_job) (rate(ioprobe_io_bytes_total{%s}[$__rate_interval]))", sideSel),
					"{{ioprobe_job}}")),
			lines("Instances running each job", "How many hosts and targets run each job at once.", "none",
				series("A", fmt.Sprintf("count by (ioprobe_job) (ioprobe_run_active{%s} == 1)", sideSel), "{{ioprobe_job}}")).
				Decimals(0),
		}},
	}

	return board{
		uid: "ioprobe-comparison", title: "ioprobe / Comparison",
		description: "Hosts and targets side by side (esx35 storage protocols, esg iSCSI initiators) against a baseline, " +
			"and the multi-host scaling figures (esx35, vsphere5) summed over instances.",
		timeFrom: "now-24h", refresh: "1m",
		vars: []cog.Builder[dashboard.VariableModel]{
			labelVar("instance", "Instance", "ioprobe_run_iops", "instance", true),
			labelVar("target", "Target", `ioprobe_run_iops{instance=~"$instance"}`, "target", true),
			labelVar("ioprobe_job", "Job", `ioprobe_run_iops{instance=~"$instance", target=~"$target"}`, "ioprobe_job", true),
			labelVar("baseline_instance", "Baseline instance", `ioprobe_run_iops{ioprobe_job=~"$ioprobe_job"}`, "instance", false),
			labelVar("baseline_target", "Baseline target", `ioprobe_run_iops{instance="$baseline_instance", ioprobe_job=~"$ioprobe_job"}`, "target", false),
		},
		rows: rows,
	}, nil
}
