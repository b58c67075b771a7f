package exporter

import (
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/runner"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// The live series are cumulative over the daemon's life: every run of a
// job adds what it did to them, so they never reset while the daemon runs
// and rate() over them is the storage's behaviour now.

type liveKey struct{ target, job, op string }

type liveSeries struct {
	ops, bytes uint64
	errors     [engine.NumErrClasses]uint64
	latency    result.Histogram // ns, every op since the daemon started
	// intended is the latency from the intended start (ns) of every op
	// of the rate-limited runs; nil until such a run creates it.
	intended *result.Histogram
}

// liveStore holds the live series. Runs add to it from their snapshot
// observers; scrapes read it.
type liveStore struct {
	mu     sync.Mutex
	series map[liveKey]*liveSeries
	flush  map[flushKey]*liveSeries // flush.go
}

func newLiveStore() *liveStore {
	return &liveStore{series: map[liveKey]*liveSeries{}, flush: map[flushKey]*liveSeries{}}
}

// forget drops the live and flush series of the (target, job) pairs keep
// says no to.
func (s *liveStore) forget(keep func(target, job string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.series {
		if !keep(k.target, k.job) {
			delete(s.series, k)
		}
	}
	for k := range s.flush {
		if !keep(k.target, k.job) {
			delete(s.flush, k)
		}
	}
}

// get returns the series for k, creating it (callers hold mu).
func (s *liveStore) get(k liveKey) *liveSeries { return seriesIn(s.series, k) }

// opState is what an observer last saw of one op of one target.
type opState struct {
	ops, bytes uint64
	errors     [engine.NumErrClasses]uint64
	latency    result.Histogram
	intended   result.Histogram
}

// liveObserver turns one run's cumulative snapshots into increments of
// the live series. It lives as long as the run.
type liveObserver struct {
	store  *liveStore
	job    string
	names  map[string]string // target path → target name
	prev   map[string]*[2]opState
	hasOp  [2]bool // read, write: the series a run creates up front
	opName [2]string
	paced  bool // the run is rate-limited: it feeds the intended series
	// flushes: the run flushes (see flushing); prevFlush is per target path.
	flushes   bool
	prevFlush map[string]*opState
}

// observer returns a runner.Observer for one run of job. It creates the
// run's series at once (zero-valued), so that the first increase is
// visible to rate() and error series exist before the first error.
// observerFor is the live observer of a run of specs: its read and
// write series (from each spec's mix, lines included), its intended-start
// series when paced and its flush series when it flushes, all created up
// front. Jobs and API runs both build theirs here.
func (s *liveStore) observerFor(job string, names map[string]string, specs []workload.Spec) *liveObserver {
	var reads, writes bool
	for _, sp := range specs {
		_, readPct, _ := sp.Mix()
		reads = reads || readPct > 0
		writes = writes || sp.WritesData()
	}
	o := s.observer(job, names, reads, writes).pacedBy(specs)
	if specsFlush(specs) {
		o.flushing()
	}
	return o
}

func (s *liveStore) observer(job string, names map[string]string, reads, writes bool) *liveObserver {
	o := &liveObserver{store: s, job: job, names: names, prev: map[string]*[2]opState{},
		hasOp: [2]bool{reads, writes}, opName: [2]string{"read", "write"}}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range names {
		for i, on := range o.hasOp {
			if on {
				s.get(liveKey{name, job, o.opName[i]})
			}
		}
	}
	return o
}

// pacedBy marks the run as rate-limited when one of specs is: its ops
// then feed ioprobe_io_intended_latency_seconds, whose series it creates up
// front as observer does the others. It returns o.
func (o *liveObserver) pacedBy(specs []workload.Spec) *liveObserver {
	for _, s := range specs {
		o.paced = o.paced || s.RateIOPS > 0 || s.RatedByDirection()
	}
	if !o.paced {
		return o
	}
	o.store.mu.Lock()
	defer o.store.mu.Unlock()
	for _, name := range o.names {
		for i, on := range o.hasOp {
			if !on {
				continue
			}
			if ls := o.store.get(liveKey{name, o.job, o.opName[i]}); ls.intended == nil {
				ls.intended = result.NewHistogram()
			}
		}
	}
	return o
}

// Observe implements runner.Observer.
func (o *liveObserver) Observe(snap *runner.Snapshot) {
	o.store.mu.Lock()
	defer o.store.mu.Unlock()
	for i := range snap.Targets {
		ts := &snap.Targets[i]
		name, ok := o.names[ts.Path]
		if !ok {
			continue
		}
		prev := o.prev[ts.Path]
		if prev == nil {
			prev = &[2]opState{}
			o.prev[ts.Path] = prev
		}
		for op, cur := range [2]*runner.OpCounters{&ts.Read, &ts.Write} {
			if cur.Ops == 0 && cur.ErrorTotal() == 0 && !o.hasOp[op] {
				continue
			}
			o.add(o.store.get(liveKey{name, o.job, o.opName[op]}), cur, &prev[op])
		}
		o.observeFlushes(name, ts)
	}
}

// add adds cur − p to ls and remembers cur. Cumulative snapshots of one
// run never go backwards; if one did, nothing would be added, so the live
// counters stay monotonic whatever happens.
func (o *liveObserver) add(ls *liveSeries, cur *runner.OpCounters, p *opState) {
	if cur.Ops >= p.ops && cur.Latency.Count() >= p.latency.Count() {
		ls.ops += cur.Ops - p.ops
		ls.latency.Merge(&cur.Latency)
		ls.latency.Sub(&p.latency)
		p.ops = cur.Ops
		p.latency = cur.Latency
	}
	if o.paced && cur.Intended.Count() >= p.intended.Count() {
		if ls.intended == nil {
			ls.intended = result.NewHistogram()
		}
		ls.intended.Merge(&cur.Intended)
		ls.intended.Sub(&p.intended)
		p.intended = cur.Intended
	}
	if cur.Bytes >= p.bytes {
		ls.bytes += cur.Bytes - p.bytes
		p.bytes = cur.Bytes
	}
	for c := range cur.Errors {
		if cur.Errors[c] >= p.errors[c] {
			ls.errors[c] += cur.Errors[c] - p.errors[c]
			p.errors[c] = cur.Errors[c]
		}
	}
}

// jobLabel names the configured job a series belongs to. It is not "job":
// Prometheus sets that on every scraped series to the scrape job's name, and
// an exporter's own "job" would be renamed exported_job unless every scrape
// config honoured its labels (which many Prometheus Operator setups forbid).
const jobLabel = "ioprobe_job"

var liveLabels = []string{"target", jobLabel, "op"}

// liveCollector exports the live series.
type liveCollector struct {
	store                                   *liveStore
	ops, bytes, errs, lat, intended, verify *prometheus.Desc
	flush                                   flushDescs
}

func newLiveCollector(store *liveStore) *liveCollector {
	return &liveCollector{
		store: store,
		ops: prometheus.NewDesc("ioprobe_io_operations_total",
			"I/O operations completed (measured windows only: ramp-up is not counted), since the daemon started.", liveLabels, nil),
		bytes: prometheus.NewDesc("ioprobe_io_bytes_total",
			"Bytes transferred by completed I/O operations, since the daemon started.", liveLabels, nil),
		errs: prometheus.NewDesc("ioprobe_io_errors_total",
			"Failed I/O operations by error class (ramp-up included), since the daemon started.", append(liveLabels, "error"), nil),
		lat: prometheus.NewDesc("ioprobe_io_latency_seconds",
			"Completion latency of I/O operations, since the daemon started (native and classic buckets).", liveLabels, nil),
		intended: prometheus.NewDesc("ioprobe_io_intended_latency_seconds",
			"Latency of I/O operations from their intended start (the rate limit's slot for each) to completion, since the daemon started: rate-limited jobs only, a stall counts every I/O that came due during it (native and classic buckets).", liveLabels, nil),
		verify: prometheus.NewDesc("ioprobe_io_verify_failures_total",
			"Reads whose data failed verification (verify: true: a sector overwritten, corrupted, torn or misdirected), since the daemon started.", []string{"target", jobLabel}, nil),
		flush: newFlushDescs(),
	}
}

func (c *liveCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.ops, c.bytes, c.errs, c.lat, c.intended, c.verify, c.flush.ops, c.flush.lat} {
		ch <- d
	}
}

func (c *liveCollector) Update(ch chan<- prometheus.Metric) error {
	c.store.mu.Lock()
	defer c.store.mu.Unlock()
	keys := make([]liveKey, 0, len(c.store.series))
	for k := range c.store.series {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.target != b.target {
			return a.target < b.target
		}
		if a.job != b.job {
			return a.job < b.job
		}
		return a.op < b.op
	})
	for _, k := range keys {
		s := c.store.series[k]
		ch <- prometheus.MustNewConstMetric(c.ops, prometheus.CounterValue, float64(s.ops), k.target, k.job, k.op)
		ch <- prometheus.MustNewConstMetric(c.bytes, prometheus.CounterValue, float64(s.bytes), k.target, k.job, k.op)
		for cls, n := range s.errors {
			ch <- prometheus.MustNewConstMetric(c.errs, prometheus.CounterValue, float64(n), k.target, k.job, k.op, engine.ErrClassNames[cls])
		}
		ch <- newHistogramMetric(c.lat, &s.latency, k.target, k.job, k.op)
		if s.intended != nil {
			ch <- newHistogramMetric(c.intended, s.intended, k.target, k.job, k.op)
		}
		if k.op == "read" {
			// The same count as ioprobe_io_errors_total{error="verify"},
			// under the name an alert on data integrity looks for.
			ch <- prometheus.MustNewConstMetric(c.verify, prometheus.CounterValue, float64(s.errors[engine.ErrVerify]), k.target, k.job)
		}
	}
	c.flush.update(c.store, ch)
	return nil
}
