package engine

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ioprobe/ioprobe/internal/iobuf"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Engine drives the I/O of one worker.
type Engine interface {
	// Name is the engine's name on the command line (sync, uring).
	Name() workload.EngineName
	// Available says whether the engine can run on this host; the error
	// says why not (kernel too old, io_uring disabled by sysctl or seccomp).
	Available() error
	// Run sets the worker up (its ring, its lanes), calls w.WaitStart,
	// then keeps w.QueueDepth I/Os in flight on each of w.Targets until
	// w.Ctl says stop, and returns once every I/O it issued has
	// completed. It records every completed I/O in the worker's lanes and
	// reports every failed I/O with w.Ctl.Fail.
	Run(w *Worker) error
}

// Target is an opened target as an engine sees it.
type Target struct {
	FD     int
	Region workload.Region
	Index  int    // position in the run's target list (for per-target stats)
	Path   string // for error messages
	// Key is the key every written sector is stamped under (see
	// internal/verify): a file ioprobe filled has its own
	// (target.Target.SectorKey), anything else 0.
	Key uint64
}

// Worker is everything one engine loop needs. The runner builds it; the
// engine reads it and writes only to the Lanes it gets from NewLane.
type Worker struct {
	ID         int
	Spec       *workload.Spec
	Targets    []Target
	QueueDepth int
	Start      <-chan struct{} // closed when every worker is ready; engines wait with WaitStart
	Ctl        *Control
	Buffers    *iobuf.Buffers // QueueDepth*len(Targets) page-aligned slots of Spec.MaxBlock()
	Seed       uint64
	// Cursors holds the shared sequential position on each target.
	Cursors []*workload.Cursor
	// RateIOPS is this worker's share of the rate limit, in I/Os per
	// second (0: unpaced). Set by NewWorkers; engines split it over their
	// lanes with LaneRate and pace each with NewPacer.
	RateIOPS float64
	// RateBPS is this worker's share of fio's rate per direction
	// (Spec.RateReadBPS, RateWriteBPS), bytes per second; LanePacer
	// splits it over the lanes.
	RateBPS [2]float64
	// Verify, when set, is --verify: engines prepare writes and reads and
	// report completions through PrepareWrite, PrepareRead and Complete.
	Verify *Verifier
	// Trace, when set (tests only), sees every completed I/O.
	Trace func(lane *Lane, op *IO, res int64)
	// Issue, when set (tests only), sees every I/O just before the engine
	// hands it to the kernel. With Trace it tells how many I/Os a lane
	// has in flight, so the conformance suite can check the queue depth.
	Issue func(lane *Lane, op *IO)
	// Commit, when set (tests only), is called by a ring engine just
	// before the io_uring_enter that hands the kernel every I/O Issue saw
	// since the last Commit: with Issue it tells which I/Os went to the
	// kernel in one call.
	Commit func()
	// TraceFlush, when set (tests only), sees every completed flush
	// (--fsync, --fdatasync) with its result.
	TraceFlush func(lane *Lane, res int64)
	// Depth is fio's queue figures of the worker (iodepth_level,
	// iodepth_submit, iodepth_complete); the engine records them.
	Depth DepthStats

	mu    sync.Mutex
	lanes []*Lane

	flush  flushState
	budget budget
	// deadline, when not 0, is the Nanotime at which the worker stops
	// issuing (SetDeadline).
	deadline atomic.Int64
	// content is the worker's stream of fio's buffer contents (nil:
	// ioprobe's own); refill says every write is filled anew, fillOnce
	// that the slots are filled at the start instead.
	content          *iobuf.Stream
	refill, fillOnce bool
	// dropFailures counts the page cache drops the kernel declined
	// (DropCache).
	dropFailures atomic.Uint64

	ready     func()
	readyOnce sync.Once
}

// WaitStart says that the worker is set up, then waits for the start.
// The runner opens the start barrier once every worker has said so, so
// that no worker's setup (a ring, registered buffers) eats into the ramp
// or, without one, into the measured time.
func (w *Worker) WaitStart() {
	w.SetReady()
	<-w.Start
}

// SetReady says that the worker is set up (or gave up: the runner calls
// it when Run returns, so a worker that failed before WaitStart does not
// hold the barrier). Only the first call counts.
func (w *Worker) SetReady() {
	w.readyOnce.Do(func() {
		if w.ready != nil {
			w.ready()
		}
	})
}

// NewLane registers the statistics of one single-writer I/O stream of this
// worker on target t. Engines call it before waiting on Start.
func (w *Worker) NewLane(t int) *Lane {
	s := &Lane{Target: t, Worker: w.ID, Path: w.Targets[t].Path, Lines: newLineStats(w.Spec)}
	if w.content != nil {
		w.mu.Lock()
		s.fill = w.content.NewFiller(w.Seed ^ uint64(w.ID)<<32 ^ uint64(len(w.lanes)+1))
		w.mu.Unlock()
	}
	if w.Paced() {
		s.Read.Intended, s.Write.Intended = result.NewHistogram(), result.NewHistogram()
	}
	w.mu.Lock()
	w.lanes = append(w.lanes, s)
	w.mu.Unlock()
	return s
}

