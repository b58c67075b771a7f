package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/target"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Group is one access specification over its targets, run by its own
// workers. A plan with several groups runs them all at once (Iometer's
// per-worker access specifications; the business suite's mixed run).
type Group struct {
	Spec    workload.Spec // defaults applied and validated by the caller
	Targets []string
	// Clones keeps each worker's own figures (summary.jobs[].clones):
	// fio's job clones.
	Clones bool
}

// Plan is what to run.
type Plan struct {
	Name             string // names the run when it has several groups
	Groups           []Group
	AllowDestructive bool
	MaxErrors        uint64        // stop after this many failed I/Os (0: never)
	Interval         time.Duration // snapshot period (default 1s)
	Observers        []Observer
	Version          string
	Engines          *engine.Registry
	// Progress, when set, hears about slow preparation (filling a new file).
	Progress func(path string, done, total int64)
	// StartAt, when set, is the instant the ramp-up starts (run --start-at):
	// targets are opened and filled and every worker set up first. A
	// preparation that finishes after it is a *workload.FieldError (nothing
	// measured); a cancel while waiting is ErrStartAtInterrupted.
	StartAt time.Time
	// Prepared, when set, hears that every target is open and every
	// worker set up: the run now waits for StartAt, or starts its ramp-up.
	Prepared func()
	// MeasureBy, when set, is when the measured window must have ended:
	// a window that would end later is cut to end then (a note says so),
	// so that time the preparation took comes off the measurement instead
	// of overrunning the caller's deadline (a /probe's scrape budget: on
	// a loaded host opening, setting up and stopping a canary take
	// seconds, not the quarter second a quiet one needs).
	MeasureBy time.Time
	// MinMeasure, with MeasureBy, is the shortest window worth opening:
	// when the programs that time the device are loaded and the ramp-up
	// would leave less before MeasureBy, the run stops before its first
	// I/O with a *TooLateError (nothing measured).
	MinMeasure time.Duration
	// NoDeviceLatency leaves the devices' own latency unmeasured (no BPF
	// programs are loaded); the result says so, with NoDeviceLatencyWhy
	// when set (else: run --device-latency=false).
	NoDeviceLatency    bool
	NoDeviceLatencyWhy string
	// CheckDeadline bounds each look for signatures while the run writes
	// (0: hostfs.DefaultDeadline): one that has not finished by then
	// stops the writes, as a look that finds something does.
	CheckDeadline time.Duration
	// Created, when set, is handed every file this run created, held by
	// descriptor, before the run closes it: the callee removes it later
	// (only if its name still is that file) or closes it. err says that
	// the name (path) no longer is the file the run created: nothing to
	// remove then. The daemon's keep_files: false and a check's
	// temporary file use it.
	Created func(path string, c *target.CreatedFile, err error)
	// Note, when set, hears each note the run records about its targets
	// (result.Notes) as soon as it is known, before the ramp-up: a file
	// of ioprobe's grown to hold a larger --size is said then, not only
	// in the result.
	Note func(note string)
}

// TooLateError: preparing (and the ramp-up to come) took the time before
// Plan.MeasureBy but for less than Plan.MinMeasure; nothing was measured.
type TooLateError struct {
	Took, Left, Need time.Duration
}

func (e *TooLateError) Error() string {
	return fmt.Sprintf("preparing took %s: %s left to measure before the deadline, less than %s",
		e.Took.Round(time.Millisecond), e.Left.Round(time.Millisecond), e.Need)
}

// ErrStartAtInterrupted: the run was cancelled while it waited for
// Plan.StartAt; nothing was measured.
var ErrStartAtInterrupted = errors.New("interrupted while waiting for --start-at: nothing was measured")

// Phase of a run as observers see it.
type Phase string

// Phases.
const (
	PhaseRamp    Phase = "ramp"
	PhaseMeasure Phase = "measure"
	PhaseDone    Phase = "done"
)

// Observer receives a snapshot every interval and a final one. Observe runs
// on the runner's goroutine and must be quick; the snapshot is only valid
// during the call.
type Observer interface {
	Observe(s *Snapshot)
}

