package exporter

import (
	"log/slog"
	"runtime"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/ioprobe/ioprobe/internal/version"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// metrics are the daemon's own series besides the collectors' (scheduler
// state, reloads, probes), kept in plain vectors.
type metrics struct {
	runActive      *prometheus.GaugeVec
	canaryPaused   *prometheus.GaugeVec
	jobSkipped     *prometheus.CounterVec
	nextRun        *prometheus.GaugeVec
	jobs           *jobCollector // runs by outcome, consecutive failures and next attempt, read together
	reloadOK       prometheus.Gauge
	reloadTime     prometheus.Gauge
	probesRejected *prometheus.CounterVec
}

// Reasons for ioprobe_job_skipped_total.
const (
	skipDeviceBusy   = "device_busy"   // its device stayed busy until the next start was due
	skipStillRunning = "still_running" // the job's previous run was still going when this start was due
)

// quantileLabel is the quantile label's value of a result's percentile
// key: "99.9" is "0.999". Prometheus' convention (histogram_quantile,
// summaries, the rules' quantile label) is a quantile from 0 to 1; the
// decimal point is moved in the text, so that no float rounding shows.
func quantileLabel(percentile string) string {
	whole, frac, _ := strings.Cut(percentile, ".")
	for len(whole) < 2 {
		whole = "0" + whole
	}
	q := strings.TrimRight("0."+whole+frac, "0")
	if strings.HasSuffix(q, ".") {
		return q + "0"
	}
	return q
}

// latencyTotal adds up a latency summary over runs: the count and the sum
// of a Prometheus summary, which are counters.
type latencyTotal struct {
	count uint64
	sum   float64
}

// add adds the latency summary k of s (nothing when s has none).
func (t *latencyTotal) add(k result.LatencyKind, s *result.Summary) {
	if !k.In(s) {
		return
	}
	n := result.Value(k.Count(), s)
	t.count += uint64(n)
	t.sum += result.Value(k.Figure(result.StatMean), s) * n
}

// latencySummary is a run's latency summary k as a summary: its quantiles
// (the quantile label, 0 to 1, is Prometheus' convention and promlint
// allows it on summaries only), and the count and the sum of the
// latencies of every run total adds up (counters: they never go down
// while the series lives); nil when the run has no such summary (it
// flushed nothing, it was not rate-limited).
func latencySummary(d *prometheus.Desc, k result.LatencyKind, s *result.Summary, total *latencyTotal, labels ...string) prometheus.Metric {
	if !k.In(s) || total == nil {
		return nil
	}
	stats := result.PercentileStats()
	q := make(map[float64]float64, len(stats))
	for _, st := range stats {
		p, _ := st.Percentile()
		f, err := strconv.ParseFloat(quantileLabel(p), 64)
		if err != nil {
			panic(err) // percentile keys are numbers
		}
		q[f] = result.Value(k.Figure(st), s)
	}
	return prometheus.MustNewConstSummary(d, total.count, total.sum, q, labels...)
}

// logFigures are the figures of result.ViewLog as the arguments of a log
// line: "iops", 12345.67, "latency_p99_ms", 0.44, …, in their shown units.
func logFigures(s *result.Summary) []any {
	var args []any
	for _, id := range result.ViewLog {
		f := id.Figure()
		key := f.Column
		if f.Unit.Scale() != 1 {
			key = strings.TrimSuffix(key, "_seconds") + "_" + f.Unit.Symbol()
		}
		args = append(args, key, round(f.Shown(s)))
	}
	return args
}

// constMetrics collects metrics made once, such as a probe's.
type constMetrics []prometheus.Metric

func (c constMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c {
		ch <- m.Desc()
	}
}

func (c constMetrics) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c {
		ch <- m
	}
}

// newRegistry builds the daemon's registry: never the global one.
func newRegistry(live *liveStore, runs *runStore, devs *deviceWatch, info *deviceInfo, procRoot string, logger *slog.Logger) (*prometheus.Registry, *metrics) {
	reg := prometheus.NewRegistry()
	m := &metrics{
		runActive: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ioprobe_run_active",
			Help: "1 while a run of the job is on the target (a canary's included), else 0."}, []string{"target", jobLabel}),
		canaryPaused: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ioprobe_canary_paused",
			Help: "1 while a continuous job waits because a heavier run holds its device."}, []string{"target", jobLabel}),
		jobSkipped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ioprobe_job_skipped_total",
			Help: "Scheduled starts that did not run, by reason (device_busy: another run held the device until the next start; still_running: the job's previous run had not finished)."}, []string{jobLabel, "reason"}),
		nextRun: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ioprobe_job_next_run_timestamp_seconds",
			Help: "Unix time of a scheduled job's next start."}, []string{jobLabel}),
		jobs: newJobCollector(),
		reloadOK: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ioprobe_config_last_reload_successful",
			Help: "1 if the last configuration (re)load succeeded."}),
		reloadTime: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ioprobe_config_last_reload_success_timestamp_seconds",
			Help: "Unix time of the last successful configuration (re)load."}),
		probesRejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ioprobe_probe_rejected_total",
			Help: "/probe requests answered 503 without probing (concurrency: too many at once; device_busy: a job holds the target's device)."}, []string{"reason"}),
	}
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ioprobe_build_info",
		Help: "A metric with a constant '1' value labelled by version, revision, goversion, goos and goarch from which ioprobe was built."},
		[]string{"version", "revision", "goversion", "goos", "goarch"})
	build.WithLabelValues(version.Version, version.Revision(), version.GoVersion(), runtime.GOOS, runtime.GOARCH).Set(1)
	for _, r := range []string{"concurrency", "device_busy"} {
		m.probesRejected.WithLabelValues(r)
	}
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		build,
		m.runActive, m.canaryPaused, m.jobSkipped, m.nextRun, m.jobs,
		m.reloadOK, m.reloadTime, m.probesRejected,
		&scrapeCollector{logger: logger, collectors: map[string]subCollector{
			"io":          newLiveCollector(live),
			"runs":        newRunCollector(runs),
			"host_cpu":    newHostCPUCollector(procRoot),
			"devices":     devs,
			"device_info": info,
		}},
	)
	return reg, m
}