// DropFailures is how many page cache drops of a buffered run failed.
func (w *Worker) DropFailures() uint64 { return w.dropFailures.Load() }

// Lanes returns the lanes registered so far.
func (w *Worker) Lanes() []*Lane {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]*Lane(nil), w.lanes...)
}

// Generator builds the operation generator for lane number lane on target t.
func (w *Worker) Generator(t, lane int) (*workload.Generator, error) {
	seed := w.Seed ^ uint64(w.ID)<<40 ^ uint64(t)<<20 ^ uint64(lane)
	return workload.NewGenerator(w.Spec, w.Targets[t].Region, w.Cursors[t], iobuf.Mix64(seed))
}

// Paced says whether the worker's I/Os run to a rate limit: only then do
// they have an intended start, and its lanes a histogram of the latency
// from it (OpStats.Intended).
func (w *Worker) Paced() bool { return w.RateIOPS > 0 || w.RateBPS[0] > 0 || w.RateBPS[1] > 0 }

// LanePacer returns the pacer of one of n equally loaded lanes of this
// worker: its share of --rate-iops, or of fio's rate per direction.
func (w *Worker) LanePacer(n int, lane int) Pacer {
	if (w.RateBPS[0] > 0 || w.RateBPS[1] > 0) && n > 0 {
		_, readPct, _ := w.Spec.Mix()
		bps := [2]float64{w.RateBPS[0] / float64(n), w.RateBPS[1] / float64(n)}
		return Pacer{dir: newDirPacer(bps, w.Spec.MinBlock(), readPct, w.Spec.RateProcess == workload.RatePoisson,
			iobuf.Mix64(w.Seed^uint64(w.ID)<<32^uint64(lane)))}
	}
	return NewPacer(w.LaneRate(n))
}

// LaneRate returns the IOPS one of n equally loaded lanes of this worker
// must keep to (0: unlimited).
func (w *Worker) LaneRate(n int) float64 {
	if w.RateIOPS <= 0 || n <= 0 {
		return 0
	}
	return w.RateIOPS / float64(n)
}

// Control is shared by every worker of a run: the ramp/measure switch, the
// stop flag and the error budget. Reading it costs an atomic load.
type Control struct {
	measuring atomic.Bool
	stop      atomic.Bool
	errors    atomic.Uint64
	maxErrors uint64 // 0: unlimited
	onStop    func()

	mu       sync.Mutex
	firstErr *IOError
	stopWhy  string
	sleepers map[*Sleeper]struct{} // woken by a stop
}

// NewControl returns a Control that stops the run after maxErrors failed
// I/Os (0: never) and calls onStop (may be nil) when it stops for that.
func NewControl(maxErrors uint64, onStop func()) *Control {
	return &Control{maxErrors: maxErrors, onStop: onStop}
}

// Measuring reports whether completed I/Os count (false during ramp-up).
func (c *Control) Measuring() bool { return c.measuring.Load() }

// SetMeasuring switches counting on or off.
func (c *Control) SetMeasuring(on bool) { c.measuring.Store(on) }

// Stopped reports whether engines must stop issuing I/O.
func (c *Control) Stopped() bool { return c.stop.Load() }

// Stop asks every engine to stop issuing I/O, and wakes its sleeping lanes.
func (c *Control) Stop() {
	c.mu.Lock()
	c.stopLocked()
	c.mu.Unlock()
}

// stopLocked sets the stop flag, then wakes every Sleeper (c.mu held).
func (c *Control) stopLocked() {
	c.stop.Store(true)
	for s := range c.sleepers {
		s.wake()
	}
}

// Errors is the number of failed I/Os so far (ramp-up included).
func (c *Control) Errors() uint64 { return c.errors.Load() }

// FirstError returns the first failed I/O, or nil.
func (c *Control) FirstError() *IOError {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.firstErr
}

// StopReason says why the run stopped early ("" when it did not stop for errors).
func (c *Control) StopReason() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopWhy
}

// Fail records a failed I/O on lane s. It counts the error in the lane
// (always, ramp-up included: an error is never noise) and stops the run
// once the error budget is spent. Failures are rare, so this path may lock.
func (c *Control) Fail(s *Lane, op *IO, errno int, res int64) {
	c.fail(s, &IOError{Target: s.Target, Path: s.Path, Worker: s.Worker, Write: op.Write, Offset: op.Offset, Len: op.Len, Errno: errno, Result: res, Class: ClassOf(errno, res, op.Len)})
}