// ObserverFunc adapts a function.
type ObserverFunc func(s *Snapshot)

// Observe implements Observer.
func (f ObserverFunc) Observe(s *Snapshot) { f(s) }

func (p *Plan) validate() error {
	if len(p.Groups) == 0 {
		return errors.New("nothing to run")
	}
	for _, g := range p.Groups {
		if len(g.Targets) == 0 {
			return &workload.FieldError{Field: "--target", Value: "(none)", Reason: "at least one target is needed"}
		}
		if err := g.Spec.Validate(); err != nil {
			return err
		}
		if g.Spec.CloneFiles && len(g.Targets)%g.Spec.Workers != 0 {
			return &workload.FieldError{Field: "--target", Value: fmt.Sprint(len(g.Targets)),
				Reason: fmt.Sprintf("%d workers with their own targets need a multiple of %d targets", g.Spec.Workers, g.Spec.Workers)}
		}
	}
	if p.Engines == nil {
		return errors.New("no engine registry")
	}
	return nil
}

// openTarget is one distinct target of the plan.
type openTarget struct {
	t      *target.Target
	index  int
	groups []int
}

// Run executes the plan. The returned result is complete even when ctx is
// cancelled mid-run (status "interrupted"); an error means nothing was
// measured (bad input, a refused or unopenable target).
func Run(ctx context.Context, p Plan) (*result.Result, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	if p.Interval <= 0 {
		p.Interval = time.Second
	}
	// Resolve engines first: a wrong engine must not leave a file behind.
	engines := make([]engine.Engine, len(p.Groups))
	reasons := make([]string, len(p.Groups))
	for i, g := range p.Groups {
		e, why, err := p.Engines.Resolve(g.Spec.Engine)
		if err != nil {
			return nil, &workload.FieldError{Field: workload.FieldEngine.Flag(), Spec: workload.FieldEngine, Value: string(g.Spec.Engine), Reason: err.Error()}
		}
		engines[i], reasons[i] = e, why
	}
	endOpen := BeginStep("opening the targets (a new file's fill, the safety checks)")
	targets, err := p.openTargets(ctx)
	endOpen()
	if err != nil {
		return nil, err
	}
	defer func() {
		defer BeginStep("closing the targets")()
		p.handCreated(targets)
		for _, ot := range targets {
			_ = ot.t.Close()
		}
	}()
	// With the targets open, resolve again so that auto can pass over an
	// engine that runs these targets badly (io_uring on zram).
	for i, g := range p.Groups {
		var ets []engine.Target
		for _, ot := range groupTargets(g, targets) {
			ets = append(ets, engine.Target{FD: ot.t.FD, Index: ot.index, Path: ot.t.Path})
		}
		if engines[i], reasons[i], err = p.Engines.ResolveFor(g.Spec.Engine, ets); err != nil {
			return nil, err
		}
	}
	return p.execute(ctx, targets, engines, reasons)
}

// targetOptions gives every distinct path of the plan, in order, its
// options: for writing if any group writes to it, with the strictest
// alignment and largest region asked. Cancelling ctx stops the filling of
// a new file (which is then removed).
func (p *Plan) targetOptions(ctx context.Context) ([]string, map[string]*openTarget, map[string]*target.Options) {
	var order []string
	byPath := map[string]*openTarget{}
	opts := map[string]*target.Options{}
	for gi, g := range p.Groups {
		for _, path := range g.Targets {
			o, ok := opts[path]
			if !ok {
				o = &target.Options{AllowDestructive: p.AllowDestructive, DefaultFileSize: workload.DefaultRegion, Cancel: ctx.Done(), Exclusive: p.verifies()}
				opts[path] = o
				order = append(order, path)
				byPath[path] = &openTarget{index: len(order) - 1}
			}
			byPath[path].groups = append(byPath[path].groups, gi)
			s := &g.Spec
			o.Write = o.Write || s.WritesData()
			o.ForeignContent = o.ForeignContent || (s.WritesData() && !s.Buffer.Stamped())
			// Direct I/O's alignment rules go only when every group on
			// the target runs buffered.
			o.Buffered = (o.Buffered || len(byPath[path].groups) == 1) && s.Buffered
			o.Region = max(o.Region, s.Extent()) // every worker's region, at its offset
			o.Align = max(o.Align, s.Alignment())
			o.MaxBlock = max(o.MaxBlock, s.MaxBlock())
		}
	}
	return order, byPath, opts
}

