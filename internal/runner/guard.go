package runner

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ioprobe/ioprobe/internal/hostfs"
	"github.com/ioprobe/ioprobe/internal/target"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// The safety checks that follow Open: the whole check once more just
// before the first write (recheck), then a look for signatures at the end
// of every interval while the run writes (guard). Both live outside the
// I/O path: the engines never wait for them.

// recheck repeats every writable target's safety check (target.Recheck)
// immediately before the first write.
func recheck(targets []*openTarget) error {
	for _, ot := range targets {
		if err := ot.t.Recheck(); err != nil {
			return err
		}
	}
	return nil
}

// unseenNotes says, for the result, which processes the holder checks
// of the written targets could not look at: ioprobe's own ancestors that
// deny it a look although it has every privilege that gives the view
// (target.Target.Unseen).
func unseenNotes(targets []*openTarget) []string {
	var out []string
	for _, ot := range targets {
		if len(ot.t.Unseen) > 0 {
			out = append(out, fmt.Sprintf("%s: the holder check could not look at %s: a process ioprobe descends from (the supervisor or sandbox that started it), which denies ioprobe a look although it runs with CAP_SYS_PTRACE; every other process was looked at", ot.t.Path, strings.Join(ot.t.Unseen, "; ")))
		}
	}
	return out
}

// guard looks for signatures on the targets a run writes, each time tick
// asks at the end of an interval (skipped when the previous look has not
// finished), and reports the first it finds. A look reads the targets
// themselves, and a target whose storage stops answering would hold it
// for as long: so each look runs on a goroutine of its own, beside the
// ticks, and one that has not finished within the deadline stops the
// writes (fail closed: ioprobe can no longer tell whether something
// appeared on the target), as a look that finds a signature does.
type guard struct {
	targets  []*target.Target
	deadline time.Duration
	// scan is one target's look (Target.CheckSignatures; tests give a
	// look that does not answer).
	scan    func(t *target.Target, c *target.ReadCount) error
	poke    chan struct{}
	found   chan guardFind
	quit    chan struct{}
	done    chan struct{}
	stopped bool       // quit is closed
	stop    *guardFind // what was found, once tick or last took it
	// The looks' reads, all of them and those made while the measured
	// window was open (phase), which the kernel's counts of the window
	// include; the runner sets phase as the window opens and closes. A
	// look the guard stopped waiting for may still add to them: mu.
	mu     sync.Mutex
	looks  int
	reads  target.ReadCount
	window target.ReadCount
	phase  atomic.Int32
	// skipped says the last look was not waited for (the run was
	// interrupted), for the result's notes.
	skipped bool
}

// Phases of the measured window, for the looks' reads.
const (
	beforeWindow int32 = iota
	inWindow
	afterWindow
)

// guardFind is what a look found, and when; unanswered: the look did not
// finish within the deadline.
type guardFind struct {
	stop       *result.SafetyStop
	at         time.Time
	unanswered bool
}

// newGuard starts a guard over the writable targets; nil when none is.
// deadline bounds each look (0: hostfs.DefaultDeadline).
func newGuard(targets []*openTarget, deadline time.Duration) *guard {
	if deadline <= 0 {
		deadline = hostfs.DefaultDeadline
	}
	g := &guard{deadline: deadline, scan: (*target.Target).CheckSignatures, poke: make(chan struct{}, 1), found: make(chan guardFind, 1), quit: make(chan struct{}), done: make(chan struct{})}
	for _, ot := range targets {
		if ot.t.Writable {
			g.targets = append(g.targets, ot.t)
		}
	}
	if len(g.targets) == 0 {
		return nil
	}
	go g.loop()
	return g
}

// setPhase says the window opened (inWindow) or closed (afterWindow).
func (g *guard) setPhase(p int32) {
	if g != nil {
		g.phase.Store(p)
	}
}

// summary is what the looks cost, for the result (after last or close).
func (g *guard) summary() *result.SafetyChecks {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return &result.SafetyChecks{Looks: g.looks, ReadOps: g.reads.Ops, ReadBytes: g.reads.Bytes,
		WindowReadOps: g.window.Ops, WindowReadBytes: g.window.Bytes}
}

func (g *guard) loop() {
	defer close(g.done)
	for {
		select {
		case <-g.quit:
			return
		case <-g.poke:
			if f, _ := g.look(g.quit); f != nil {
				g.found <- *f
				return
			}
		}
	}
}

