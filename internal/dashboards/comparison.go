package dashboards

import (
	"fmt"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// sideSel selects the last-run points of every side being compared.
const sideSel = scoped + `, instance=~"$instance", target=~"$target", ioprobe_job=~"$ioprobe_job"`

// baseSel selects the baseline's points: one of the chosen hosts (its
// variable lists those), so that it too matches instance=~"$instance", as
// dashboard-linter's target-instance-rule asks of every selector.
const baseSel = scoped + `, instance=~"$instance", instance="$baseline_instance", target="$baseline_target", ioprobe_job=~"$ioprobe_job"`

// shapeOn matches a point with the same point of another side: same
// access specification, whatever host, target or job ran it.
const shapeOn = "workload, block_size_bytes, read_pct, random_pct, queue_depth, workers"

// aggBy keeps what identifies a point when summing over hosts and targets.
const aggBy = "ioprobe_job, workload, block_size_bytes, read_pct, random_pct, queue_depth, workers"

// overWorkers is what a point is on one side less its workers: the points
// of a job that ran at several worker counts (a line over VMs).
const overWorkers = "instance, target, ioprobe_job, workload, block_size_bytes, read_pct, random_pct, queue_depth"

// numericWorkers leaves out mixed runs, whose workers label joins their
// specifications' ("1+1"): no place on a workers axis.
const numericWorkers = `, workers=~"[0-9]+"`

// side labels each series with the host and target it measured ("side"),
// the columns of the side-by-side figures.
func side(expr string) string {
	return fmt.Sprintf(`label_join(%s, "side", " ", "instance", "target")`, expr)
}

// relabel sets the label dst of each series to format, whose $1, $2… are
// the values of the labels src.
func relabel(expr, dst, format string, src ...string) string {
	re := strings.TrimSuffix(strings.Repeat(`(.*)\\|`, len(src)), `\\|`)
	return fmt.Sprintf(`label_replace(label_join(%s, "%s", "|", "%s"), "%s", "%s", "%s", "%s")`,
		expr, dst, strings.Join(src, `", "`), dst, format, dst, re)
}

// point labels each series with what it ran ("point": "job: workload size"),
// the rows or bars where a figure mixes points. Without workers, the label
// is one point only where workers is the figure's other axis: peak-iops and
// scaling run the same pattern and size at several worker counts.
func point(expr string, withWorkers bool) string {
	src, format := []string{"ioprobe_job", "workload", "block_size_bytes"}, "$1: $2 $3 B"
	if withWorkers {
		src, format = append(src, "workers"), format+", $4 workers"
	}
	return relabel(expr, "point", format, src...)
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
	// vsphere5 Figures 3–4: peak-iops' random reads by request size.
	bySizeFilter, err := sectionFilter("peak-iops", workload.SectionRequestSize)
	if err != nil {
		return board{}, err
	}
	bySize := grid{row: "block_size_bytes", col: "side", rowTitle: "Block size", numeric: true, rowUnit: "bytes"}
	byWorkload := grid{row: "workload", col: "side", rowTitle: "Workload"}
	byPoint := grid{row: "point", col: "side", rowTitle: "Point"}
	byWorkers := grid{row: "workers", col: "point", rowTitle: "Workers", numeric: true}
	perInstance := grid{row: "point", col: "instance", rowTitle: "Point"}

	seq := func(metric, scale, workload string) string {
		return side(fmt.Sprintf(`%s * %s{%s, workload="%s"}`, scale, metric, sideSel, workload))
	}
	scaleSel := sideSel + numericWorkers
	sum := func(by, metric, sel string) string {
		return fmt.Sprintf("sum by (%s) (%s{%s})", by, metric, sel)
	}
	weightedLatency := func(by, sel string) string {
		return fmt.Sprintf("1e3 * sum by (%s) (ioprobe_run_latency_mean_seconds{%s} * ioprobe_run_operations_per_second{%s}) / sum by (%s) (ioprobe_run_operations_per_second{%s})",
			by, sel, sel, by, sel)
	}
	// Summed over the chosen hosts, a side is a target (a controller in
	// vsphere5), and the columns tell the job's patterns apart.
	bySizeSel, bySizeBy := sideSel+bySizeFilter, "target, "+aggBy
	perTarget := func(expr string) string {
		return relabel(expr, "side", "$1 $2: $3", "target", "ioprobe_job", "workload")
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
				instant("A", fmt.Sprintf("100 * (%s - 1)", versusBaseline("ioprobe_run_operations_per_second", bizFilter)))),
			matrixBars("Mean response time relative to the baseline (%)", "Each side's mean response time for each business "+
				"workload as a percentage difference from the baseline's (negative: faster).", "percent", byWorkload,
				instant("A", fmt.Sprintf("100 * (%s - 1)", versusBaseline("ioprobe_run_latency_mean_seconds", bizFilter)))),
		}},
		{title: "CPU cost per I/O (esx35 Figure 6, vsphere5 Figure 5)", panels: []cog.Builder[dashboard.Panel]{
			matrixBars("Host CPU per I/O relative to the baseline", "esx35 Figure 6: each side's host CPU time per I/O "+
				"divided by the baseline's for the same point (1 = the baseline's cost; lower is better).", "none", byPoint,
				instant("A", point(versusBaseline("ioprobe_run_host_cpu_seconds_per_io", ""), true))),
			matrixTable("Cycles per I/O", "vsphere5 Figure 5: host CPU cycles per I/O of each point and side "+
				"(busy share × rated clock × CPUs / IOPS).", "none", 0, byPoint,
				instant("A", point(side(fmt.Sprintf("ioprobe_run_cycles_per_io{%s}", sideSel)), true))),
		}},
		{title: "Scaling over workers and hosts (esx35 Figure 5, vsphere5 Figure 2)", panels: []cog.Builder[dashboard.Panel]{
			matrixBars("Aggregate throughput against workers (MB/s)", "esx35 Figure 5: MB/s summed over the chosen hosts "+
				"and targets at each number of workers (the reports' VMs); hosts that start together (align: true) load "+
				"shared storage at once.", "MBs", byWorkers,
				instant("A", point(fmt.Sprintf("1e-6 * %s", sum(aggBy, "ioprobe_run_throughput_bytes_per_second", scaleSel)), false))),
			matrixBars("Aggregate IOPS against workers", "vsphere5 Figure 2: IOPS summed over the chosen hosts and targets "+
				"at each number of workers.", "none", byWorkers,
				instant("A", point(sum(aggBy, "ioprobe_run_operations_per_second", scaleSel), false))),
			matrixBars("Mean response time against workers (ms)", "The latency line of vsphere5 Figure 2: mean "+
				"response time over all hosts and targets (each weighted by its IOPS) at each number of workers.", "ms", byWorkers,
				instant("A", point(weightedLatency(aggBy, scaleSel), false))),
			matrixBars("IOPS per instance", "Each host's share of the aggregate IOPS of each point, stacked: the stack "+
				"is the aggregate.", "none", perInstance,
				instant("A", point(fmt.Sprintf("sum by (instance, %s) (ioprobe_run_operations_per_second{%s})", aggBy, sideSel), true))).
				Stacking(common.StackingModeNormal),
			listTable("Aggregate over hosts", "Every point summed over the chosen hosts and targets: how many took part, "+
				"their total IOPS and MB/s, and their IOPS-weighted mean response time.", "none",
				map[string]any{
					"excludeByName": map[string]any{"Time": true, "read_pct": true, "random_pct": true},
					"indexByName": map[string]any{"ioprobe_job": 0, "workload": 1, "block_size_bytes": 2, "queue_depth": 3,
						"workers": 4, "Value #A": 5, "Value #B": 6, "Value #C": 7, "Value #D": 8},
					"renameByName": map[string]any{"ioprobe_job": "Job", "workload": "Workload", "block_size_bytes": "Block size (bytes)",
						"queue_depth": "Outstanding I/Os", "workers": "Workers", "Value #A": "Instances", "Value #B": "IOPS",
						"Value #C": "MB/s", "Value #D": "Mean response time (ms)"},
				},
				instant("A", fmt.Sprintf("count by (%s) (ioprobe_run_operations_per_second{%s})", aggBy, sideSel)),
				instant("B", sum(aggBy, "ioprobe_run_operations_per_second", sideSel)),
				instant("C", fmt.Sprintf("1e-6 * %s", sum(aggBy, "ioprobe_run_throughput_bytes_per_second", sideSel))),
				instant("D", weightedLatency(aggBy, sideSel))).
				OverrideByName("IOPS", []dashboard.DynamicConfigValue{{Id: "unit", Value: "iops"}}).
				OverrideByName("MB/s", []dashboard.DynamicConfigValue{{Id: "unit", Value: "MBs"}}).
				OverrideByName("Mean response time (ms)", []dashboard.DynamicConfigValue{{Id: "unit", Value: "ms"}}).
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
		// New rows go last, so that the panels above keep their ids.
		{title: "Random reads by request size (vsphere5 Figures 3, 4)", panels: []cog.Builder[dashboard.Panel]{
			matrixBars("Aggregate IOPS by request size", "vsphere5 Figure 3: IOPS of the peak-iops suite's random reads "+
				"at each request size (16 and 32 outstanding I/Os, 1 worker), summed over the chosen hosts (the report's "+
				"six VMs), a bar per target (the report's two controllers).", "none", bySize,
				instant("A", perTarget(sum(bySizeBy, "ioprobe_run_operations_per_second", bySizeSel)))),
			matrixBars("Mean response time by request size (ms)", "The latency line of vsphere5 Figure 3: mean response "+
				"time over the chosen hosts (each weighted by its IOPS) at each request size, a bar per target.", "ms", bySize,
				instant("A", perTarget(weightedLatency(bySizeBy, bySizeSel)))),
			matrixBars("Aggregate throughput by request size (MB/s)", "vsphere5 Figure 4: MB/s of the same random reads "+
				"summed over the chosen hosts, a bar per target: linear in the request size while nothing limits.", "MBs", bySize,
				instant("A", perTarget(fmt.Sprintf("1e-6 * %s", sum(bySizeBy, "ioprobe_run_throughput_bytes_per_second", bySizeSel))))).
				Span(24),
		}},
		{title: "Scaling and CPU against the baseline (esg Figures 10–12)", panels: []cog.Builder[dashboard.Panel]{
			matrixBars("IOPS relative to the baseline against workers (%)", "esg Figure 10: each side's IOPS as a "+
				"percentage difference from the baseline's for the same point, at each number of workers (the report's "+
				"VMs), for the points a job ran at several worker counts (peak-iops, scaling).", "percent",
				grid{row: "workers", col: "point", rowTitle: "Workers", numeric: true},
				instant("A", relabel(point(fmt.Sprintf("(100 * (%s - 1)) and on (%s) (count by (%s) (ioprobe_run_operations_per_second{%s}) > 1)",
					versusBaseline("ioprobe_run_operations_per_second", numericWorkers), overWorkers, overWorkers, scaleSel), false),
					"point", "$1 on $2", "point", "side"))),
			matrixBars("Host CPU by business workload (%)", "esg Figure 11: host CPU busy during each business workload, "+
				"as a share of all the host's CPUs (as ESX shows it), a bar per side.", "percent", byWorkload,
				instant("A", side(fmt.Sprintf("100 * ioprobe_run_host_cpu_utilization_ratio{%s%s}", sideSel, bizFilter)))),
			lines("Host CPU over time (%)", "esg Figure 12: host CPU busy as a share of all its CPUs over time, with "+
				"the runs as annotations: which runs cost what.", "percent",
				series("A", "100 * instance:ioprobe_host_cpu_seconds:busy_rate1m{"+hostSel+"} / on (job, instance) ioprobe_host_cpus{"+hostSel+"}",
					"{{instance}}")).
				Max(100).Span(24),
		}},
	}

	return board{
		uid: "ioprobe-comparison", title: "ioprobe / Comparison",
		description: "Hosts and targets side by side (esx35 storage protocols, esg iSCSI initiators) against a baseline, " +
			"and the multi-host scaling figures (esx35, vsphere5) summed over instances.",
		timeFrom: "now-24h", refresh: "1m",
		vars: []cog.Builder[dashboard.VariableModel]{
			labelVar("instance", "Instance", "ioprobe_run_operations_per_second{"+scoped+"}", "instance", true),
			labelVar("target", "Target", "ioprobe_run_operations_per_second{"+hostSel+"}", "target", true),
			labelVar("ioprobe_job", "ioprobe job", "ioprobe_run_operations_per_second{"+hostSel+`, target=~"$target"}`, "ioprobe_job", true),
			labelVar("baseline_instance", "Baseline instance", "ioprobe_run_operations_per_second{"+hostSel+`, ioprobe_job=~"$ioprobe_job"}`, "instance", false),
			labelVar("baseline_target", "Baseline target", "ioprobe_run_operations_per_second{"+hostSel+`, instance="$baseline_instance", ioprobe_job=~"$ioprobe_job"}`, "target", false),
		},
		annotations: []cog.Builder[dashboard.AnnotationQuery]{runsAnnotation(sideSel)},
		rows:        rows,
	}, nil
}