// Check makes every check Run would make before measuring, without
// creating, filling or writing anything: bad input, engines, and the
// safety rules of every target. A suite checks all its points this way
// before it runs the first.
func Check(p Plan) error {
	if err := p.validate(); err != nil {
		return err
	}
	for _, g := range p.Groups {
		if _, _, err := p.Engines.Resolve(g.Spec.Engine); err != nil {
			return &workload.FieldError{Field: workload.FieldEngine.Flag(), Spec: workload.FieldEngine, Value: string(g.Spec.Engine), Reason: err.Error()}
		}
	}
	order, _, opts := p.targetOptions(context.Background())
	for _, path := range order {
		if err := target.Check(path, *opts[path]); err != nil {
			return err
		}
	}
	return nil
}

// openTargets opens every distinct path once (see targetOptions).
func (p *Plan) openTargets(ctx context.Context) ([]*openTarget, error) {
	order, byPath, opts := p.targetOptions(ctx)
	// Check every target before creating or opening any, so that a bad
	// second target does not leave a freshly filled first one behind.
	for _, path := range order {
		if err := target.Check(path, *opts[path]); err != nil {
			return nil, err
		}
	}
	var out []*openTarget
	for _, path := range order {
		o := opts[path]
		if p.Progress != nil {
			path := path
			o.Progress = func(done, total int64) { p.Progress(path, done, total) }
		}
		t, err := target.Open(path, *o)
		if err != nil {
			p.handCreated(out)
			for _, ot := range out {
				_ = ot.t.Close()
			}
			return nil, err
		}
		ot := byPath[path]
		ot.t = t
		out = append(out, ot)
	}
	return out, nil
}

// handCreated hands the files the run created to p.Created.
func (p *Plan) handCreated(targets []*openTarget) {
	if p.Created == nil {
		return
	}
	for _, ot := range targets {
		if !ot.t.Created {
			continue
		}
		c, err := ot.t.KeepCreated()
		p.Created(ot.t.Path, c, err)
	}
}

// commonRegion is what the result's workload.region_bytes says: the
// group's --size, else the region when every target of the group has the
// same one, else 0 ("the whole of each target"; targets[].region_bytes has
// each one). Each target has its own region: one taken from another target
// would reach past the end of a smaller one.
func commonRegion(spec workload.Spec, ets []engine.Target) int64 {
	if spec.RegionBytes > 0 {
		return spec.RegionBytes
	}
	if len(ets) == 0 {
		return 0
	}
	for _, et := range ets[1:] {
		if et.Region.Len != ets[0].Region.Len {
			return 0
		}
	}
	return ets[0].Region.Len
}

// groupTargets returns the opened targets of group g, in its order.
func groupTargets(g Group, targets []*openTarget) []*openTarget {
	var out []*openTarget
	for _, path := range g.Targets {
		for _, ot := range targets {
			if ot.t.Path == path {
				out = append(out, ot)
			}
		}
	}
	return out
}

// crew is a plan's workers, group by group, and what runs them.
type crew struct {
	all     []*engine.Worker
	groupOf map[*engine.Worker]int
	specs   []workload.Spec // each group's spec as it runs (its region)
	syncFDs []int           // --sync, --buffered: the targets reopened with other flags
	// closeFsync are the buffered targets written with fsync_on_close.
	closeFsync []int
	notes      []string       // what the result must say of how the crew was set up
	ready      sync.WaitGroup // a worker set up: the start barrier
	wg         sync.WaitGroup // a worker's engine running
	runErrs    chan error
	// done is closed once every engine has returned: before the run time
	// only when each worker's stop-after budget is spent.
	done chan struct{}
	// ended is when each worker (of all, by index) ended on its own:
	// its budget spent or its group's run time over while the run went
	// on; zero for one the run's end stopped. Read once done is closed.
	ended []time.Time
}

