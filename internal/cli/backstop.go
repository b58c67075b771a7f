package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ioprobe/ioprobe/internal/hostfs"
	"github.com/ioprobe/ioprobe/internal/runner"
)

// signalGrace is how long a command has, once SIGINT or SIGTERM came, to
// end on its own: a run stops its workers, takes its last look (0.5 s at
// most when interrupted) and prints its partial result in well under a
// second. Past it, the backstop ends the process, so that a signal ends
// ioprobe within two seconds whatever it waits for.
const signalGrace = 1500 * time.Millisecond

// undoGrace bounds how long the backstop, before it ends the process,
// waits for what the command changed on the machine to be put back (a
// device's I/O scheduler: the kernel's switch waits for the device's
// in-flight I/O, milliseconds when it answers).
const undoGrace = 10 * time.Second

// backstop waits for ctx (the signal) and then for done (the command
// ended); if done has not come signalGrace later, or a second signal
// comes first, it says what was still awaited, puts back what undo holds
// (undoGrace at most, or until one more signal), and calls exit. A
// command slow to stop, on a loaded machine, must not leave a device
// switched because the backstop ended it before its own restore.
func backstop(ctx context.Context, done <-chan struct{}, stderr io.Writer, undo *undoList, exit func()) {
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	delays := runDelays()
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(again)
	t := time.NewTimer(signalGrace)
	defer t.Stop()
	how := fmt.Sprintf("still running %s after the signal", signalGrace)
	select {
	case <-done:
		return
	case <-again:
		how = "a second signal"
	case <-t.C:
	}
	fmt.Fprintf(stderr, "ioprobe: interrupted: exiting on %s without waiting for %s\n", how, awaited(longestWait(delays, runDelays())))
	undo.run(undoGrace, again, stderr)
	exit()
}

// undoList is what a command changed on the machine and puts back itself
// when it ends (a device's I/O scheduler switched for a fio job): the
// backstop, ending the process before the command's own end, runs it
// first. Each undo runs once whoever calls it (the command's own way out
// or the backstop), so both may.
type undoList struct {
	mu    sync.Mutex
	seq   int
	items map[int]undoItem
}

// undoItem is one thing to put back: do puts it back; left says what
// stays changed while do has not returned ("the I/O scheduler of loop0
// switched from none to kyber").
type undoItem struct {
	left func() string
	do   func()
}

// add registers an undo until the returned func removes it (once the
// command has put it back itself). A nil list registers nothing.
func (u *undoList) add(left func() string, do func()) (remove func()) {
	if u == nil {
		return func() {}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.items == nil {
		u.items = map[int]undoItem{}
	}
	u.seq++
	id := u.seq
	u.items[id] = undoItem{left: left, do: do}
	return func() {
		u.mu.Lock()
		defer u.mu.Unlock()
		delete(u.items, id)
	}
}

// run runs the undos, in the order added, and waits for them for bound
// at most, or until stop delivers (one more signal); what is not yet put
// back then is said, each on a line, and left.
func (u *undoList) run(bound time.Duration, stop <-chan os.Signal, stderr io.Writer) {
	if u == nil {
		return
	}
	u.mu.Lock()
	ids := make([]int, 0, len(u.items))
	for id := range u.items {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	items := make([]undoItem, len(ids))
	for i, id := range ids {
		items[i] = u.items[id]
	}
	u.mu.Unlock()
	if len(items) == 0 {
		return
	}
	var mu sync.Mutex
	next := 0 // the first item not yet done
	finished := make(chan struct{})
	go func() {
		for i, it := range items {
			it.do()
			mu.Lock()
			next = i + 1
			mu.Unlock()
		}
		close(finished)
	}()
	t := time.NewTimer(bound)
	defer t.Stop()
	how := fmt.Sprintf("after waiting %s for it", bound)
	select {
	case <-finished:
		return
	case <-t.C:
	case <-stop:
		how = "on one more signal"
	}
	mu.Lock()
	from := next
	mu.Unlock()
	for _, it := range items[from:] {
		if left := it.left(); left != "" {
			fmt.Fprintf(stderr, "ioprobe: interrupted: exiting %s without having put back %s: left so\n", how, left)
		}
	}
}

// awaited names what the process was still waiting for: the calls to
// the host's filesystems that have not answered, then the steps of a run
// in progress (the innermost first: its workers' stop is its own I/O in
// the kernel; a BPF load cannot be cancelled), else that it was in none.
// cpuWait, how long a thread of it waited for a CPU since the signal,
// is said when it is a good part of the grace: a process short of CPU is
// slow at every step.
func awaited(cpuWait time.Duration) string {
	var names []string
	for _, p := range hostfs.Shared().Pending() {
		names = append(names, fmt.Sprintf("%s (no answer for %s)", p.What, p.For.Round(time.Second)))
	}
	for _, s := range runner.Busy() {
		names = append(names, fmt.Sprintf("%s (for %s)", s.What, s.For.Round(10*time.Millisecond)))
	}
	if len(names) > 3 {
		names = append(names[:3], fmt.Sprintf("%d more", len(names)-3))
	}
	what := strings.Join(names, ", ")
	if what == "" {
		what = "the command to end (it was in no step of a run: writing its output, or exiting)"
	}
	if cpuWait >= signalGrace/10 {
		what += fmt.Sprintf("; a thread of it waited %s of that time for a CPU (the machine is loaded)", cpuWait.Round(10*time.Millisecond))
	}
	return what
}

// runDelays is how long each thread of the process has waited for a CPU
// so far (the kernel's schedstat run_delay), by thread id; empty when
// the kernel does not keep it.
func runDelays() map[string]time.Duration {
	out := map[string]time.Duration{}
	tids, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return out
	}
	for _, e := range tids {
		b, err := os.ReadFile("/proc/self/task/" + e.Name() + "/schedstat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			continue
		}
		if ns, err := strconv.ParseInt(f[1], 10, 64); err == nil {
			out[e.Name()] = time.Duration(ns)
		}
	}
	return out
}

// longestWait is the most any thread waited for a CPU between two
// readings of runDelays (a thread born since counts from 0).
func longestWait(before, after map[string]time.Duration) time.Duration {
	var most time.Duration
	for tid, d := range after {
		most = max(most, d-before[tid])
	}
	return most
}
