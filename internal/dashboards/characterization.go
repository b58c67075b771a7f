package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// pointSel selects the last-run points of one job on one target of the
// chosen hosts: in each of the rows, repeated by instance, one host's
// whole suite run, the cells of the report's tables.
const pointSel = scoped + `, instance=~"$instance", target="$target", ioprobe_job="$ioprobe_job"`

// characterization rebuilds the esx2 report (BusLogic vs LSI Logic) from a
// `suite: characterize` job: its Tables 2–5 with data sizes as rows and
// access patterns as columns, and its Figures 2–9. A table has a cell
// per data size and pattern, which two hosts would fill twice: every row
// repeats by instance (a multi-valued variable, as dashboard-linter's
// template-instance-rule asks), so each host has its own tables, one
// below the other as the report's two adapters' are.
func characterization() (board, error) {
	cols, err := patterns("characterize")
	if err != nil {
		return board{}, err
	}
	g := grid{row: "block_size_bytes", col: "workload", rowTitle: "Data size", numeric: true, rowUnit: "bytes", columns: cols}
	q := func(format string) string { return fmt.Sprintf(format, pointSel) }

	iops := q("ioprobe_run_operations_per_second{%s}")
	cpu := q("100 * ioprobe_run_host_cpu_busy_cores{%s}")
	mbps := q("ioprobe_run_throughput_bytes_per_second{%s} / 1e6")
	ms := q("1e3 * ioprobe_run_latency_mean_seconds{%s}")

	rows := []row{
		{title: "Tables (esx2 Tables 2–5) on $instance", repeat: "instance", panels: []cog.Builder[dashboard.Panel]{
			matrixTable("I/O operations per second", "esx2 Tables 2 and 3: IOPS of each data size and access pattern "+
				"(16 outstanding I/Os, 1 worker).", "none", 0, g, instant("A", iops)),
			matrixTable("CPU utilization (%)", "esx2 Tables 4 and 5: host CPU busy during each point, summed over all CPUs "+
				"as the report counts it (can exceed 100).", "none", 1, g, instant("A", cpu)),
			matrixTable("Throughput (MB/s)", "Megabytes (10^6 bytes) per second of each point: the numbers behind "+
				"esx2 Figures 2 and 3.", "none", 1, g, instant("A", mbps)),
			matrixTable("Mean response time (ms)", "Mean completion latency of each point: the numbers behind "+
				"esx2 Figures 4 and 5.", "none", 2, g, instant("A", ms)),
		}},
		{title: "Figures (esx2 Figures 2–9) on $instance", repeat: "instance", panels: []cog.Builder[dashboard.Panel]{
			matrixBars("Throughput by data size", "esx2 Figures 2 and 3: MB/s at each data size, a bar per access pattern.",
				"MBs", g, instant("A", mbps)),
			matrixBars("Response time by data size", "esx2 Figures 4 and 5: mean response time at each data size, "+
				"a bar per access pattern.", "ms", g, instant("A", ms)),
			matrixBars("I/O rate efficiency (IOPS per %CPU)", "esx2 Figures 6 and 7: IOPS per percent of host CPU "+
				"(recording rule shape:ioprobe_run_operations_per_second_per_cpu_percent:ratio).",
				"none", g, instant("A", q("shape:ioprobe_run_operations_per_second_per_cpu_percent:ratio{%s}"))),
			matrixBars("Throughput rate efficiency (MB/s per %CPU)", "esx2 Figures 8 and 9: MB/s per percent of host CPU "+
				"(recording rule shape:ioprobe_run_mb_per_second_per_cpu_percent:ratio).",
				"none", g, instant("A", q("shape:ioprobe_run_mb_per_second_per_cpu_percent:ratio{%s}"))),
		}},
		{title: "Beyond the report on $instance", repeat: "instance", panels: []cog.Builder[dashboard.Panel]{
			listTable("Test cases", "esx2 Table 1: the points of the last run, their access specification, "+
				"and whether each completed without I/O errors.", "none",
				map[string]any{
					"excludeByName": map[string]any{"Time": true, "__name__": true, "job": true, "instance": true,
						"target": true, "ioprobe_job": true},
					"indexByName": map[string]any{"workload": 0, "block_size_bytes": 1, "read_pct": 2, "random_pct": 3,
						"queue_depth": 4, "workers": 5, "Value": 6},
					"renameByName": map[string]any{"workload": "Workload", "block_size_bytes": "Data size (bytes)",
						"read_pct": "% read", "random_pct": "% random", "queue_depth": "Outstanding I/Os",
						"workers": "Workers", "Value": "Succeeded"},
				},
				instant("A", q("ioprobe_run_success{%s}"))).
				OverrideByName("Succeeded", yesNo),
			single("Last run ended", "When the last point of the chosen job ended on this target of this host.", "dateTimeFromNow",
				instantSeries("A", q("max(ioprobe_run_timestamp_seconds{%s}) * 1000"), "")).Span(12),
			matrixTable("p99 response time (ms)", "99th percentile completion latency of each point.", "none", 2, g,
				instant("A", fmt.Sprintf(`1e3 * ioprobe_run_latency_seconds{%s, quantile="0.99"}`, pointSel))),
			matrixTable("Host CPU per I/O (µs)", "Host busy CPU time per I/O of each point.", "none", 1, g,
				instant("A", q("1e6 * ioprobe_run_host_cpu_seconds_per_io{%s}"))),
			matrixTable("IOPS against the 7-day median (%)", "Each point's IOPS as a percentage of its own median over "+
				"the last 7 days (recording rule shape:ioprobe_run_operations_per_second:ratio_to_median_7d); the alert "+
				"IoprobeThroughputDropped fires below 70.", "none", 0, g,
				instant("A", q("100 * shape:ioprobe_run_operations_per_second:ratio_to_median_7d{%s}"))),
		}},
	}

	return board{
		uid: "ioprobe-characterization", title: "ioprobe / Characterization",
		description: "The esx2 report (BusLogic vs LSI Logic) rebuilt from the last run of a characterize suite job: " +
			"tables by data size and access pattern, throughput, response time and CPU efficiency.",
		timeFrom: "now-24h", refresh: "1m",
		vars: []cog.Builder[dashboard.VariableModel]{
			labelVar("instance", "Instance", "ioprobe_run_operations_per_second{"+scoped+"}", "instance", true),
			labelVar("target", "Target", "ioprobe_run_operations_per_second{"+scoped+`, instance=~"$instance"}`, "target", false),
			preferred(labelVar("ioprobe_job", "ioprobe job", "ioprobe_run_operations_per_second{"+scoped+`, instance=~"$instance", target="$target"}`, "ioprobe_job", false),
				"characterize"),
		},
		rows: rows,
	}, nil
}