// newCrew sets up every group's workers on its targets (each closed by
// close): the start barrier start, the control ctl and the verifier are
// theirs to share.
func (p *Plan) newCrew(targets []*openTarget, ctl *engine.Control, start chan struct{}, verifier *engine.Verifier, seed uint64) (*crew, error) {
	c := &crew{groupOf: map[*engine.Worker]int{}, specs: make([]workload.Spec, len(p.Groups))}
	for gi, g := range p.Groups {
		spec := g.Spec
		if spec.Seed != 0 {
			seed = spec.Seed
		}
		var ets []engine.Target
		for _, ot := range groupTargets(g, targets) {
			region := ot.t.Region
			if spec.RegionBytes > 0 {
				region = spec.RegionBytes
			}
			fd := ot.t.FD
			if (spec.Sync != workload.SyncNone && spec.WritesData()) || spec.Buffered {
				var err error
				var note string
				if fd, note, err = p.groupFD(ot.t, &spec); err != nil {
					c.close()
					return nil, fmt.Errorf("%s: %w", ot.t.Path, err)
				}
				if note != "" {
					c.notes = append(c.notes, ot.t.Path+": "+note)
				}
				c.syncFDs = append(c.syncFDs, fd)
				if spec.FsyncOnClose && spec.WritesData() {
					c.closeFsync = append(c.closeFsync, fd)
				}
			}
			ets = append(ets, engine.Target{FD: fd, Region: workload.Region{Len: region}, Index: ot.index, Path: ot.t.Path, Key: ot.t.SectorKey})
		}
		spec.RegionBytes = commonRegion(spec, ets)
		c.specs[gi] = spec
		ws, err := engine.NewWorkers(engine.WorkerSet{Spec: &c.specs[gi], Targets: ets, Ctl: ctl, Start: start, Seed: seed + uint64(gi), FirstID: len(c.all), Verify: verifier,
			Ready: c.ready.Done})
		if err != nil {
			c.close()
			return nil, err
		}
		for _, w := range ws {
			c.groupOf[w] = gi
		}
		c.all = append(c.all, ws...)
	}
	return c, nil
}

// close releases the workers and the targets reopened for them.
func (c *crew) close() {
	engine.CloseWorkers(c.all)
	for _, fd := range c.syncFDs {
		closeFD(fd)
	}
}

// run starts each worker's engine (of its group, in engines): they wait at
// the start barrier. A worker that fails stops them all and cancels the
// run.
func (c *crew) run(engines []engine.Engine, ctl *engine.Control, cancel context.CancelFunc) {
	c.runErrs = make(chan error, len(c.all))
	c.ready.Add(len(c.all))
	c.ended = make([]time.Time, len(c.all))
	for i, w := range c.all {
		c.wg.Add(1)
		e := engines[c.groupOf[w]]
		go func() {
			defer c.wg.Done()
			defer w.SetReady() // a worker that failed in its setup does not hold the barrier
			err := e.Run(w)
			if err == nil && !ctl.Stopped() {
				// Its budget is spent or its own run time over, before
				// the run's end: the worker ended on its own, as fio's
				// job does (its runtime ends there).
				c.ended[i] = time.Now()
			}
			if err != nil {
				c.runErrs <- fmt.Errorf("engine %s, worker %d: %w", e.Name(), w.ID, err)
				ctl.Stop()
				cancel()
			}
		}()
	}
	c.done = make(chan struct{})
	go func() {
		c.wg.Wait()
		close(c.done)
	}()
}

// stop stops the workers and waits for their engines to return.
func (c *crew) stop(ctl *engine.Control) {
	defer BeginStep("the workers' stop (their I/O still in the kernel)")()
	ctl.Stop()
	c.wg.Wait()
}

