package dashboards

import (
	"fmt"
	"strings"
)

// The recording and alerting rules of configs/prometheus and the mixin, in
// one place. An expression names its configurable parts jsonnet's way,
// %(name)s of the mixin's _config (config below has the defaults that
// configs/prometheus is written with); a literal % is %%.

// ruleGroup is one group of a rule file.
type ruleGroup struct {
	name  string
	rules []rule
}

// rule is a recording rule (record) or an alert (alert).
type rule struct {
	// comment is written above the rule in the YAML files.
	comment       string
	record, alert string
	expr          string
	labels        [][2]string
	// for is the alert's waiting period ("": none).
	forDur string
	// summary is static; description may use the alert's $labels and
	// $value. The runbook URL is the alert's section of docs/runbooks.md.
	summary, description string
}

// config is the mixin's _config: its keys and the defaults that the
// shipped files use.
var config = [][2]string{
	// Selects ioprobe's /metrics scrape job: every rule reads only it.
	{"ioprobeSelector", `job="ioprobe"`},
	// Selects the /probe scrape job (blackbox style: prometheus.yml's
	// ioprobe-probe, the ServiceMonitor's relabelled job): the probe
	// alerts read only it.
	{"probeSelector", `job="ioprobe-probe"`},
	// The labels that tell one host from another, left out when the
	// aggregate rules sum over hosts. kube-prometheus adds pod, and often
	// node and container: add those your scrape config puts on every series.
	{"hostLabels", "instance"},
	// Where docs/runbooks.md is published; an alert's runbook_url is this
	// plus "#" and the alert's name in lower case.
	{"runbookURL", "https://github.com/ioprobe/ioprobe/blob/main/docs/runbooks.md"},
	// IoprobeFlushLatencyHigh: the write canary's p99 flush (fdatasync)
	// latency above this many seconds; etcd's guidance for its WAL is 10 ms.
	{"flushLatencyThresholdSeconds", "0.01"},
	// IoprobeCanaryLatencySlo: the share of a canary's I/Os that complete
	// within canarySLOLatencySeconds of their intended start. The latency
	// must be one of the classic bucket bounds (0.00005 … 10: see
	// docs/metrics.md) for Prometheus servers without native histograms.
	{"canarySLOLatencySeconds", "0.05"},
	{"canarySLOObjective", "0.99"},
	// The labels, besides job, that tell one deployment from another in
	// one Prometheus (kube-prometheus with several clusters: "cluster,
	// namespace"), separated by commas: each becomes a dashboard variable
	// before Job, and every dashboard query matches it. None by default.
	{"scopeLabels", ""},
	// IoprobeDeviceLatencyHigh: a watched device's p99 service time (config
	// devices, measured in the kernel) above this many seconds.
	{"deviceLatencyThresholdSeconds", "0.05"},
}

// derivedConfig are _config keys the mixin computes from the others (a
// jsonnet expression over the final _config, so that a user's override of
// those reaches them); the shipped files fill them in from config's
// defaults (derivedValue). A hidden one is a helper of the others.
var derivedConfig = []struct {
	name, jsonnet string
	hidden        bool
}{
	// ioprobeSelector and a variable's matcher per scope label: what the
	// dashboards' Job variable lists the jobs of.
	{name: "scopeSelector",
		jsonnet: `std.join(', ', [self.ioprobeSelector] + ['%s=~"$%s"' % [l, l] for l in self.scopeLabelList])`},
	// Every dashboard query's selector: scopeSelector and the Job
	// variable's job=~"$job".
	{name: "dashboardSelector", jsonnet: `self.scopeSelector + ', job=~"$job"'`},
	{name: "scopeLabelList", hidden: true,
		jsonnet: `[std.stripChars(l, ' ') for l in std.split(self.scopeLabels, ',') if std.stripChars(l, ' ') != '']`},
}

// derivedValue is what a derivedConfig key's jsonnet makes of config's
// defaults.
func derivedValue(name string) (string, bool) {
	switch name {
	case "scopeSelector":
		parts := []string{configValue("ioprobeSelector")}
		for _, l := range scopeLabels(configValue("scopeLabels")) {
			parts = append(parts, fmt.Sprintf(`%s=~"$%s"`, l, l))
		}
		return strings.Join(parts, ", "), true
	case "dashboardSelector":
		return configValue("scopeSelector") + `, job=~"$job"`, true
	}
	return "", false
}