// look runs one look on a goroutine of its own and waits for it until the
// deadline, or until stop is closed (then waited is false). A look that
// did not finish in time is a find: the writes stop.
func (g *guard) look(stop <-chan struct{}) (f *guardFind, waited bool) {
	var current atomic.Pointer[string]
	answer := make(chan *guardFind, 1)
	go func() { answer <- g.check(&current) }()
	t := time.NewTimer(g.deadline)
	defer t.Stop()
	select {
	case f := <-answer:
		return f, true
	case <-stop:
		return nil, false
	case <-t.C:
	}
	select {
	case f := <-answer:
		return f, true
	default:
	}
	path := g.targets[0].Path
	if p := current.Load(); p != nil {
		path = *p
	}
	return &guardFind{unanswered: true, at: time.Now(), stop: &result.SafetyStop{Target: path,
		Reason:   fmt.Sprintf("its look for filesystems and labels did not finish within %s (its storage does not answer)", g.deadline),
		Refusals: []string{string(target.RefuseUnverifiable)}}}, true
}

// check scans every target once (current names the one being scanned).
func (g *guard) check(current *atomic.Pointer[string]) *guardFind {
	var rc, win target.ReadCount
	rc.Each = func(n int) {
		if g.phase.Load() == inWindow {
			win.Ops++
			win.Bytes += uint64(n)
		}
	}
	defer func() {
		g.mu.Lock()
		g.looks++
		g.reads.Ops += rc.Ops
		g.reads.Bytes += rc.Bytes
		g.window.Ops += win.Ops
		g.window.Bytes += win.Bytes
		g.mu.Unlock()
	}()
	for _, t := range g.targets {
		current.Store(&t.Path)
		if err := g.scan(t, &rc); err != nil {
			return &guardFind{stop: safetyStop(t.Path, err), at: time.Now()}
		}
	}
	return nil
}

// safetyStop is what a failed check of path says, for the result.
func safetyStop(path string, err error) *result.SafetyStop {
	s := &result.SafetyStop{Target: path, Reason: err.Error(), Refusals: []string{}}
	var se *target.SafetyError
	if errors.As(err, &se) {
		s.Reason = se.Reason
		for _, id := range se.IDs {
			if !slices.Contains(s.Refusals, string(id)) {
				s.Refusals = append(s.Refusals, string(id))
			}
		}
	}
	return s
}

// request asks for a look at the end of an interval.
func (g *guard) request() {
	if g == nil {
		return
	}
	select {
	case g.poke <- struct{}{}:
	default: // still looking
	}
}

// foundC delivers what a look found (nil guard: never).
func (g *guard) foundC() <-chan guardFind {
	if g == nil {
		return nil
	}
	return g.found
}

// lastGrace is how long the last look is waited for once the run was
// interrupted: a signal ends a run within two seconds, whatever a look
// waits for.
const lastGrace = 500 * time.Millisecond

// last stops the guard once the workers have stopped, and takes one more
// look unless one found something already: a signature that appeared in
// the run's last interval is reported too. It returns what was found. The
// look is waited for until the deadline, or lastGrace once hurry is
// closed (the run was interrupted; then the look is skipped, and said so).
func (g *guard) last(hurry <-chan struct{}) *guardFind {
	if g == nil {
		return nil
	}
	g.close()
	if g.stop != nil {
		return g.stop
	}
	select {
	case f := <-g.found:
		g.stop = &f
		return g.stop
	default:
	}
	stop, finished := make(chan struct{}), make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-hurry:
		case <-finished:
			return
		}
		t := time.NewTimer(lastGrace)
		defer t.Stop()
		select {
		case <-t.C:
			close(stop)
		case <-finished:
		}
	}()
	f, waited := g.look(stop)
	g.stop, g.skipped = f, !waited
	return g.stop
}

// close stops the guard without a last look (a run that ends in error).
func (g *guard) close() {
	if g != nil && !g.stopped {
		g.stopped = true
		close(g.quit)
		<-g.done
	}
}

// stopMessage is the result's message for a safety stop.
func stopMessage(f *guardFind) string {
	if f.unanswered {
		return fmt.Sprintf("stopped writing to %s: %s, so ioprobe can no longer tell whether something appeared on it", f.stop.Target, f.stop.Reason)
	}
	return fmt.Sprintf("stopped writing to %s: %s, which appeared during the run", f.stop.Target, f.stop.Reason)
}