// awaitStart waits at the start barrier until every worker is set up
// (rings created, buffers registered), says the run is prepared, and
// waits for Plan.StartAt (from parent, the caller's context) when set. A
// stop or a failed worker cancels ctx, and the ramp or the measurement
// after it ends at once.
func (p *Plan) awaitStart(parent, ctx context.Context, c *crew, ctl *engine.Control, start chan struct{}, res *result.Result) error {
	allReady := make(chan struct{})
	go func() {
		c.ready.Wait()
		close(allReady)
	}()
	select {
	case <-allReady:
	case <-ctx.Done():
	}
	if p.Prepared != nil && ctx.Err() == nil {
		p.Prepared()
	}
	if p.StartAt.IsZero() {
		return nil
	}
	if err := p.waitStartAt(parent, ctx); err != nil {
		ctl.Stop()
		close(start)
		c.wg.Wait()
		return err
	}
	res.StartedAt = time.Now().UTC()
	return nil
}

// execute runs the opened plan: its workers set up, the start barrier,
// the ramp-up, the measured window.
func (p *Plan) execute(ctx context.Context, targets []*openTarget, engines []engine.Engine, reasons []string) (*result.Result, error) {
	started := time.Now()
	// The BPF programs load while the workers are set up; they are
	// attached before the first I/O (see below).
	devLat := p.startDeviceLatency(targets)
	defer devLat.close()
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ctl := engine.NewControl(p.MaxErrors, cancel)
	start := make(chan struct{})
	seed := uint64(started.UnixNano())
	verifier, err := p.verifier(targets, seed)
	if err != nil {
		return nil, err
	}
	c, err := p.newCrew(targets, ctl, start, verifier, seed)
	if err != nil {
		return nil, err
	}
	defer c.close()
	c.run(engines, ctl, cancel)

	snap := newSnapshotter(p, targets, c.all)
	res := p.baseResult(started, c.specs, engines, reasons, targets)
	endSetup := BeginStep("the workers' setup (rings, buffers) and the start barrier")
	endDescribe := BeginStep("describing the storage under the targets")
	store := p.describeStorage(ctx, res, targets)
	endDescribe()
	res.Notes = append(res.Notes, c.notes...)
	if p.Note != nil {
		for _, n := range res.Notes {
			p.Note(n)
		}
	}
	if !p.StartAt.IsZero() {
		res.StartAt = p.StartAt.UTC()
	}
	snap.verifier = verifier
	err = p.awaitStart(parent, ctx, c, ctl, start, res)
	endSetup()
	if err != nil {
		return nil, err
	}
	// The whole safety check once more, now that files are filled,
	// workers set up and any wait is over: immediately before the first
	// write. Then a look for signatures at the end of every interval.
	if ctx.Err() == nil {
		endCheck := BeginStep("the safety check before the first I/O")
		err := recheck(targets)
		endCheck()
		if err != nil {
			ctl.Stop()
			close(start)
			c.wg.Wait()
			return nil, err
		}
	}
	res.Notes = append(res.Notes, unseenNotes(targets)...)
	g := newGuard(targets, p.CheckDeadline)
	defer g.close()

	// Ramp-up: I/O runs, nothing counts. Without one, the window opens
	// before the first I/O, so every I/O counts (as fio counts all of a
	// job's); opened after the barrier, I/Os completed in between were
	// lost (the kernel saw 7 writes more than a loaded run counted).
	ramp := p.Groups[0].Spec.Ramp
	// The programs follow every request from here, so that one issued
	// during the ramp-up and completed in the window counts, as the
	// kernel's own counts count it. A run stopped meanwhile (a signal
	// during the setup) does not wait for them, and issues no I/O: it
	// ends as promptly as one stopped while measuring.
	endLoad := BeginStep("the BPF programs' load and attach (which cannot be cancelled)")
	loaded := devLat.wait(ctx.Done())
	endLoad()
	if !loaded || ctx.Err() != nil {
		ctl.Stop()
		close(start)
		c.wg.Wait()
		return p.finish(res, snap, nil, ctx, ctl, c.runErrs, g)
	}
	if !p.MeasureBy.IsZero() {
		if left := time.Until(p.MeasureBy) - ramp; left < p.MinMeasure {
			ctl.Stop()
			close(start)
			c.wg.Wait()
			return nil, &TooLateError{Took: time.Since(started), Left: max(left, 0), Need: p.MinMeasure}
		}
	}
	var win *window
	if ramp == 0 {
		win = startWindow(targets, ctl, devLat, func() { g.setPhase(inWindow) })
	}
	close(start)
	if ramp > 0 {
		snap.phase = PhaseRamp
		rampEnd := time.Now().Add(ramp)
		if why := p.tick(ctx, rampEnd, c.done, snap, nil, g); why == endCancelled || why == endSafety {
			c.stop(ctl)
			out, err := p.finish(res, snap, nil, ctx, ctl, c.runErrs, g)
			if out != nil {
				store.changed(ctx, out)
			}
			return out, err
		}
	}

	// Measure, until the run time is over or, with a stop-after budget,
	// every worker has issued its budget and seen it complete.
	if win == nil {
		win = startWindow(targets, ctl, devLat, func() { g.setPhase(inWindow) })
	}
	snap.begin(win.t0)
	snap.phase = PhaseMeasure
	run := p.duration()
	if !p.MeasureBy.IsZero() {
		if left := p.MeasureBy.Sub(win.t0); left < run {
			run = max(left, 0)
			res.Notes = append(res.Notes, fmt.Sprintf("measured for %s of the %s asked: the measurement had to end by a deadline, and preparing took the rest", run.Round(time.Millisecond), p.duration()))
		}
	}
	c.setDeadlines(run)
	ended := p.tick(ctx, win.t0.Add(run), c.done, snap, &res.Intervals, g)
	if len(c.closeFsync) > 0 {
		// fio's end_fsync and fsync_on_close: the job's written files
		// are flushed once its I/O is done, within its run time.
		c.stop(ctl)
		for _, fd := range c.closeFsync {
			if err := fsyncFD(fd); err != nil {
				res.Notes = append(res.Notes, "fsync_on_close: "+err.Error())
			}
		}
	}
	win.stop(ctl, ctx.Done(), func() { g.setPhase(afterWindow) })
	c.stop(ctl)
	snap.ended = c.ended
	out, err := p.finish(res, snap, win, ctx, ctl, c.runErrs, g)
	if out != nil && budgeted(c.specs) && ended != endCancelled && ended != endSafety {
		out.Summary.Ended = ended
	}
	if out != nil {
		store.changed(ctx, out)
	}
	return out, err
}

