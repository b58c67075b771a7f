//go:build linux

package enginetest

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// near5Sigma: k of n against probability p within five binomial standard
// deviations (the seed is fixed; five sigma keeps the check honest).
func near5Sigma(t *testing.T, k, n int, p float64, msg string, args ...any) {
	t.Helper()
	sd := math.Sqrt(float64(n) * p * (1 - p))
	require.InDelta(t, p*float64(n), float64(k), 5*sd+1, append([]any{msg}, args...)...)
}

// testLines: a three-line specification at QD 4 gives each line its
// share of the I/Os and, within the line, its own read and random shares;
// each I/O has the line's size, and the lanes' per-line counters agree
// with the trace.
func testLines(t *testing.T, f Factory, path string) {
	fd := openDirect(t, path, unix.O_RDWR)
	lines := []workload.Line{
		{Bytes: 4 * kib, Share: 20, ReadPct: 100, RandomPct: 100},
		{Bytes: 8 * kib, Share: 50, ReadPct: 30, RandomPct: 50, Align: 16 * kib},
		{Bytes: 64 * kib, Share: 30, ReadPct: 0, RandomPct: 0},
	}
	h := &harness{t: t, eng: f(), limit: 20_000,
		spec:    workload.Spec{Lines: lines, QueueDepth: 4, Workers: 1},
		targets: []engine.Target{{FD: fd, Region: workload.Region{Len: 32 * mib}}}}
	ws := h.run()
	n := len(h.trace)
	var ops, reads, random [3]int
	for _, tr := range h.trace {
		require.Equal(t, tr.len, tr.res, describe(tr))
		require.Equal(t, lines[tr.line].Bytes, tr.len, describe(tr))
		ops[tr.line]++
		if !tr.write {
			reads[tr.line]++
		}
		if tr.random {
			random[tr.line]++
			if tr.line == 1 {
				require.Zero(t, tr.off%(16*kib), "line 2's alignment: %s", describe(tr))
			}
		}
	}
	var counted [3]uint64
	for _, w := range ws {
		for _, l := range w.Lanes() {
			require.Len(t, l.Lines, 3)
			for i := range l.Lines {
				counted[i] += l.Lines[i].ReadOps.Load() + l.Lines[i].WriteOps.Load()
			}
		}
	}
	for i, l := range lines {
		near5Sigma(t, ops[i], n, float64(l.Share)/100, "line %d share", i+1)
		near5Sigma(t, reads[i], ops[i], float64(l.ReadPct)/100, "line %d reads", i+1)
		near5Sigma(t, random[i], ops[i], float64(l.RandomPct)/100, "line %d random", i+1)
		require.Equal(t, uint64(ops[i]), counted[i], "line %d: lane counters against the trace", i+1)
	}
}

// testBursts: Iometer's delay and burst at one outstanding I/O. Line 1
// (burst 3, delay 2 ms) comes in bursts of exactly three I/Os whose first
// is issued no earlier than 2 ms after the I/O before it completed; line
// 2 (no delay) never waits. Order of events only: "no earlier than" is
// what the delay guarantees, never a speed.
func testBursts(t *testing.T, f Factory, path string) {
	fd := openDirect(t, path, unix.O_RDONLY)
	const delayMs = 2
	lines := []workload.Line{
		{Bytes: 4 * kib, Share: 50, ReadPct: 100, RandomPct: 100, DelayMs: delayMs, Burst: 3},
		{Bytes: 4 * kib, Share: 50, ReadPct: 100, RandomPct: 100},
	}
	h := &harness{t: t, eng: f(), limit: 300,
		spec:    workload.Spec{Lines: lines, QueueDepth: 1, Workers: 1},
		targets: []engine.Target{{FD: fd, Region: workload.Region{Len: 8 * mib}}}}
	h.run()
	require.GreaterOrEqual(t, len(h.issues), h.limit)
	var seq strings.Builder
	bursts := 0
	for i, is := range h.issues {
		switch {
		case is.line == 1:
			require.Zero(t, is.delay, "I/O %d: line 2 has no delay", i)
			seq.WriteByte('b')
		case is.delay > 0:
			require.Equal(t, int64(delayMs*1e6), is.delay)
			seq.WriteByte('A')
			bursts++
			if i > 0 {
				prev := h.trace[i-1] // QD 1: I/O i-1 completed before I/O i
				require.GreaterOrEqual(t, is.at-prev.at, int64(delayMs*1e6), "I/O %d starts a burst: it waits the delay after I/O %d completed", i, i-1)
			}
		default:
			seq.WriteByte('a')
		}
	}
	// Bursts of line 1 are A followed by two a's (the last may be cut by
	// the stop); line 2 is one b at a time.
	require.Regexp(t, `^(Aaa|b)*(A|Aa)?$`, seq.String())
	require.Greater(t, bursts, 10)
}
