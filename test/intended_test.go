package test

import (
	"math"
	"strings"
	"testing"

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
// known 2 s, injected by strace, and checks that the latency from the
// intended start counts every I/O that came due during the stall as late,
// each by how late it really went, while the service time shows at most
// the one I/O the stall held.
//
// The stall is strace's delay on the worker's K-th io_uring_enter. strace
// counts `when=` per thread; the uring engine's worker is locked to one OS
// thread, so exactly one call is delayed. (The sync engine's pread64 would
// do too, but its goroutines move between OS threads: in a 10 s run at
// 20 IOPS one thread made 136 of the reads, two others 46 and 7, so
// `when=K` stalls once per thread that reaches K, at moments nobody picks.)
// The stalled call either carries an I/O (which then takes >= 2 s of
// service time) or is a paced wait with nothing in flight (no I/O is slow):
// either way the loop issues nothing for 2 s.
//
// What must hold, whatever this machine's speed: the slots that fell in
// the stall come due all at once when it ends, so the I/O of the slot m
// intervals into the stall is about 2 s - m*50 ms late. Counting the I/Os
// late by at least X therefore gives (2 s - X) * 20 + 1 I/Os, for every X:
// a staircase down from the 40 slots of the stall, not one late I/O. Edges:
// the stall starts anywhere within an interval (-1), a bucket is 0.8% wide
// (-1), and the catch-up I/Os take their own service time, each making the
// next one later, and a hiccup of the machine during the catch-up makes
// every later one later still (+1 to +3 under strace on a loaded 2-core VM,
// +5 allowed). Nothing is later than the stall itself. The rate is kept:
// after the stall every slot is caught up, so the run issues rate x time
// I/Os.
func TestStallCountsEveryLateIO(t *testing.T) {
	const (
		rate  = 20.0
		stall = 2.0 // seconds, injected
	)
	dir := t.TempDir()
	tgt := prepared(t, dir)
	probe := ioprobe(t, dir, "run", "--engine", "uring", "--target", tgt, "--duration", "100ms", "--ramp", "0s", "--output", "json")
	if probe.code != 0 {
		t.Skipf("the uring engine cannot run here: %s", strings.TrimSpace(probe.stderr)) //hygiene:skip the kernel's io_uring
	}
	// The 40th io_uring_enter comes within the first 40 I/Os (2 s): the
	// stall is over well before the 6 s run ends.
	o := underStrace(t, dir, []string{"io_uring_enter:delay_enter=2s:when=40"},
		"run", "--engine", "uring", "--target", tgt, "--bs", "4k", "--read-pct", "100", "--random-pct", "100",
		"--qd", "1", "--rate-iops", "20", "--duration", "6s", "--ramp", "0s", "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)
	r := decodeResult(t, o.stdout)
	require.Equal(t, result.StatusOK, r.Status)
	require.Equal(t, workload.EngineURing, r.Workload.Engine)
	service, intended := r.Histogram.Read, r.Histogram.Intended
	require.NotNil(t, intended, "a paced run has its latency from the intended start")
	require.NotNil(t, r.Summary.IntendedLatency)
	require.Equal(t, r.Summary.Ops, intended.Count(), "one intended latency per I/O")

	t.Logf("I/Os late by >= 0.1 s: %v; service times >= 0.1 s: %v", lateValues(intended, 0.1), lateValues(service, 0.1))
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

	// No slot was dropped: the run kept its rate through the stall.
	slots := r.Summary.ElapsedSeconds * rate
	require.InDelta(t, slots, float64(r.Summary.Ops), 2, "rate x measured time I/Os")
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
