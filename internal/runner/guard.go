package runner

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

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

// guard looks for signatures on the targets a run writes, on its own
// goroutine, each time tick asks at the end of an interval (skipped when
// the previous look has not finished), and reports the first it finds.
type guard struct {
	targets []*target.Target
	poke    chan struct{}
	found   chan guardFind
	quit    chan struct{}
	done    chan struct{}
	stopped bool       // quit is closed
	stop    *guardFind // what was found, once tick or last took it
	// The looks' reads, all of them and those made while the measured
	// window was open (phase), which the kernel's counts of the window
	// include; the runner sets phase as the window opens and closes.
	looks  int
	reads  target.ReadCount
	window target.ReadCount
	phase  atomic.Int32
}

// Phases of the measured window, for the looks' reads.
const (
	beforeWindow int32 = iota
	inWindow
	afterWindow
)

// guardFind is what a look found, and when.
type guardFind struct {
	stop *result.SafetyStop
	at   time.Time
}

// newGuard starts a guard over the writable targets; nil when none is.
func newGuard(targets []*openTarget) *guard {
	g := &guard{poke: make(chan struct{}, 1), found: make(chan guardFind, 1), quit: make(chan struct{}), done: make(chan struct{})}
	for _, ot := range targets {
		if ot.t.Writable {
			g.targets = append(g.targets, ot.t)
		}
	}
	if len(g.targets) == 0 {
		return nil
	}
	g.reads.Each = func(n int) {
		if g.phase.Load() == inWindow {
			g.window.Ops++
			g.window.Bytes += uint64(n)
		}
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
			if f := g.check(); f != nil {
				g.found <- *f
				return
			}
		}
	}
}

// check scans every target once.
func (g *guard) check() *guardFind {
	g.looks++
	for _, t := range g.targets {
		if err := t.CheckSignatures(&g.reads); err != nil {
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

// last stops the guard once the workers have stopped, and takes one more
// look unless one found something already: a signature that appeared in
// the run's last interval is reported too. It returns what was found.
func (g *guard) last() *guardFind {
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
	default:
		g.stop = g.check()
	}
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
func stopMessage(s *result.SafetyStop) string {
	return fmt.Sprintf("stopped writing to %s: %s, which appeared during the run", s.Target, s.Reason)
}