// Why tick returned.
const (
	endCancelled = ""
	endDuration  = result.EndedDuration
	endBudget    = result.EndedBudget
	endSafety    = "safety" // the guard found a signature: stop writing
)

// duration is the plan's run time: its longest group's (groups run at
// once, each for its own; fio's jobs without stonewall each end at their
// own runtime).
func (p *Plan) duration() time.Duration {
	var d time.Duration
	for _, g := range p.Groups {
		d = max(d, g.Spec.Duration)
	}
	return d
}

// setDeadlines gives the workers of each group that runs for less than the
// plan's run time their own end, measured from now (the window opening).
func (c *crew) setDeadlines(run time.Duration) {
	now := engine.Nanotime()
	for _, w := range c.all {
		if d := c.specs[c.groupOf[w]].Duration; d < run {
			w.SetDeadline(now + d.Nanoseconds())
		}
	}
}

// budgeted reports whether any group stops after a budget.
func budgeted(specs []workload.Spec) bool {
	for i := range specs {
		if specs[i].Budgeted() {
			return true
		}
	}
	return false
}

// waitStartAt waits, every worker set up, for p.StartAt. A start already
// past once preparation finished is an error: starting late would break
// the common start the caller asked for. A worker that failed while
// waiting cancels ctx but not parent: the run then goes on to report it.
func (p *Plan) waitStartAt(parent, ctx context.Context) error {
	switch {
	case parent.Err() != nil:
		return ErrStartAtInterrupted
	case ctx.Err() != nil:
		return nil
	}
	at := p.StartAt.Round(0) // the wall clock only, as the request was made
	if late := time.Since(at); late >= 0 {
		return &workload.FieldError{Field: "--start-at", Value: at.UTC().Format(time.RFC3339Nano),
			Reason: fmt.Sprintf("preparation finished %s after it (start later); nothing was measured", late.Round(time.Millisecond))}
	}
	// Timers run on the monotonic clock, StartAt is on the wall clock
	// (which NTP may slew meanwhile): wait again for what is left, so that
	// the ramp never begins before the instant on the wall clock.
	for left := time.Until(at); left > 0; left = time.Until(at) {
		t := time.NewTimer(left)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			if parent.Err() != nil {
				return ErrStartAtInterrupted
			}
			return nil
		}
	}
	return nil
}

