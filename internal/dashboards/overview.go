package dashboards

import (
	"fmt"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/statetimeline"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// liveSel selects the live series of the chosen hosts, targets and jobs.
const liveSel = scoped + `, instance=~"$instance", target=~"$target", ioprobe_job=~"$ioprobe_job"`

// hostSel selects the series of the chosen hosts.
const hostSel = scoped + `, instance=~"$instance"`

// liveBy is how the live panels split their lines.
const liveBy = "instance, target, ioprobe_job"

// quantiles are the latency percentiles the live panels draw.
var quantiles = []struct{ q, name string }{{"0.5", "p50"}, {"0.9", "p90"}, {"0.99", "p99"}, {"0.999", "p99.9"}}

func overview() (board, error) {
	rate := func(metric string) string {
		return fmt.Sprintf("rate(%s{%s}[$__rate_interval])", metric, liveSel)
	}
	nativeHist := fmt.Sprintf("sum by (%s) (%s)", liveBy, rate("ioprobe_io_latency_seconds"))

	var nativeQ, classicQ []*prometheus.DataqueryBuilder
	for i, q := range quantiles {
		ref := string(rune('A' + i))
		nativeQ = append(nativeQ, series(ref,
			fmt.Sprintf("histogram_quantile(%s, %s)", q.q, nativeHist),
			q.name+" {{instance}} {{target}} {{ioprobe_job}}"))
		classicQ = append(classicQ, series(ref,
			fmt.Sprintf("histogram_quantile(%s, sum by (%s, le) (%s))", q.q, liveBy, rate("ioprobe_io_latency_seconds_bucket")),
			q.name+" {{instance}} {{target}} {{ioprobe_job}}"))
	}
	nativeQ = append(nativeQ, series("E",
		fmt.Sprintf("histogram_sum(%s) / histogram_count(%s)", nativeHist, nativeHist),
		"mean {{instance}} {{target}} {{ioprobe_job}}"))
	classicQ = append(classicQ, series("E",
		fmt.Sprintf("sum by (%s) (%s) / sum by (%s) (%s)", liveBy, rate("ioprobe_io_latency_seconds_sum"), liveBy, rate("ioprobe_io_latency_seconds_count")),
		"mean {{instance}} {{target}} {{ioprobe_job}}"))

	canarySel := hostSel + `, target=~"$target"`
	// Continuous jobs (canaries) are the ones that have a paused gauge.
	isCanary := "and on (job, instance, target, ioprobe_job) ioprobe_canary_paused{" + canarySel + "}"

	var statuses []string // ioprobe_job_runs_total's status label: every run status
	for _, st := range result.Statuses() {
		statuses = append(statuses, string(st))
	}
	runsGrid := grid{row: "ioprobe_job", col: "status", rowTitle: "Job", columns: statuses}

	rows := []row{
		{title: "I/O", panels: []cog.Builder[dashboard.Panel]{
			lines("IOPS", "I/Os completed per second inside measured windows, by host, target, job and operation.", "iops",
				series("A", fmt.Sprintf("sum by (%s, op) (%s)", liveBy, rate("ioprobe_io_operations_total")),
					"{{instance}} {{target}} {{ioprobe_job}} {{op}}")),
			lines("Throughput (MB/s)", "Bytes per second; MB is 10^6 bytes as in the reports.", "Bps",
				series("A", fmt.Sprintf("sum by (%s, op) (%s)", liveBy, rate("ioprobe_io_bytes_total")),
					"{{instance}} {{target}} {{ioprobe_job}} {{op}}")),
		}},
		{title: "Latency", panels: []cog.Builder[dashboard.Panel]{
			lines("Latency percentiles", "Completion latency percentiles and mean from the native histogram "+
				"(Prometheus started with --enable-feature=native-histograms). Without native histograms, "+
				"use the panels of the row \"Classic buckets\".", "s", nativeQ...),
			latencyHeatmap("Latency heatmap", "Completion latency distribution over time, from the native histogram.",
				series("A", fmt.Sprintf("sum(%s)", rate("ioprobe_io_latency_seconds")), "")),
		}},
		{title: "Read, write and flush latency", panels: opLatencyPanels()},
		{title: "Device latency", panels: []cog.Builder[dashboard.Panel]{
			lines("Device service time p50 and p99", "Service time (issue to completion) of every read and write of "+
				"the devices serve watches (config devices), measured in the kernel with eBPF: all I/O on them, "+
				"not only ioprobe's; over one minute, from the recording rule (native or classic). "+
				"Set beside the latency above, it says how much of it is the device and how much the stack above. "+
				"IoprobeDeviceLatencyHigh fires when a p99 stays high for 10 minutes.", "s",
				series("A", "device:ioprobe_device_latency_seconds:quantile_rate1m{"+hostSel+`, quantile=~"0.5|0.99"}`,
					"q{{quantile}} {{instance}} {{device}}")),
			latencyHeatmap("Device service time heatmap", "Service time distribution of the watched devices' reads and writes "+
				"over time, from the native histogram.",
				series("A", "sum(rate(ioprobe_device_latency_seconds{"+hostSel+`, op=~"read|write"}[$__rate_interval]))`, "")),
		}},
		{title: "Errors", panels: []cog.Builder[dashboard.Panel]{
			lines("I/O errors by class", "Failed I/Os per second by the engine's error class (ramp-up included).", "ops",
				series("A", fmt.Sprintf("sum by (%s, error) (%s)", liveBy, rate("ioprobe_io_errors_total")),
					"{{error}} {{instance}} {{target}} {{ioprobe_job}}")),
			single("I/O errors in the time range", "Failed I/Os over the dashboard's time range, by class.", "none",
				instantSeries("A", fmt.Sprintf("sum by (error) (increase(ioprobe_io_errors_total{%s}[$__range]))", liveSel), "{{error}}")).
				Span(12),
		}},
		{title: "CPU", panels: []cog.Builder[dashboard.Panel]{
			lines("CPU per I/O", "CPU seconds per I/O: ioprobe's own process (user + system) and the whole host's busy time "+
				"(total - idle - iowait), over one minute (recording rules).", "s",
				series("A", "instance:ioprobe_process_cpu_seconds_per_io_operations:ratio_rate1m{"+hostSel+"}", "process {{instance}}"),
				series("B", "instance:ioprobe_host_cpu_seconds_per_io_operations:ratio_rate1m{"+hostSel+"}", "host {{instance}}")),
			lines("Host CPU (%, summed over CPUs)", "Host busy CPU summed over all CPUs, as the reports count it "+
				"(can exceed 100), and the host's capacity.", "percent",
				series("A", "100 * instance:ioprobe_host_cpu_seconds:busy_rate1m{"+hostSel+"}", "busy {{instance}}"),
				series("B", "100 * ioprobe_host_cpus{"+hostSel+"}", "capacity {{instance}}")),
		}},
		{title: "Canary", panels: []cog.Builder[dashboard.Panel]{
			lines("Canary latency", "p50 and p99 latency of the continuous jobs (canaries) over one minute, from the "+
				"recording rule that reads native histograms or classic buckets, whichever Prometheus keeps.", "s",
				series("A", fmt.Sprintf(`target:ioprobe_io_latency_seconds:quantile_rate1m{%s, quantile=~"0.5|0.99"} %s`, canarySel, isCanary),
					"q{{quantile}} {{instance}} {{target}} {{ioprobe_job}}")),
			pausedTimeline(fmt.Sprintf("ioprobe_canary_paused{%s}", canarySel)),
			lines("Write canary flush latency", "p50 and p99 flush (fdatasync) latency of the continuous jobs that flush "+
				"(profile canary-write) over one minute, from the recording rule. IoprobeFlushLatencyHigh fires when "+
				"the p99 stays over 10 ms (etcd's guidance for its WAL) for 10 minutes.", "s",
				series("A", fmt.Sprintf(`target:ioprobe_io_flush_latency_seconds:quantile_rate1m{%s, quantile=~"0.5|0.99"} %s`, canarySel, isCanary),
					"q{{quantile}} {{instance}} {{target}} {{ioprobe_job}}")),
			lines("Canary SLO: I/Os late from their intended start", "Share of each canary's I/Os that completed more than "+
				"50 ms after their intended start (their slot under the rate limit: a stall counts every I/O it delayed), "+
				"over 5 minutes and 1 hour, from the recording rules. The SLO is 99% on time (1% budget); "+
				"IoprobeCanaryLatencySlo fires when both windows of a pair burn the budget too fast.", "percentunit",
				series("A", fmt.Sprintf(`target:ioprobe_io_intended_latency_seconds:slo_miss_ratio_rate5m{%s} %s`, canarySel, isCanary),
					"5m {{instance}} {{target}} {{ioprobe_job}}"),
				series("B", fmt.Sprintf(`target:ioprobe_io_intended_latency_seconds:slo_miss_ratio_rate1h{%s} %s`, canarySel, isCanary),
					"1h {{instance}} {{target}} {{ioprobe_job}}")),
		}},
		{title: "Jobs", panels: []cog.Builder[dashboard.Panel]{
			matrixTable("Runs by outcome in the time range", "Whole runs of each job that ended in the time range, by status.", "none", 0,
				runsGrid, instant("A", "sum by (ioprobe_job, status) (increase(ioprobe_job_runs_total{"+hostSel+`, ioprobe_job=~"$ioprobe_job"}[$__range]))`)),
			listTable("Next scheduled start", "When each scheduled job starts next.", "dateTimeFromNow",
				map[string]any{
					"excludeByName": map[string]any{"Time": true, "job": true},
					"indexByName":   map[string]any{"instance": 0, "ioprobe_job": 1, "Value": 2},
					"renameByName":  map[string]any{"ioprobe_job": "Job", "instance": "Instance", "Value": "Next start"},
				},
				instant("A", "ioprobe_job_next_run_timestamp_seconds{"+hostSel+`, ioprobe_job=~"$ioprobe_job"} * 1000`)).
				OverrideByName("Next start", []dashboard.DynamicConfigValue{{Id: "unit", Value: "dateTimeFromNow"}}),
			lastRuns(),
		}},
		{title: "Classic buckets (Prometheus without native histograms)", collapsed: true, panels: []cog.Builder[dashboard.Panel]{
			lines("Latency percentiles (classic buckets)", "The same percentiles from the classic le buckets, for a "+
				"Prometheus that does not ingest native histograms (Prometheus 2.x keeps only the native form when it does).", "s", classicQ...),
			latencyHeatmap("Latency heatmap (classic buckets)", "Latency distribution over time from the classic le buckets.",
				series("A", fmt.Sprintf("sum by (le) (%s)", rate("ioprobe_io_latency_seconds_bucket")), "{{le}}").
					Format(prometheus.PromQueryFormatHeatmap)),
			classicOpLatency(),
		}},
	}

	return board{
		uid: "ioprobe-overview", title: "ioprobe / Overview",
		description: "Live I/O, latency, errors and CPU of every ioprobe serve, with runs as annotations.",
		timeFrom:    "now-1h", refresh: "30s",
		vars: []cog.Builder[dashboard.VariableModel]{
			labelVar("instance", "Instance", "ioprobe_build_info{"+scoped+"}", "instance", true),
			labelVar("target", "Target", "ioprobe_run_active{"+hostSel+"}", "target", true),
			labelVar("ioprobe_job", "ioprobe job", "ioprobe_run_active{"+hostSel+`, target=~"$target"}`, "ioprobe_job", true),
		},
		annotations: []cog.Builder[dashboard.AnnotationQuery]{
			runsAnnotation(liveSel),
			// One mark per point at the end of its measured window.
			promAnnotation("Run results", "rgba(138, 184, 255, 0.8)",
				fmt.Sprintf("ioprobe_run_timestamp_seconds{%s} * 1000", liveSel),
				"{{ioprobe_job}}: {{workload}} {{block_size_bytes}} B", "{{instance}} {{target}}", "instance,target,ioprobe_job,workload", true, false),
		},
		rows: rows,
	}, nil
}

// opMetrics are the latency histograms drawn side by side: reads, writes
// and flushes (fsync, fdatasync: jobs that flush, the write canary).
var opMetrics = []struct{ title, metric, sel string }{
	{"Read", "ioprobe_io_latency_seconds", `, op="read"`},
	{"Write", "ioprobe_io_latency_seconds", `, op="write"`},
	{"Flush", "ioprobe_io_flush_latency_seconds", ""},
}

// opLatencyPanels are p50 and p99 of reads, writes and flushes from the
// native histograms, a panel each: a slow flush beside fast reads is a
// write cache that cannot keep up, slow everything is the device.
func opLatencyPanels() []cog.Builder[dashboard.Panel] {
	var out []cog.Builder[dashboard.Panel]
	for _, m := range opMetrics {
		h := fmt.Sprintf("sum by (%s) (rate(%s{%s%s}[$__rate_interval]))", liveBy, m.metric, liveSel, m.sel)
		var qs []*prometheus.DataqueryBuilder
		for i, q := range []struct{ q, name string }{quantiles[0], quantiles[2]} {
			qs = append(qs, series(string(rune('A'+i)), fmt.Sprintf("histogram_quantile(%s, %s)", q.q, h),
				q.name+" {{instance}} {{target}} {{ioprobe_job}}"))
		}
		out = append(out, lines(m.title+" latency", m.title+" latency p50 and p99 from the native histogram ("+m.metric+
			"); the row \"Classic buckets\" has the p99 from le buckets.", "s", qs...).Span(8))
	}
	return out
}

// classicOpLatency is opLatencyPanels' p99 from classic buckets.
func classicOpLatency() cog.Builder[dashboard.Panel] {
	var qs []*prometheus.DataqueryBuilder
	for i, m := range opMetrics {
		qs = append(qs, series(string(rune('A'+i)), fmt.Sprintf("histogram_quantile(0.99, sum by (%s, le) (rate(%s_bucket{%s%s}[$__rate_interval])))",
			liveBy, m.metric, liveSel, m.sel), strings.ToLower(m.title)+" p99 {{instance}} {{target}} {{ioprobe_job}}"))
	}
	return lines("Read, write and flush p99 (classic buckets)", "The p99 of reads, writes and flushes from the classic le buckets.", "s", qs...).Span(24)
}

// instantSeries is an instant query that keeps one frame per series (stat panels).
func instantSeries(ref, expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().RefId(ref).Expr(expr).LegendFormat(legend).
		Instant().Format(prometheus.PromQueryFormatTimeSeries)
}

// pausedTimeline shows when each canary waited for a heavier run.
func pausedTimeline(expr string) *statetimeline.PanelBuilder {
	text := func(s string) *string { return &s }
	return statetimeline.NewPanelBuilder().Title("Canary paused").
		Description("Whether each continuous job runs, or waits because a heavier job or probe holds its device.").
		Datasource(ds).WithTarget(series("A", expr, "{{instance}} {{target}} {{ioprobe_job}}")).
		Mappings([]dashboard.ValueMapping{{ValueMap: &dashboard.ValueMap{Type: dashboard.MappingTypeValueToText,
			Options: map[string]dashboard.ValueMappingResult{
				"0": {Text: text("running"), Color: text("green")},
				"1": {Text: text("paused"), Color: text("yellow")},
			}}}}).
		ShowValue(common.VisibilityModeNever).MergeValues(true).
		// Set, or the SDK writes {mode: "", sort: ""}, which Grafana's types reject.
		Tooltip(common.NewVizTooltipOptionsBuilder().Mode(common.TooltipDisplayModeMulti).Sort(common.SortOrderNone)).
		Span(12).Height(9)
}

// lastRuns lists when each job last finished and whether every point of it
// succeeded.
func lastRuns() cog.Builder[dashboard.Panel] {
	by := "instance, target, ioprobe_job"
	return listTable("Last runs", "When each job's last run ended, and whether all its points completed without I/O errors.", "none",
		map[string]any{
			"excludeByName": map[string]any{"Time": true},
			"indexByName":   map[string]any{"instance": 0, "target": 1, "ioprobe_job": 2, "Value #A": 3, "Value #B": 4},
			"renameByName": map[string]any{"instance": "Instance", "target": "Target", "ioprobe_job": "Job",
				"Value #A": "Ended", "Value #B": "All points succeeded"},
		},
		instant("A", fmt.Sprintf("max by (%s) (ioprobe_run_timestamp_seconds{%s}) * 1000", by, liveSel)),
		instant("B", fmt.Sprintf("min by (%s) (ioprobe_run_success{%s})", by, liveSel))).
		OverrideByName("Ended", []dashboard.DynamicConfigValue{{Id: "unit", Value: "dateTimeAsIso"}}).
		OverrideByName("All points succeeded", yesNo)
}
