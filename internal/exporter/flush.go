package exporter

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ioprobe/ioprobe/internal/runner"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Flushes (fsync or fdatasync, --fsync/--fdatasync, a job's fsync or
// fdatasync, the canary-write profile) are measured operations of their
// own: what a database's log waits for, and what a read canary never sees.
// They are live series like the reads and writes, without the op label
// (a flush is neither), counted only when a run flushes.

// flushKey names the flush series of one job on one target.
type flushKey struct{ target, job string }

// flushSeriesOf returns the flush series for k, creating it (callers hold
// the store's mu). A flush series is a liveSeries whose bytes and errors
// stay zero: a failed flush counts as a write error.
func (s *liveStore) flushSeriesOf(k flushKey) *liveSeries { return seriesIn(s.flush, k) }

// seriesIn returns m's series for k, creating it.
func seriesIn[K comparable](m map[K]*liveSeries, k K) *liveSeries {
	ls := m[k]
	if ls == nil {
		ls = &liveSeries{}
		m[k] = ls
	}
	return ls
}

// specsFlush says whether any of specs flushes.
func specsFlush(specs []workload.Spec) bool {
	for i := range specs {
		if n, _ := specs[i].FlushEvery(); n > 0 {
			return true
		}
	}
	return false
}

// flushing makes o count the run's flushes, creating their series at once
// (zero-valued, as the read and write series are) so that the first flush
// is visible to rate().
func (o *liveObserver) flushing() *liveObserver {
	o.flushes = true
	o.prevFlush = map[string]*opState{}
	o.store.mu.Lock()
	defer o.store.mu.Unlock()
	for _, name := range o.names {
		o.store.flushSeriesOf(flushKey{name, o.job})
	}
	return o
}

// observeFlushes adds a target's flushes since the last snapshot (callers
// hold the store's mu).
func (o *liveObserver) observeFlushes(name string, ts *runner.TargetSnapshot) {
	if !o.flushes {
		return
	}
	prev := o.prevFlush[ts.Path]
	if prev == nil {
		prev = &opState{}
		o.prevFlush[ts.Path] = prev
	}
	o.add(o.store.flushSeriesOf(flushKey{name, o.job}), &ts.Sync, prev)
}

// flushDescs are the flush series' descriptors.
type flushDescs struct{ ops, lat *prometheus.Desc }

func newFlushDescs() flushDescs {
	l := []string{"target", jobLabel}
	return flushDescs{
		ops: prometheus.NewDesc("ioprobe_io_flush_operations_total",
			"Flushes (fsync or fdatasync) completed in measured windows, since the daemon started; a failed flush counts in ioprobe_io_errors_total{op=\"write\"}.", l, nil),
		lat: prometheus.NewDesc("ioprobe_io_flush_latency_seconds",
			"Latency of flushes (fsync or fdatasync), since the daemon started (native and classic buckets).", l, nil),
	}
}

// update sends the flush series of store (callers hold its mu).
func (d flushDescs) update(store *liveStore, ch chan<- prometheus.Metric) {
	keys := make([]flushKey, 0, len(store.flush))
	for k := range store.flush {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].target != keys[j].target {
			return keys[i].target < keys[j].target
		}
		return keys[i].job < keys[j].job
	})
	for _, k := range keys {
		s := store.flush[k]
		ch <- prometheus.MustNewConstMetric(d.ops, prometheus.CounterValue, float64(s.ops), k.target, k.job)
		ch <- newHistogramMetric(d.lat, &s.latency, k.target, k.job)
	}
}
