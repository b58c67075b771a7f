package test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// atLeast counts the values of h of at least v seconds (whole buckets: a
// value within a bucket's width, under 1%, of v may count either way).
func atLeast(h *result.Histogram, v float64) uint64 {
	var n uint64
	h.Buckets(func(lo, _, c uint64) {
		if float64(lo) >= v*1e9 {
			n += c
		}
	})
	return n
}

// TestStallCountsEveryLateIO stalls the I/O of a run at 20 IOPS for a
// known 2 s and checks that the latency from the intended start counts
// every I/O that came due during the stall as late, each by how late it
// really went, while the service time shows at most the one I/O the stall
// held.
//
// The stall is the whole process stopped (SIGSTOP, then SIGCONT 2 s
// later) once its worker's ring has completed a few I/Os: nothing of it
// runs meanwhile, on whatever threads. (It was "once its ring exists and
// it has run for a second", but the ring is set up before the BPF
// programs load, the safety recheck and the rest of the preparation: on
// a loaded machine these took more than that second, and the stall fell
// before the measured window, where no result can show it. The worker
// submits nothing before the window opens, so its ring's completions are
// evidence of the running measurement.) (It was strace's delay on the
// worker's K-th io_uring_enter, but strace counts `when=` per thread, and
// a paced ring's goroutine is not locked to one: it stalled once per
// thread that reached K.) An I/O in flight when it stops is reaped after
// it resumes (then it shows >= 2 s of service time); otherwise no I/O is
// slow: either way the loop issues nothing for 2 s.
//
// What must hold, whatever this machine's speed: the slots that fell in
// the stall come due all at once when it ends, so the I/O of the slot m
// intervals into the stall is about 2 s - m*50 ms late. Counting the I/Os
// late by at least X therefore gives (2 s - X) * 20 + 1 I/Os, for every X:
// a staircase down from the 40 slots of the stall, not one late I/O. Edges:
// the stall starts anywhere within an interval (-1), a bucket is 0.8% wide
// (-1), and the catch-up I/Os take their own service time, each making the
// next one later, and a hiccup of the machine during the catch-up (or the
// stop lasting a little longer than 2 s) makes every later one later still
// (+1 to +3 on a loaded 2-core VM, +5 allowed). Nothing is later than the
// stall itself. The rate is kept: after the stall every slot is caught up,
// so the run issues rate x time I/Os.
func TestStallCountsEveryLateIO(t *testing.T) {
	const (
		rate  = 20.0
		stall = 2.0 // seconds, the process stopped
	)
	dir := t.TempDir()
	tgt := prepared(t, dir)
	probe := ioprobe(t, dir, "run", "--engine", "uring", "--target", tgt, "--duration", "100ms", "--ramp", "0s", "--output", "json")
	if probe.code != 0 {
		t.Skipf("the uring engine cannot run here: %s", strings.TrimSpace(probe.stderr)) //hygiene:skip the kernel's io_uring
	}
	b := startBackground(t, "run", "--engine", "uring", "--target", tgt, "--bs", "4k", "--read-pct", "100", "--random-pct", "100",
		"--qd", "1", "--rate-iops", "20", "--duration", "8s", "--ramp", "0s", "--output", "json")
	pid := b.cmd.Process.Pid
	// Into the measured run (no ramp): the assertions hold wherever in it
	// the stall falls. The probe ring of the engine check completes one
	// NOP and is gone; 3 completions are the worker's own I/Os.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.GreaterOrEqual(c, ringCompletions(pid), uint64(3), "ioprobe %d's ring has completed I/Os of the run", pid)
	}, time.Minute, 20*time.Millisecond)
	require.NoError(t, b.cmd.Process.Signal(syscall.SIGSTOP))
	before := ringCompletions(pid)
	time.Sleep(stall * time.Second) //hygiene:sleep the stall itself: the process is stopped for it
	require.NoError(t, b.cmd.Process.Signal(syscall.SIGCONT))
	o := outcome{code: b.exitCode(t), stdout: b.out.String(), stderr: b.stderr()}
	require.Equal(t, 0, o.code, o.stderr)
	r := decodeResult(t, o.stdout)
	require.Equal(t, result.StatusOK, r.Status)
	require.Equal(t, workload.EngineURing, r.Workload.Engine)
	service, intended := r.Histogram.Read, r.Histogram.Intended
	require.NotNil(t, intended, "a paced run has its latency from the intended start")
	require.NotNil(t, r.Summary.IntendedLatency)
	require.Equal(t, r.Summary.Ops, intended.Count(), "one intended latency per I/O")

	t.Logf("I/Os late by >= 0.1 s: %v; service times >= 0.1 s: %v", lateValues(intended, 0.1), lateValues(service, 0.1))
	t.Logf("stopped after %d completed I/Os of %d", before, r.Summary.Ops)
	// The stall ended inside the window: the slots it held came due after
	// it and were measured (else the staircase cannot be there to see).
	require.GreaterOrEqual(t, r.Summary.Ops, before+uint64(stall*rate), "the stall fell inside the measured window")
	// The service time: at most the one I/O the stalled call carried.
	slow := atLeast(service, stall/4)
	require.LessOrEqual(t, slow, uint64(1), "service time shows one stalled I/O at most")
	if slow == 1 {
		require.Equal(t, uint64(1), atLeast(service, 0.99*stall), "the stalled I/O took the whole stall (within a bucket)")
	}

	// The latency from the intended start: the staircase.
	for _, x := range []float64{stall / 4, stall / 2, 3 * stall / 4} {
		want := (stall-x)*rate + 1 // the slots m = 0 .. (stall - x) * rate
		got := float64(atLeast(intended, x))
		require.GreaterOrEqual(t, got, want-2, "I/Os late by >= %gs", x)
		require.LessOrEqual(t, got, want+5, "I/Os late by >= %gs", x)
	}
	require.Zero(t, atLeast(intended, 1.25*stall), "no I/O later than the stall explains")
	require.GreaterOrEqual(t, intended.Max(), uint64((stall-1/rate)*1e9), "the first slot of the stall waited for all of it")
	require.GreaterOrEqual(t, intended.Max(), service.Max(), "never less than the service time")

	// No slot was dropped: the run kept its rate through the stall. A
	// pacer that skipped the stall's slots would end 40 I/Os short; one
	// that kept them ends with its I/Os of the last moments still due or
	// in flight, as many as the machine's hiccups then made it late (at
	// the same +5 as the staircase: make test at load ~10 ended a run
	// 2.08 slots short). Never ahead of its slots.
	slots := r.Summary.ElapsedSeconds * rate
	require.LessOrEqual(t, float64(r.Summary.Ops), slots+1, "never ahead of rate x measured time")
	require.GreaterOrEqual(t, float64(r.Summary.Ops), slots-5, "rate x measured time I/Os, the stall's %g slots kept", stall*rate)
}

// ringCompletions is the most completions any io_uring of process pid
// has posted (the CqTail its fdinfo shows; 0 without a ring): the kernel's
// count of the run's I/Os, seen from outside.
func ringCompletions(pid int) uint64 {
	var most uint64
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err != nil || l != "anon_inode:[io_uring]" {
			continue
		}
		info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, filepath.Base(fd)))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(line, "CqTail:"); ok {
				if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32); err == nil {
					most = max(most, n)
				}
			}
		}
	}
	return most
}

// lateValues lists the values of h of at least v seconds, largest first
// (each its bucket's lower bound), for the log of a failed test.
func lateValues(h *result.Histogram, v float64) []float64 {
	var out []float64
	h.Buckets(func(lo, _, c uint64) {
		for ; c > 0 && float64(lo) >= v*1e9; c-- {
			out = append([]float64{math.Round(float64(lo)/1e6) / 1e3}, out...)
		}
	})
	return out
}
