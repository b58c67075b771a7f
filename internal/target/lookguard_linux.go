package target

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Most of what the holder look reads in /proc answers from the kernel's
// memory at once. Not all: reading /proc/PID/maps or /proc/PID/cmdline
// takes the process's memory-map lock, which a process stuck in a page
// fault on a filesystem that does not answer (a hung FUSE daemon, an NFS
// server gone) can hold, or queue a writer on, for as long as that lasts.
// A write's checks must not hang with it. So each look runs on a
// goroutine of its own and is waited for no longer than its budget: a
// look that does not answer refuses the write (hidden-processes), naming
// the process and what of it did not answer; and while it stays stuck
// (its thread waits in the kernel, killable, until the lock frees), later
// looks do not pile up behind it: they refuse at once, saying so.

// lookProgress is where a look is, for when it does not answer.
type lookProgress struct {
	pid      atomic.Int64
	what     atomic.Value // string: "its maps"
	started  time.Time
	finished bool // under stuckMu
}

func (p *lookProgress) at(pid int, what string) {
	if p != nil {
		p.pid.Store(int64(pid))
		p.what.Store(what)
	}
}

func (p *lookProgress) String() string {
	what, _ := p.what.Load().(string)
	if what == "" {
		what = "/proc"
	}
	return fmt.Sprintf("pid %d (%s)", p.pid.Load(), what)
}

var (
	stuckMu sync.Mutex
	stuck   *lookProgress // a look that outlived its budget and has not returned
)

// guardedLook runs look, giving it a progress to report to, and waits no
// longer than budget for it.
func guardedLook[T any](budget time.Duration, look func(*lookProgress) T, failed func(string) T) T {
	stuckMu.Lock()
	if s := stuck; s != nil {
		stuckMu.Unlock()
		return failed(fmt.Sprintf("an earlier look at every process has waited %s on %s, which does not answer", time.Since(s.started).Round(time.Second), s))
	}
	stuckMu.Unlock()
	p := &lookProgress{started: time.Now()}
	done := make(chan T, 1)
	go func() {
		r := look(p)
		stuckMu.Lock()
		p.finished = true
		if stuck == p {
			stuck = nil
		}
		stuckMu.Unlock()
		done <- r
	}()
	t := time.NewTimer(budget)
	defer t.Stop()
	select {
	case r := <-done:
		return r
	case <-t.C:
	}
	stuckMu.Lock()
	if p.finished {
		stuckMu.Unlock()
		return <-done
	}
	stuck = p
	stuckMu.Unlock()
	return failed(fmt.Sprintf("looking at every process did not finish within %s: %s did not answer", budget, p))
}