func (c *Control) fail(s *Lane, e *IOError) {
	s.countError(e.Write, e.Class)
	n := c.errors.Add(1)
	c.mu.Lock()
	if c.firstErr == nil {
		c.firstErr = e
	}
	// Decide and set stop under the lock: two lanes failing at once past
	// the budget must not both see the run as still going and call onStop
	// twice (the runner's cancel is idempotent, a closed channel is not).
	stopNow := c.maxErrors > 0 && n >= c.maxErrors && !c.stop.Load()
	if stopNow {
		c.stopWhy = fmt.Sprintf("stopped after %d I/O error(s); first: %s", n, c.firstErr)
		c.stopLocked()
	}
	c.mu.Unlock()
	if stopNow && c.onStop != nil {
		c.onStop()
	}
}

// Registry maps engine names to engines. It is explicit: the CLI builds
// one with the engines it links in.
type Registry struct {
	engines map[workload.EngineName]Engine
	order   []workload.EngineName
}

// NewRegistry returns a registry holding engines in preference order (the
// first available one is what "auto" picks).
func NewRegistry(engines ...Engine) *Registry {
	r := &Registry{engines: map[workload.EngineName]Engine{}}
	for _, e := range engines {
		r.engines[e.Name()] = e
		r.order = append(r.order, e.Name())
	}
	return r
}

// Names lists the registered engines in preference order.
func (r *Registry) Names() []workload.EngineName {
	return append([]workload.EngineName(nil), r.order...)
}

// TargetChecker is implemented by an engine that runs on every target but
// runs some of them far worse than the next engine would (io_uring on a
// device that cannot take non-blocking I/O hands every I/O to a kernel
// thread). Auto passes over it for such targets; an explicit request still
// gets it, with the reason saying what to expect.
type TargetChecker interface {
	// Suits returns nil when the engine suits the opened target fd, else
	// why not.
	Suits(fd int) error
}

// Resolve returns the engine for name without looking at targets; "auto"
// picks the first available one and explains the choice in reason.
func (r *Registry) Resolve(name workload.EngineName) (e Engine, reason string, err error) {
	return r.ResolveFor(name, nil)
}

// ResolveFor is Resolve for a run on the opened targets: "auto" also passes
// over an engine that says one of them does not suit it, unless no later
// engine is available.
func (r *Registry) ResolveFor(name workload.EngineName, targets []Target) (e Engine, reason string, err error) {
	if name == "" || name == workload.EngineAuto {
		var why []string
		var fallback Engine // the first available engine, even if passed over
		for _, n := range r.order {
			cand := r.engines[n]
			if aerr := cand.Available(); aerr != nil {
				why = append(why, fmt.Sprintf("%s unavailable: %v", n, aerr))
				continue
			}
			if fallback == nil {
				fallback = cand
			}
			if serr := unsuited(cand, targets); serr != nil {
				why = append(why, fmt.Sprintf("%s passed over: %v", n, serr))
				continue
			}
			return cand, explainChoice(cand, why), nil
		}
		if fallback != nil {
			return fallback, strings.Join(why, "; ") + "; using " + string(fallback.Name()) + " all the same: no other engine is available", nil
		}
		return nil, "", fmt.Errorf("no engine can run here: %s", strings.Join(why, "; "))
	}
	e, ok := r.engines[name]
	if !ok {
		var names []string
		for _, n := range r.order {
			names = append(names, string(n))
		}
		sort.Strings(names)
		return nil, "", fmt.Errorf("unknown engine %q (known: auto, %s)", name, strings.Join(names, ", "))
	}
	if aerr := e.Available(); aerr != nil {
		return nil, "", fmt.Errorf("engine %s cannot run here: %v", name, aerr)
	}
	reason = "requested"
	if serr := unsuited(e, targets); serr != nil {
		reason += "; beware: " + serr.Error()
	}
	return e, reason, nil
}

// unsuited asks a TargetChecker about every target; nil when all suit it.
func unsuited(e Engine, targets []Target) error {
	tc, ok := e.(TargetChecker)
	if !ok {
		return nil
	}
	for _, t := range targets {
		if err := tc.Suits(t.FD); err != nil {
			where := t.Path
			if where == "" {
				where = fmt.Sprintf("target %d", t.Index)
			}
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	return nil
}

// explainChoice says why auto picked e after passing over others (why).
// An engine that can describe its set-up (io_uring's flags) adds it.
func explainChoice(e Engine, why []string) string {
	s := string(e.Name()) + " is available"
	if d, ok := e.(interface{ Describe() string }); ok {
		s += " (" + d.Describe() + ")"
	}
	if len(why) > 0 {
		s = strings.Join(why, "; ") + "; using " + string(e.Name())
	}
	return s
}

// IO is one I/O in an engine: the generator's workload.Op and what the
// engine carries from its issue to its completion (the generator knows
// nothing of it). Engines keep their IOs in fixed slots: nothing is
// allocated per I/O.
type IO struct {
	workload.Op
	// Verify is set when a read is issued whose data can be checked
	// (--verify).
	Verify bool
	// VerifyMark and VerifyStamp carry --verify's lost-write bookkeeping
	// from the I/O's issue to its completion (Verifier).
	VerifyMark, VerifyStamp uint64
	// Due is the I/O's intended start under a rate limit (the pacer's slot
	// for it, on the engine's monotonic clock; 0: unpaced).
	Due int64
}