// tick sleeps until end or until every worker is done (done closed),
// taking a snapshot every interval and asking g (if any) to look for
// signatures after it. It says why it returned: the run was cancelled or
// stopped (endCancelled), end came (endDuration), the workers finished
// their budgets (endBudget), or g found a signature (endSafety).
func (p *Plan) tick(ctx context.Context, end time.Time, done <-chan struct{}, snap *snapshotter, intervals *[]result.Interval, g *guard) string {
	t := time.NewTicker(p.Interval)
	defer t.Stop()
	deadline := time.NewTimer(time.Until(end))
	defer deadline.Stop()
	for {
		select {
		case <-ctx.Done():
			return endCancelled
		case <-deadline.C:
			return endDuration
		case <-done:
			if ctx.Err() != nil {
				return endCancelled
			}
			return endBudget
		case f := <-g.foundC():
			g.stop = &f
			return endSafety
		case now := <-t.C:
			iv := snap.take(now)
			if intervals != nil {
				*intervals = append(*intervals, iv)
			}
			for _, o := range p.Observers {
				o.Observe(snap.current)
			}
			g.request()
		}
	}
}

// finish assembles the result after every worker has stopped.
func (p *Plan) finish(res *result.Result, snap *snapshotter, win *window, ctx context.Context, ctl *engine.Control, runErrs chan error, g *guard) (*result.Result, error) {
	defer BeginStep("assembling the result")()
	close(runErrs)
	var engErrs []string
	for err := range runErrs {
		engErrs = append(engErrs, err.Error())
	}
	end := time.Now()
	if win != nil {
		end = win.t1
	}
	snap.phase = PhaseDone
	prevTick := snap.last
	last := snap.take(end)
	// The measured window rarely ends on a tick: keep its last part.
	if win != nil && end.Sub(prevTick) >= 10*time.Millisecond {
		res.Intervals = append(res.Intervals, last)
	}
	summarize(res, snap, win)
	endLast := BeginStep("the last look for filesystems and labels on the targets")
	stop := g.last(ctx.Done())
	endLast()
	res.SafetyChecks = g.summary()
	if g != nil && g.skipped {
		res.Notes = append(res.Notes, "the last look for filesystems and labels was not waited for: the run was interrupted")
	}
	if win != nil {
		res.Summary.HostOthers = hostOthers(res, win)
		if win.tasksHurried {
			res.Notes = append(res.Notes, "the look at the host's processes at the window's end was not waited for: the run was interrupted (the CPU share of others counts the kernel's threads)")
		}
	}
	if stop != nil {
		res.SafetyStop = stop.stop
		res.SafetyStop.AfterSeconds = stop.at.Sub(res.StartedAt).Seconds()
	}
	if win != nil {
		win.devLat.summarize(res)
		// The note is written from the device figures as the result keeps
		// them (device latency takes ioprobe's own check reads out), so
		// that it says what a reader of the result recomputes.
		res.Notes = append(res.Notes, res.OthersNotes()...)
	}
	p.setJobs(res, snap.workers, snap.ended, snap.t0)
	switch {
	case stop != nil:
		res.Status = result.StatusErrors
		res.Message = stopMessage(stop)
		if len(engErrs) > 0 {
			res.Message += "; " + strings.Join(engErrs, "; ")
		}
	case len(engErrs) > 0:
		res.Status = result.StatusErrors
		res.Message = strings.Join(engErrs, "; ")
	case ctl.Errors() > 0:
		res.Status = result.StatusErrors
		if why := ctl.StopReason(); why != "" {
			res.Message = why
		} else if fe := ctl.FirstError(); fe != nil {
			res.Message = fmt.Sprintf("%d I/O error(s); first: %s", ctl.Errors(), fe)
		}
	case ctx.Err() != nil:
		res.Status = result.StatusInterrupted
		res.Message = "interrupted before the run time was over"
	default:
		res.Status = result.StatusOK
	}
	if res.Summary.Ops == 0 && res.Status == result.StatusOK {
		// Figures of 0 I/Os are what the storage did in the window (a
		// short window on storage that stalled longer, a paced stream
		// between two I/Os): the run is not failed for it — a suite or a
		// schedule goes on — but the result says so in words, and the
		// rate is 0, never a figure made up.
		res.Message = noIOMessage
		res.Notes = append(res.Notes, noIOMessage)
	}
	if ctl.Errors() > 0 && ctx.Err() != nil && ctl.StopReason() == "" {
		res.Message += "; interrupted"
	}
	for _, o := range p.Observers {
		o.Observe(snap.current)
	}
	return res, nil
}

