package exporter

import (
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// shape labels a last-run series: the job and target, and the access
// specification that ran, so that every point of a suite (and every
// configuration a job had) is its own series and dashboards can rebuild
// the reports' tables (rows: block size; columns: workload).
type shape struct {
	target, job, workload, blockSize, readPct, randomPct, queueDepth, workers string
}

var shapeLabels = []string{"target", jobLabel, "workload", "block_size_bytes", "read_pct", "random_pct", "queue_depth", "workers"}

func (s shape) values() []string {
	return []string{s.target, s.job, s.workload, s.blockSize, s.readPct, s.randomPct, s.queueDepth, s.workers}
}

// shapeOf labels a run of specs. A mixed run (several specs at once on
// their own workers) joins each label's values with "+", in spec order.
func shapeOf(target, job, name string, specs []workload.Spec) shape {
	var bs, rd, rn, qd, wk []string
	for _, s := range specs {
		var sizes []string
		mix, readPct, randomPct := s.Mix() // a multi-line spec, summarised
		for _, b := range mix {
			v := strconv.FormatInt(b.Bytes, 10)
			if len(mix) > 1 {
				v += ":" + strconv.Itoa(b.Weight)
			}
			sizes = append(sizes, v)
		}
		bs = append(bs, strings.Join(sizes, ","))
		rd = append(rd, strconv.Itoa(readPct))
		rn = append(rn, strconv.Itoa(randomPct))
		qd = append(qd, strconv.Itoa(s.QueueDepth))
		wk = append(wk, strconv.Itoa(s.Workers))
	}
	j := func(v []string) string { return strings.Join(v, "+") }
	return shape{target: target, job: job, workload: name, blockSize: j(bs), readPct: j(rd), randomPct: j(rn), queueDepth: j(qd), workers: j(wk)}
}

// lastRun is what the gauges show for one shape.
type lastRun struct {
	success   bool
	end       time.Time
	res       *result.Result // nil: the run did not start (success is false)
	runNumber uint64         // which run of the job wrote it (to drop a suite's stale points)
}

type runStore struct {
	mu   sync.Mutex
	runs map[shape]*lastRun
	// totals add up each shape's latency summaries over its completed
	// runs: a summary's _count and _sum are counters, which go up from run
	// to run however short the last run was (its quantiles are the last
	// run's).
	totals map[shape]map[result.LatencyKind]*latencyTotal
}

func newRunStore() *runStore {
	return &runStore{runs: map[shape]*lastRun{}, totals: map[shape]map[result.LatencyKind]*latencyTotal{}}
}

func (s *runStore) set(sh shape, lr *lastRun) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs[sh] = lr
	if lr.res == nil {
		return
	}
	if s.totals[sh] == nil {
		s.totals[sh] = map[result.LatencyKind]*latencyTotal{}
	}
	for _, k := range result.ViewLastRunSummaries {
		if s.totals[sh][k] == nil {
			s.totals[sh][k] = &latencyTotal{}
		}
		s.totals[sh][k].add(k, &lr.res.Summary)
	}
}

// retain drops the job's shapes that its run number n did not write: after
// a whole run of a job, only what that run measured is its last run.
func (s *runStore) retain(job string, n uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sh, lr := range s.runs {
		if sh.job == job && lr.runNumber != n {
			delete(s.runs, sh)
			delete(s.totals, sh)
		}
	}
}

// forget drops every shape of the jobs keep says no to (reload removed them).
func (s *runStore) forget(keep func(job string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sh := range s.runs {
		if !keep(sh.job) {
			delete(s.runs, sh)
			delete(s.totals, sh)
		}
	}
}

// runCollector exports the last-run gauges: the figures of
// result.ViewLastRunGauges and the latency summaries of
// result.ViewLastRunSummaries, with the run's outcome and time.
type runCollector struct {
	store     *runStore
	ok, ts    *prometheus.Desc
	window    *prometheus.Desc
	util      *prometheus.Desc
	gauges    []*prometheus.Desc // per result.ViewLastRunGauges
	summaries []*prometheus.Desc // per result.ViewLastRunSummaries
}

func newRunCollector(store *runStore) *runCollector {
	d := func(name, help string, extra ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, append(append([]string(nil), shapeLabels...), extra...), nil)
	}
	metric := func(m result.Metric) *prometheus.Desc { return d("ioprobe_run_"+m.Name, m.RunHelp) }
	c := &runCollector{
		store:  store,
		ok:     d("ioprobe_run_success", "1 if the last run completed without I/O errors, 0 if it failed, ended with errors or could not start."),
		ts:     d("ioprobe_run_timestamp_seconds", "Unix time at which the last run's measured window ended (or at which it failed to start)."),
		window: metric(result.ViewLastRunWindow.Figure().Metric),
		util:   d("ioprobe_run_host_cpu_utilization_ratio", "Host CPU busy during the last completed run as a share of all online CPUs (0..1)."),
	}
	for _, id := range result.ViewLastRunGauges {
		c.gauges = append(c.gauges, metric(id.Figure().Metric))
	}
	for _, k := range result.ViewLastRunSummaries {
		c.summaries = append(c.summaries, metric(k.Metric()))
	}
	return c
}

func (c *runCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range append([]*prometheus.Desc{c.ok, c.ts, c.window, c.util}, append(c.gauges, c.summaries...)...) {
		ch <- d
	}
}

func (c *runCollector) Update(ch chan<- prometheus.Metric) error {
	c.store.mu.Lock()
	defer c.store.mu.Unlock()
	shapes := make([]shape, 0, len(c.store.runs))
	for sh := range c.store.runs {
		shapes = append(shapes, sh)
	}
	sort.Slice(shapes, func(i, j int) bool {
		return strings.Join(shapes[i].values(), "\x00") < strings.Join(shapes[j].values(), "\x00")
	})
	for _, sh := range shapes {
		lr := c.store.runs[sh]
		lv := sh.values()
		g := func(d *prometheus.Desc, v float64, extra ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append(lv, extra...)...)
		}
		ok := 0.0
		if lr.success {
			ok = 1
		}
		g(c.ok, ok)
		g(c.ts, float64(lr.end.UnixNano())/1e9)
		if lr.res == nil {
			g(c.window, 0)
			continue
		}
		s := &lr.res.Summary
		g(c.window, result.Value(result.ViewLastRunWindow, s))
		for i, id := range result.ViewLastRunGauges {
			g(c.gauges[i], result.Value(id, s))
		}
		for i, k := range result.ViewLastRunSummaries {
			if m := latencySummary(c.summaries[i], k, s, c.store.totals[sh][k], lv...); m != nil {
				ch <- m
			}
		}
		// The busy cores as a share of the host's CPUs.
		if n := lr.res.Host.LogicalCPUs; n > 0 {
			g(c.util, result.Value(result.FigHostBusyCores, s)/float64(n))
		}
	}
	return nil
}