// scopeLabels splits the scopeLabels setting as the mixin does.
func scopeLabels(s string) []string {
	var out []string
	for _, l := range strings.Split(s, ",") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// configValue is a _config key's value in the shipped files.
func configValue(name string) string {
	for _, kv := range config {
		if kv[0] == name {
			return kv[1]
		}
	}
	if v, ok := derivedValue(name); ok {
		return v
	}
	panic("rules: unknown config key " + name)
}

// ruleFileHeader is the comment at the top of rules.yml.
const ruleFileHeader = `# Recording rules for ioprobe serve: the dashboards' heavy or repeated
# expressions, computed once per evaluation. Names follow Prometheus'
# level:metric:operations convention (metric: the source metric without
# _total; operations: what was done, ratio for a division); the level says
# which labels are kept:
#   target:      job, instance, target, ioprobe_job (op summed away)
#   instance:    job, instance (and whatever else the scrape puts on a host)
#   shape:       the last-run gauges' labels (target, ioprobe_job, workload,
#                block_size_bytes, read_pct, random_pct, queue_depth, workers)
#   ioprobe_job: the shape labels less the host's and target (summed over hosts)
#   device:      job, instance, device (op summed away: reads and writes)
# Sums name what they drop ("sum without"), so that the labels a
# kube-prometheus scrape adds survive.
# Generated by internal/dashboards (make dashboards), as is the mixin in
# mixin/: edit the Go source, not this file.
# Check with: promtool check rules rules.yml; tests: promtool test rules tests/*.yml
# Which dashboard panel reads which rule: docs/dashboards.md.
`

// alertFileHeader is the comment at the top of alerts.yml.
const alertFileHeader = `# Alert rules for ioprobe serve. Some read the recording rules of rules.yml:
# load both (prometheus.yml does). Thresholds are examples: tune them to
# your storage. Each alert has a static summary, a description with the
# details and a runbook_url into docs/runbooks.md.
# Generated by internal/dashboards (make dashboards), as is the mixin in
# mixin/: edit the Go source, not this file.
# Check with: promtool check rules alerts.yml; tests: promtool test rules tests/*.yml.
`

// latencyQuantile is the recording rule of one latency quantile.
func latencyQuantile(q string) rule {
	return rule{
		record: "target:ioprobe_io_latency_seconds:quantile_rate1m",
		labels: [][2]string{{"quantile", q}},
		expr: `(
    histogram_quantile(` + q + `, sum without (op) (rate(ioprobe_io_latency_seconds{%(ioprobeSelector)s}[1m])))
  or
    histogram_quantile(` + q + `, sum without (op) (rate(ioprobe_io_latency_seconds_bucket{%(ioprobeSelector)s}[1m])))
) >= 0
`,
	}
}

// flushQuantile is the recording rule of one flush latency quantile (a
// flush has no op label).
func flushQuantile(q string) rule {
	return rule{
		record: "target:ioprobe_io_flush_latency_seconds:quantile_rate1m",
		labels: [][2]string{{"quantile", q}},
		expr: `(
    histogram_quantile(` + q + `, rate(ioprobe_io_flush_latency_seconds{%(ioprobeSelector)s}[1m]))
  or
    histogram_quantile(` + q + `, rate(ioprobe_io_flush_latency_seconds_bucket{%(ioprobeSelector)s}[1m]))
) >= 0
`,
	}
}

// deviceQuantile is the recording rule of one quantile of the watched
// devices' service time, reads and writes together (flushes apart: a
// flush's time is the write cache's, not a transfer's).
func deviceQuantile(q string) rule {
	return rule{
		record: "device:ioprobe_device_latency_seconds:quantile_rate1m",
		labels: [][2]string{{"quantile", q}},
		expr: `(
    histogram_quantile(` + q + `, sum without (op) (rate(ioprobe_device_latency_seconds{%(ioprobeSelector)s, op=~"read|write"}[1m])))
  or
    histogram_quantile(` + q + `, sum without (op) (rate(ioprobe_device_latency_seconds_bucket{%(ioprobeSelector)s, op=~"read|write"}[1m])))
) >= 0
`,
	}
}

// sloMissRatio is the recording rule of the share of I/Os that completed
// later than canarySLOLatencySeconds after their intended start, over w.
func sloMissRatio(w string) rule {
	return rule{
		record: "target:ioprobe_io_intended_latency_seconds:slo_miss_ratio_rate" + w,
		expr: `(
    1 - histogram_fraction(0, %(canarySLOLatencySeconds)s, sum without (op) (rate(ioprobe_io_intended_latency_seconds{%(ioprobeSelector)s}[` + w + `])))
  or
    1 - sum without (op, le) (rate(ioprobe_io_intended_latency_seconds_bucket{%(ioprobeSelector)s, le="%(canarySLOLatencySeconds)s"}[` + w + `]))
      / sum without (op) (rate(ioprobe_io_intended_latency_seconds_count{%(ioprobeSelector)s}[` + w + `]))
) >= 0
`,
	}
}

// recordingRules are rules.yml.
var recordingRules = []ruleGroup{
	{name: "ioprobe-live", rules: []rule{
		withComment(latencyQuantile("0.5"), `Latency quantiles over one minute, from the native histogram when
Prometheus ingests it (Prometheus 3: scrape_native_histograms; 2.x
with --enable-feature=native-histograms keeps only the native form) or
else from the classic buckets: one rule for both. ">= 0" drops the NaN
of a minute without I/O.`),
		latencyQuantile("0.9"),
		latencyQuantile("0.99"),
		latencyQuantile("0.999"),
		{
			comment: "Mean latency over one minute, native or classic.",
			record:  "target:ioprobe_io_latency_seconds:mean1m",
			expr: `(
    histogram_sum(sum without (op) (rate(ioprobe_io_latency_seconds{%(ioprobeSelector)s}[1m])))
  / histogram_count(sum without (op) (rate(ioprobe_io_latency_seconds{%(ioprobeSelector)s}[1m])))
  or
    sum without (op) (rate(ioprobe_io_latency_seconds_sum{%(ioprobeSelector)s}[1m]))
  / sum without (op) (rate(ioprobe_io_latency_seconds_count{%(ioprobeSelector)s}[1m]))
) >= 0
`,
		},
		withComment(flushQuantile("0.5"), `Flush (fsync, fdatasync) latency quantiles over one minute, native
or classic: the write canary's (profile canary-write) and any job's
that flushes.`),
		flushQuantile("0.99"),
		withComment(deviceQuantile("0.5"), `Service time quantiles of the devices serve watches (config
devices: every request, measured in the kernel), reads and writes,
over one minute, native or classic.`),
		deviceQuantile("0.99"),
		withComment(sloMissRatio("5m"), `The share of I/Os that completed more than canarySLOLatencySeconds
after their intended start (rate-limited runs only: latency from the
moment each I/O was due, so a stall counts every I/O it delayed), over
the windows of the SLO's burn-rate alert. ">= 0" drops the NaN of a
window without I/O.`),
		sloMissRatio("30m"),
		sloMissRatio("1h"),
		sloMissRatio("6h"),
		{
			comment: `Host CPU busy in cores (total - idle - iowait, all CPUs); x100 is the
reports' summed CPU %.`,
			record: "instance:ioprobe_host_cpu_seconds:busy_rate1m",
			expr:   `sum without (mode) (rate(ioprobe_host_cpu_seconds_total{%(ioprobeSelector)s, mode!~"idle|iowait"}[1m]))`,
		},
		{
			record: "instance:ioprobe_io_operations:rate1m",
			expr:   `sum without (target, ioprobe_job, op) (rate(ioprobe_io_operations_total{%(ioprobeSelector)s}[1m]))`,
		},
		{
			comment: `CPU seconds per I/O while I/O runs (nothing while none does): only
ioprobe's own process, its scrape job's. Probes' CPU is included, their
I/Os not.`,
			record: "instance:ioprobe_process_cpu_seconds_per_io_operations:ratio_rate1m",
			expr: `rate(process_cpu_seconds_total{%(ioprobeSelector)s}[1m])
  / (instance:ioprobe_io_operations:rate1m > 0)
`,
		},
		{
			record: "instance:ioprobe_host_cpu_seconds_per_io_operations:ratio_rate1m",
			expr: `instance:ioprobe_host_cpu_seconds:busy_rate1m
  / (instance:ioprobe_io_operations:rate1m > 0)
`,
		},
	}},
	{name: "ioprobe-runs", rules: []rule{
		{
			comment: "The esx2 report's efficiency figures, per point of a run.",
			record:  "shape:ioprobe_run_operations_per_second_per_cpu_percent:ratio",
			expr:    `ioprobe_run_operations_per_second{%(ioprobeSelector)s} / (100 * ioprobe_run_host_cpu_busy_cores{%(ioprobeSelector)s} > 0)`,
		},
		{
			record: "shape:ioprobe_run_mb_per_second_per_cpu_percent:ratio",
			expr:   `ioprobe_run_throughput_bytes_per_second{%(ioprobeSelector)s} / 1e6 / (100 * ioprobe_run_host_cpu_busy_cores{%(ioprobeSelector)s} > 0)`,
		},
		{
			comment: `Each point against its own history: the gauge holds the last run's
value until the next run, so its median over time is the median of
the runs weighted by how long each stood.`,
			record: "shape:ioprobe_run_operations_per_second:median_over_time_7d",
			expr:   `quantile_over_time(0.5, ioprobe_run_operations_per_second{%(ioprobeSelector)s}[7d])`,
		},
		{
			record: "shape:ioprobe_run_operations_per_second:ratio_to_median_7d",
			expr:   `ioprobe_run_operations_per_second{%(ioprobeSelector)s} / (shape:ioprobe_run_operations_per_second:median_over_time_7d > 0)`,
		},
		{
			comment: `Every point summed over the hosts and targets that ran it: the
reports' multi-VM aggregates, meaningful for hosts that start
together (align: true). :count is how many took part.`,
			record: "ioprobe_job:ioprobe_run_operations_per_second:sum",
			expr:   `sum without (%(hostLabels)s, target) (ioprobe_run_operations_per_second{%(ioprobeSelector)s})`,
		},
		{
			record: "ioprobe_job:ioprobe_run_throughput_bytes_per_second:sum",
			expr:   `sum without (%(hostLabels)s, target) (ioprobe_run_throughput_bytes_per_second{%(ioprobeSelector)s})`,
		},
		{
			record: "ioprobe_job:ioprobe_run_operations_per_second:count",
			expr:   `count without (%(hostLabels)s, target) (ioprobe_run_operations_per_second{%(ioprobeSelector)s})`,
		},
		{
			comment: `Mean latency over all of them, each weighted by its IOPS (the mean
over every I/O they completed).`,
			record: "ioprobe_job:ioprobe_run_latency_mean_seconds:iops_weighted_mean",
			expr: `sum without (%(hostLabels)s, target) (ioprobe_run_latency_mean_seconds{%(ioprobeSelector)s} * ioprobe_run_operations_per_second{%(ioprobeSelector)s})
  / (sum without (%(hostLabels)s, target) (ioprobe_run_operations_per_second{%(ioprobeSelector)s}) > 0)
`,
		},
	}},
}

func withComment(r rule, c string) rule {
	r.comment = c
	return r
}

var (
	warning  = [][2]string{{"severity", "warning"}}
	critical = [][2]string{{"severity", "critical"}}
)

// alertingRules are alerts.yml.
var alertingRules = []ruleGroup{
	{name: "ioprobe", rules: []rule{
		{
			comment: `The /metrics scrape job only: /probe answers 503 while a job holds the
device, which is no sign of a dead exporter.`,
			alert: "IoprobeDown", expr: `up{%(ioprobeSelector)s} == 0`, forDur: "5m", labels: warning,
			summary:     "An ioprobe daemon cannot be scraped.",
			description: "ioprobe on {{ $labels.instance }} cannot be scraped",
		},
		{
			alert: "IoprobeIOErrors", forDur: "1m", labels: critical,
			expr:        `sum without (op) (rate(ioprobe_io_errors_total{%(ioprobeSelector)s}[5m])) > 0`,
			summary:     "A target returns I/O errors.",
			description: "I/O errors ({{ $labels.error }}) on {{ $labels.instance }} target {{ $labels.target }}",
		},
		{
			comment: `A job with verify: true read back a sector that was overwritten,
corrupted, torn or misdirected. Data integrity: no waiting period.`,
			alert: "IoprobeDataCorrupted", labels: critical,
			expr:        `increase(ioprobe_io_verify_failures_total{%(ioprobeSelector)s}[10m]) > 0`,
			summary:     "Data read back from a target failed verification.",
			description: "{{ $value | humanize }} reads of {{ $labels.target }} on {{ $labels.instance }} failed verification (job {{ $labels.ioprobe_job }})",
		},
		{
			comment: `p99 of a continuous job (a canary: the jobs that have a paused
gauge) while it runs, from native histograms or classic buckets.`,
			alert: "IoprobeCanaryLatencyHigh", forDur: "10m", labels: warning,
			expr: `target:ioprobe_io_latency_seconds:quantile_rate1m{%(ioprobeSelector)s, quantile="0.99"} > 0.05
and on (job, instance, target, ioprobe_job) ioprobe_canary_paused{%(ioprobeSelector)s} == 0
`,
			summary:     "A canary's p99 latency is high.",
			description: "Canary {{ $labels.ioprobe_job }} p99 latency {{ $value | humanizeDuration }} on {{ $labels.instance }} target {{ $labels.target }}",
		},
		{
			comment: `The write canary (a continuous job that flushes: profile
canary-write) while it runs: its p99 flush latency over one minute
stayed above flushLatencyThresholdSeconds (etcd's WAL guidance:
10 ms) for 10 minutes.`,
			alert: "IoprobeFlushLatencyHigh", forDur: "10m", labels: warning,
			expr: `target:ioprobe_io_flush_latency_seconds:quantile_rate1m{%(ioprobeSelector)s, quantile="0.99"} > %(flushLatencyThresholdSeconds)s
and on (job, instance, target, ioprobe_job) ioprobe_canary_paused{%(ioprobeSelector)s} == 0
`,
			summary:     "A write canary's p99 flush latency is high.",
			description: "Write canary {{ $labels.ioprobe_job }} p99 flush latency {{ $value | humanizeDuration }} on {{ $labels.instance }} target {{ $labels.target }}",
		},
		{
			comment: `A canary's latency SLO: canarySLOObjective of its I/Os complete
within canarySLOLatencySeconds of their intended start. Burning the
error budget 14.4 times too fast over 1h and 5m (2% of a 30-day
budget in an hour), or 6 times over 6h and 30m (5% in 6 hours): the
multiwindow burn-rate alerts of Google's SRE workbook.`,
			alert: "IoprobeCanaryLatencySlo", forDur: "2m", labels: critical,
			expr: `(
    target:ioprobe_io_intended_latency_seconds:slo_miss_ratio_rate1h{%(ioprobeSelector)s} > 14.4 * (1 - %(canarySLOObjective)s)
  and
    target:ioprobe_io_intended_latency_seconds:slo_miss_ratio_rate5m{%(ioprobeSelector)s} > 14.4 * (1 - %(canarySLOObjective)s)
  or
    target:ioprobe_io_intended_latency_seconds:slo_miss_ratio_rate6h{%(ioprobeSelector)s} > 6 * (1 - %(canarySLOObjective)s)
  and
    target:ioprobe_io_intended_latency_seconds:slo_miss_ratio_rate30m{%(ioprobeSelector)s} > 6 * (1 - %(canarySLOObjective)s)
)
and on (job, instance, target, ioprobe_job) ioprobe_canary_paused{%(ioprobeSelector)s} == 0
`,
			summary:     "A canary burns its latency SLO's error budget.",
			description: "{{ $value | humanizePercentage }} of the I/Os of canary {{ $labels.ioprobe_job }} on {{ $labels.instance }} target {{ $labels.target }} completed later than the SLO allows after their intended start",
		},
		{
			comment: `A device serve watches (config devices) served its reads and
writes with a p99 above deviceLatencyThresholdSeconds for 10 minutes:
the device itself, whoever's I/O it was (measured in the kernel).`,
			alert: "IoprobeDeviceLatencyHigh", forDur: "10m", labels: warning,
			expr:        `device:ioprobe_device_latency_seconds:quantile_rate1m{%(ioprobeSelector)s, quantile="0.99"} > %(deviceLatencyThresholdSeconds)s` + "\n",
			summary:     "A watched device's p99 service time is high.",
			description: "Device {{ $labels.device }} on {{ $labels.instance }} serves reads and writes with a p99 of {{ $value | humanizeDuration }}",
		},
		{
			comment: `A continuous job did no I/O for 10 minutes without being paused
for a heavier run.`,
			alert: "IoprobeCanaryStalled", forDur: "10m", labels: warning,
			expr: `sum without (op) (rate(ioprobe_io_operations_total{%(ioprobeSelector)s}[10m])) == 0
and on (job, instance, target, ioprobe_job) ioprobe_canary_paused{%(ioprobeSelector)s} == 0
`,
			summary:     "A canary does no I/O.",
			description: "The canary {{ $labels.ioprobe_job }} on {{ $labels.instance }} target {{ $labels.target }} has stalled",
		},
		{
			alert: "IoprobeRunFailed", labels: warning,
			expr:        `ioprobe_run_success{%(ioprobeSelector)s} == 0`,
			summary:     "The last run of a job failed.",
			description: "The last run of {{ $labels.ioprobe_job }} ({{ $labels.workload }}) on {{ $labels.instance }} failed",
		},
		{
			comment: "Whole runs that ended with I/O errors or could not start.",
			alert:   "IoprobeJobFailed", labels: warning,
			expr:        `increase(ioprobe_job_runs_total{%(ioprobeSelector)s, status=~"errors|failed"}[30m]) > 0`,
			summary:     "Runs of a job ended with errors or could not start.",
			description: "Job {{ $labels.ioprobe_job }} on {{ $labels.instance }}: runs ended with status {{ $labels.status }} in the last 30 minutes",
		},
		{
			comment: `A scheduled start did not run: its device stayed busy until the
next start (reason device_busy) or the previous run was still
going (still_running).`,
			alert: "IoprobeJobSkipped", labels: warning,
			expr:        `increase(ioprobe_job_skipped_total{%(ioprobeSelector)s}[1h]) > 0`,
			summary:     "A job skipped a scheduled start.",
			description: "Job {{ $labels.ioprobe_job }} on {{ $labels.instance }} skipped a scheduled start ({{ $labels.reason }})",
		},
		{
			comment: `The next scheduled start is 30 minutes past and the job is not
running: the scheduler is stuck or the device never freed up.`,
			alert: "IoprobeJobOverdue", forDur: "5m", labels: warning,
			expr: `time() - ioprobe_job_next_run_timestamp_seconds{%(ioprobeSelector)s} > 1800
unless on (job, instance, ioprobe_job) (max without (target) (ioprobe_run_active{%(ioprobeSelector)s}) == 1)
`,
			summary:     "A job is past its scheduled start and not running.",
			description: "Job {{ $labels.ioprobe_job }} on {{ $labels.instance }} is {{ $value | humanizeDuration }} past its scheduled start and not running",
		},
		{
			comment: `A point's last run delivered under 70% of its own 7-day median,
once the point has a day of history.`,
			alert: "IoprobeThroughputDropped", forDur: "5m", labels: warning,
			expr: `shape:ioprobe_run_operations_per_second:ratio_to_median_7d < 0.7
and ioprobe_run_operations_per_second{%(ioprobeSelector)s} offset 1d
`,
			summary:     "A point ran well under its own 7-day median IOPS.",
			description: "{{ $labels.ioprobe_job }} ({{ $labels.workload }}, {{ $labels.block_size_bytes }} B) on {{ $labels.instance }} target {{ $labels.target }} ran at {{ $value | humanizePercentage }} of its 7-day median IOPS",
		},
		{
			alert: "IoprobeConfigReloadFailed", forDur: "5m", labels: warning,
			expr:        `ioprobe_config_last_reload_successful{%(ioprobeSelector)s} == 0`,
			summary:     "An ioprobe daemon runs an old configuration.",
			description: "ioprobe on {{ $labels.instance }} runs an old configuration: the last reload failed",
		},
		{
			comment: `/probe reports a failed probe as data (ioprobe_probe_success 0: I/O
errors, or a scrape timeout too short to measure in); a busy one (a job
holds the device, or too many probes at once) is answered 503 and leaves a
gap. Every probe that answered in the last 10 minutes failed, for 5.`,
			alert: "IoprobeProbeFailed", forDur: "5m", labels: warning,
			expr:        `max_over_time(ioprobe_probe_success{%(probeSelector)s}[10m]) == 0`,
			summary:     "Probes of a target fail.",
			description: "Every probe of target {{ $labels.target }} on {{ $labels.instance }} in the last 10 minutes failed",
		},
		{
			comment: `No /probe scrape of a host succeeded for an hour while its /metrics
answers (IoprobeDown covers a dead exporter): the scrape config names a
module or target the daemon does not have (400), or the device is never
free (503).`,
			alert: "IoprobeProbeUnanswered", forDur: "1h", labels: warning,
			expr: `(up{%(probeSelector)s} == 0)
unless on (instance)
(up{%(ioprobeSelector)s} == 0)
`,
			summary:     "Probes of a host get no answer.",
			description: "No /probe scrape of {{ $labels.instance }} (job {{ $labels.job }}) has succeeded for an hour",
		},
	}},
}