// noIOMessage is a run's message when no I/O completed in its measured
// window.
const noIOMessage = "no I/O completed in the measured window: its rates are 0 (the storage answered nothing within it, or a paced stream issued nothing)"

// verifier builds --verify's state when any group asks for it: a file
// ioprobe filled is checked on every read; elsewhere a bitmap remembers
// which units this run wrote, in units of the largest size that divides
// every offset and transfer of every group on that target.
func (p *Plan) verifier(targets []*openTarget, run uint64) (*engine.Verifier, error) {
	if !p.verifies() {
		return nil, nil
	}
	vts := make([]engine.VerifyTarget, len(targets))
	for _, ot := range targets {
		unit := int64(0)
		for _, gi := range ot.groups {
			s := &p.Groups[gi].Spec
			unit = gcd(unit, s.Alignment())
			for _, l := range s.Normalized() {
				unit = gcd(gcd(unit, l.Bytes), l.Align) // gcd(x, 0) is x
			}
		}
		unit = max(unit-unit%512, 512)
		vts[ot.index] = engine.VerifyTarget{Formatted: ot.t.Formatted, Region: ot.t.Region, Unit: unit}
	}
	return engine.NewVerifier(run, vts)
}

// verifies says whether any group asks for --verify (the verifier then
// checks every group's reads and formats every group's writes).
func (p *Plan) verifies() bool {
	for _, g := range p.Groups {
		if g.Spec.Verify {
			return true
		}
	}
	return false
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// groupFD opens the descriptor a group runs on when it needs other flags
// than the target's own O_DIRECT one (--sync, --buffered), and for a
// buffered group drops the target's cached pages first, as fio's
// invalidate=1 does before a job (unless KeepCache).
// A failed drop is a note, not an error: fio warns and runs on too.
func (p *Plan) groupFD(t *target.Target, spec *workload.Spec) (fd int, note string, err error) {
	switch {
	case spec.WritesData() || t.Writable:
		sync := workload.SyncNone
		if spec.WritesData() {
			sync = spec.Sync
		}
		fd, err = reopen(t.FD, sync, spec.Buffered)
	default:
		fd, err = readOnlyReopen(t.FD)
	}
	if err != nil {
		return -1, "", err
	}
	if spec.Buffered && !spec.KeepCache {
		if err := engine.DropCache(fd); err != nil {
			note = fmt.Sprintf("its page cache was not dropped before the buffered run (fio's invalidate=1): %v", err)
		}
	}
	return fd, note, nil
}
