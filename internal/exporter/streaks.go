package exporter

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// streakCollector exposes each job's streak of runs that could not start:
// ioprobe_job_consecutive_failures and
// ioprobe_job_next_attempt_timestamp_seconds. Both come from one read of
// the job's failures, under the lock its changes take, so that a scrape
// shows one state of the job: never a job whose run started (streak 0)
// still waiting to try again, as two gauges set one after the other and
// gathered at different instants could (a dashboard or an alert on the
// next attempt saw a recovered job in back-off).
type streakCollector struct {
	mu   sync.Mutex
	jobs map[string]*failures

	failures, next *prometheus.Desc
}

func newStreakCollector() *streakCollector {
	return &streakCollector{
		jobs: map[string]*failures{},
		failures: prometheus.NewDesc("ioprobe_job_consecutive_failures",
			"Runs of the job in a row that could not start (0 once one starts).", []string{jobLabel}, nil),
		next: prometheus.NewDesc("ioprobe_job_next_attempt_timestamp_seconds",
			"Unix time a job whose last run could not start tries again (0 when its last run started, or it is not retried).", []string{jobLabel}, nil),
	}
}

// add shows job's streak from f (a configured job; its series exist from
// the start, at 0).
func (c *streakCollector) add(job string, f *failures) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.jobs[job] = f
}

// remove drops a removed or changed job's series.
func (c *streakCollector) remove(job string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.jobs, job)
}

// get is job's streak as a scrape sees it (ok false: no such series).
func (c *streakCollector) get(job string) (failureInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.jobs[job]
	if !ok {
		return failureInfo{}, false
	}
	return f.get(), true
}

// Describe implements prometheus.Collector.
func (c *streakCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.failures
	ch <- c.next
}

// Collect implements prometheus.Collector.
func (c *streakCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	infos := make(map[string]failureInfo, len(c.jobs))
	for job, f := range c.jobs {
		infos[job] = f.get()
	}
	c.mu.Unlock()
	for job, i := range infos {
		next := 0.0
		if !i.next.IsZero() {
			next = unixSeconds(i.next)
		}
		ch <- prometheus.MustNewConstMetric(c.failures, prometheus.GaugeValue, float64(i.streak), job)
		ch <- prometheus.MustNewConstMetric(c.next, prometheus.GaugeValue, next, job)
	}
}
