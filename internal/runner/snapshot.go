package runner

import (
	"time"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// OpCounters are the cumulative figures of one op on one target since the
// start of measurement (errors: since the start of the run, ramp-up
// included, because an error is never noise).
type OpCounters struct {
	Ops     uint64
	Bytes   uint64
	Errors  [engine.NumErrClasses]uint64
	Latency result.Histogram
	// Intended is the latency from the I/Os' intended start (paced runs
	// only; empty otherwise).
	Intended result.Histogram
	// Verified and Unverified count reads --verify checked and could not
	// check (Errors[engine.ErrVerify] counts the ones that failed).
	Verified, Unverified uint64
}

func (o *OpCounters) reset() {
	o.Ops, o.Bytes, o.Verified, o.Unverified = 0, 0, 0, 0
	o.Errors = [engine.NumErrClasses]uint64{}
	o.Latency.Reset()
	o.Intended.Reset()
}

// ErrorTotal sums the error classes.
func (o *OpCounters) ErrorTotal() uint64 {
	var n uint64
	for _, e := range o.Errors {
		n += e
	}
	return n
}

// TargetSnapshot is the cumulative state of one target.
type TargetSnapshot struct {
	Path  string
	Index int
	Read  OpCounters
	Write OpCounters
	// Sync counts the flushes (--fsync, --fdatasync): Ops and Latency
	// (their errors count under Write).
	Sync OpCounters
}

// Snapshot is what observers see every interval.
type Snapshot struct {
	Workload string
	Phase    Phase
	Time     time.Time
	// Elapsed is the time since measurement started (0 during ramp-up).
	Elapsed  time.Duration
	Duration time.Duration // the planned run time
	Ramp     time.Duration
	Targets  []TargetSnapshot
	// Interval is the period that ended with this snapshot.
	Interval result.Interval
}

type snapshotter struct {
	workers []*engine.Worker
	// ended is when each worker ended on its own (crew.ended), by
	// position in workers; nil or zero: at the run's end.
	ended    []time.Time
	verifier *engine.Verifier // --verify (nil: off)
	phase    Phase
	t0       time.Time
	last     time.Time
	current  *Snapshot
	scratch  result.Histogram
	all      result.Histogram // every op of every target, cumulative
	delta    result.Histogram // all minus prevAll: the interval's own distribution
	prevAll  result.Histogram
	prevOps  uint64
	prevB    uint64
	prevE    uint64
}

func newSnapshotter(p *Plan, targets []*openTarget, ws []*engine.Worker) *snapshotter {
	s := &snapshotter{workers: ws, current: &Snapshot{Workload: p.runName(), Duration: p.duration(), Ramp: p.Groups[0].Spec.Ramp}}
	s.current.Targets = make([]TargetSnapshot, len(targets))
	for i, ot := range targets {
		s.current.Targets[i] = TargetSnapshot{Path: ot.t.Path, Index: ot.index}
	}
	s.last = time.Now()
	return s
}

// begin marks the start of measurement.
func (s *snapshotter) begin(t0 time.Time) {
	s.t0, s.last = t0, t0
}

// take reads every lane and returns the interval that ends now.
func (s *snapshotter) take(now time.Time) result.Interval {
	cur := s.current
	cur.Phase, cur.Time = s.phase, now
	if !s.t0.IsZero() {
		cur.Elapsed = now.Sub(s.t0)
	}
	for i := range cur.Targets {
		cur.Targets[i].Read.reset()
		cur.Targets[i].Write.reset()
		cur.Targets[i].Sync.reset()
	}
	byIndex := func(idx int) *TargetSnapshot {
		for i := range cur.Targets {
			if cur.Targets[i].Index == idx {
				return &cur.Targets[i]
			}
		}
		return nil
	}
	for _, w := range s.workers {
		for _, l := range w.Lanes() {
			ts := byIndex(w.Targets[l.Target].Index)
			if ts == nil {
				continue
			}
			add := func(dst *OpCounters, src *engine.OpStats) {
				src.Latency.SnapshotInto(&s.scratch)
				dst.Latency.Merge(&s.scratch)
				if src.Intended != nil {
					src.Intended.SnapshotInto(&s.scratch)
					dst.Intended.Merge(&s.scratch)
				}
				dst.Bytes += src.Bytes()
				dst.Verified += src.Verified()
				dst.Unverified += src.Unverified()
				for c := range dst.Errors {
					dst.Errors[c] += src.ErrorCount(c)
				}
			}
			add(&ts.Read, &l.Read)
			add(&ts.Write, &l.Write)
			add(&ts.Sync, &l.Sync)
		}
	}
	s.all.Reset()
	var ops, bytes, errs uint64
	for i := range cur.Targets {
		t := &cur.Targets[i]
		t.Read.Ops, t.Write.Ops = t.Read.Latency.Count(), t.Write.Latency.Count()
		t.Sync.Ops = t.Sync.Latency.Count()
		s.all.Merge(&t.Read.Latency)
		s.all.Merge(&t.Write.Latency)
		ops += t.Read.Ops + t.Write.Ops
		bytes += t.Read.Bytes + t.Write.Bytes
		errs += t.Read.ErrorTotal() + t.Write.ErrorTotal()
	}
	// The interval's own distribution: this snapshot minus the last one.
	s.delta = s.all
	s.delta.Sub(&s.prevAll)
	delta := &s.delta
	secs := now.Sub(s.last).Seconds()
	iv := result.Interval{TSeconds: cur.Elapsed.Seconds()}
	if secs > 0 {
		iv.IOPS = float64(ops-s.prevOps) / secs
		iv.BytesPerSecond = float64(bytes-s.prevB) / secs
	}
	iv.LatencyMeanSeconds = delta.Mean() / 1e9
	iv.LatencyP99Seconds = delta.Quantile(0.99) / 1e9
	iv.Errors = errs - s.prevE
	cur.Interval = iv
	s.prevAll = s.all
	s.prevOps, s.prevB, s.prevE, s.last = ops, bytes, errs, now
	return iv
}
