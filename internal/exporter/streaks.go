package exporter

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// jobCollector exposes each job's runs by outcome and its streak of runs
// that could not start: ioprobe_job_runs_total,
// ioprobe_job_consecutive_failures and
// ioprobe_job_next_attempt_timestamp_seconds. A scrape reads all three
// under one lock, the lock every change of them together takes, so that it
// shows one instant of the job: a run that could not start is counted as
// failed, lengthens the streak and plans its retry in one step, and a run
// that starts ends the streak and the retry in one step. Alerts and
// dashboards read them together (docs/metrics.md); set one after the other
// and gathered at different instants, a scrape showed a failing job with
// no retry planned, a streak longer than the failed runs counted, or a
// recovered job still in back-off.
type jobCollector struct {
	mu      sync.Mutex
	runs    map[runKey]*runCount
	streaks map[string]*failures

	runsDesc, failures, next *prometheus.Desc
}

// runKey is a series of ioprobe_job_runs_total: a job and a status.
type runKey struct{ job, status string }

type runCount struct {
	n       float64
	created time.Time // when the series appeared (a counter's created timestamp)
}

func newJobCollector() *jobCollector {
	return &jobCollector{
		runs:    map[runKey]*runCount{},
		streaks: map[string]*failures{},
		runsDesc: prometheus.NewDesc("ioprobe_job_runs_total",
			"Runs of each job by outcome (ok, errors, interrupted, failed: could not start).", []string{jobLabel, "status"}, nil),
		failures: prometheus.NewDesc("ioprobe_job_consecutive_failures",
			"Runs of the job in a row that could not start (0 once one starts).", []string{jobLabel}, nil),
		next: prometheus.NewDesc("ioprobe_job_next_attempt_timestamp_seconds",
			"Unix time a job whose last run could not start tries again (0 when its last run started, or it is not retried).", []string{jobLabel}, nil),
	}
}

// counters makes job's run counters exist, at 0, so that rate() and
// alerts see their first increase; counters that exist keep their counts.
func (c *jobCollector) counters(job string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range result.Statuses() {
		c.series(job, st)
	}
}

// series is job's counter of st, made if it does not exist (c.mu held).
func (c *jobCollector) series(job string, st result.Status) *runCount {
	k := runKey{job, string(st)}
	rc := c.runs[k]
	if rc == nil {
		rc = &runCount{created: time.Now()}
		c.runs[k] = rc
	}
	return rc
}

// count counts one run of job that ended with st.
func (c *jobCollector) count(job string, st result.Status) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.series(job, st).n++
}

// forget drops the run counters of a job a reload removed.
func (c *jobCollector) forget(job string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.runs {
		if k.job == job {
			delete(c.runs, k)
		}
	}
}

// add shows job's streak from f (a configured job; its series exist from
// the start, at 0).
func (c *jobCollector) add(job string, f *failures) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.streaks[job] = f
}

// remove drops a removed or changed job's streak series.
func (c *jobCollector) remove(job string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.streaks, job)
}

// get is job's streak as a scrape sees it (ok false: no such series).
func (c *jobCollector) get(job string) (failureInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.streaks[job]
	if !ok {
		return failureInfo{}, false
	}
	return f.get(), true
}

// failed is a run of job that could not start, in one step: its points
// that could not start (held by f) counted as failed, one more in f's
// streak, and its next attempt (zero: it is not retried). It returns the
// streak.
func (c *jobCollector) failed(job string, f *failures, err error, next time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.series(job, result.StatusFailed).n += float64(f.takeHeld())
	return f.fail(err, next)
}

// started is a run of job that started, in one step: the points before it
// that could not start (held by f) counted as failed, f's streak and next
// attempt ended. It returns how long the streak was.
func (c *jobCollector) started(job string, f *failures) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.series(job, result.StatusFailed).n += float64(f.takeHeld())
	return f.reset()
}

// settle counts the points f holds of a run the daemon stopped: they
// could not start, but the run says nothing of the target (no streak).
func (c *jobCollector) settle(job string, f *failures) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := f.takeHeld(); n > 0 {
		c.series(job, result.StatusFailed).n += float64(n)
	}
}

// Describe implements prometheus.Collector.
func (c *jobCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.runsDesc
	ch <- c.failures
	ch <- c.next
}

// Collect implements prometheus.Collector.
func (c *jobCollector) Collect(ch chan<- prometheus.Metric) {
	var ms []prometheus.Metric
	c.mu.Lock()
	for k, rc := range c.runs {
		ms = append(ms, prometheus.MustNewConstMetricWithCreatedTimestamp(c.runsDesc, prometheus.CounterValue, rc.n, rc.created, k.job, k.status))
	}
	for job, f := range c.streaks {
		i := f.get()
		next := 0.0
		if !i.next.IsZero() {
			next = unixSeconds(i.next)
		}
		ms = append(ms, prometheus.MustNewConstMetric(c.failures, prometheus.GaugeValue, float64(i.streak), job),
			prometheus.MustNewConstMetric(c.next, prometheus.GaugeValue, next, job))
	}
	c.mu.Unlock()
	for _, m := range ms {
		ch <- m
	}
}
