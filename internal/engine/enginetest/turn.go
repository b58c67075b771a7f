//go:build linux

package enginetest

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// testTargetsInTurn: with Spec.FilesInTurn a worker takes its targets in
// turn as fio's file_service_type=roundrobin:N does — N I/Os to one, then
// N to the next — its queue depth over all of them (fio's iodepth is the
// job's): at QD 1 the I/Os go t0, t0, t1, t1, t2, t2, t0 …; at QD 4 never
// more than 4 are in flight on the worker's targets together, and each
// target has its share of the budget. Each worker's region starts at its
// offset (Spec.Offset + k × OffsetIncrement), and with CloneFiles each
// worker runs on its own targets only.
func testTargetsInTurn(t *testing.T, f Factory, path string) {
	regions := []workload.Region{{Len: 4 * mib}, {Start: 8 * mib, Len: 4 * mib}, {Start: 16 * mib, Len: 4 * mib}}
	targets := func() []engine.Target {
		var out []engine.Target
		for i, r := range regions {
			out = append(out, engine.Target{FD: openDirect(t, path, unix.O_RDONLY), Region: r, Index: i})
		}
		return out
	}
	read4k := []workload.BlockSize{{Bytes: 4 * kib, Weight: 1}}

	t.Run("order", func(t *testing.T) {
		h := &harness{t: t, eng: f(), targets: targets(),
			spec: workload.Spec{BlockSizes: read4k, ReadPct: 100, RandomPct: 100, QueueDepth: 1, Workers: 1,
				FilesInTurn: 2, IOCount: 60, Loops: 1}}
		h.run()
		require.Len(t, h.trace, 60)
		for i, tr := range h.trace {
			require.Equal(t, (i/2)%3, tr.target, "I/O %d: two to each target in turn", i)
			r := regions[tr.target]
			require.True(t, tr.off >= r.Start && tr.off+tr.len <= r.Start+r.Len, describe(tr))
		}
	})

	t.Run("one queue over the targets", func(t *testing.T) {
		const qd = 4
		// depth: as in QueueDepthKept, reaching qd is made the engine's
		// doing, not the scheduler's (harness.awaitDepth).
		h := &harness{t: t, eng: f(), targets: targets(), depth: qd,
			spec: workload.Spec{BlockSizes: read4k, ReadPct: 100, RandomPct: 100, QueueDepth: qd, Workers: 2,
				FilesInTurn: 1, IOCount: 3000, Loops: 1}}
		h.run()
		require.False(t, h.overIssued)
		perTarget := map[laneKey]int{}
		for _, tr := range h.trace {
			perTarget[laneKey{tr.worker, tr.target}]++
		}
		for w := 0; w < 2; w++ {
			require.Equal(t, qd, h.maxInFlight[laneKey{w, allTargets}], "worker %d: its queue depth over all its targets", w)
			for tg := range regions {
				require.Equal(t, 1000, perTarget[laneKey{w, tg}], "worker %d target %d: a third of its I/Os", w, tg)
			}
		}
	})

	t.Run("offsets and own targets", func(t *testing.T) {
		// Three workers each with its own two targets, each worker's
		// 1 MiB region 2 MiB further in than the previous one's.
		onePassOnOwnTargets(t, f, path, workload.Spec{BlockSizes: read4k, ReadPct: 100, RandomPct: 0, QueueDepth: 2, Workers: 3,
			RegionBytes: 1 * mib, Offset: 4 * mib, OffsetIncrement: 2 * mib, CloneFiles: true, FilesInTurn: 1, Loops: 1})
	})

	t.Run("one pass each when paced", func(t *testing.T) {
		// The same under a rate: a lane of the sync engine waits for its
		// pacer between choosing its target and booking the I/O against
		// the worker's budget, so its lanes book their I/Os in another
		// order than they chose targets, and at the budget's end a
		// target whose turn it was lost its last I/O to the next one
		// unless the choice and the booking are one step. Four workers,
		// each its own two targets and a 64 KiB pass on each at QD 4.
		onePassOnOwnTargets(t, f, path, workload.Spec{BlockSizes: read4k, ReadPct: 100, RandomPct: 0, QueueDepth: 4, Workers: 4,
			RegionBytes: 64 * kib, Offset: 4 * mib, OffsetIncrement: mib, CloneFiles: true, FilesInTurn: 1, Loops: 1, RateIOPS: 8000})
	})

	// With a size mix the targets' passes end after different numbers of
	// I/Os: fio's file whose pass is done (at its region's end, the last
	// transfers drawn among the sizes that fit) is skipped in the
	// rotation, and the others go on to the end of theirs; the next loop
	// starts every file at its start again. So each worker reads each of
	// its targets once over per loop, whatever sizes each drew: neither
	// wrapped (one block twice) nor short (its tail unread). fio's own
	// stream model (a position per direction, each clone from its
	// region's start), as an imported fio job runs.
	mix := []workload.BlockSize{{Bytes: 4 * kib, Weight: 1}, {Bytes: 64 * kib, Weight: 1}}
	for _, tc := range []struct {
		name        string
		loops, qd   int
		every       int
		region, inc int64
	}{
		{"one pass each with a size mix", 1, 2, 1, mib, 2 * mib},
		{"a pass each per loop with a size mix", 2, 3, 2, 512 * kib, mib},
	} {
		t.Run(tc.name, func(t *testing.T) {
			onePassOnOwnTargets(t, f, path, workload.Spec{BlockSizes: mix, ReadPct: 100, RandomPct: 0, QueueDepth: tc.qd, Workers: 2,
				RegionBytes: tc.region, Offset: 4 * mib, OffsetIncrement: tc.inc, CloneFiles: true, FilesInTurn: tc.every, Loops: tc.loops,
				SequentialStreams: workload.StreamsDirection})
		})
	}
	t.Run("one pass each at random with the map and a size mix", func(t *testing.T) {
		// fio's random map: a file is done when its map is full (the
		// I/Os that meet drawn blocks shortened to the free ones), and
		// waits for the loop's end like a sequential one.
		onePassOnOwnTargets(t, f, path, workload.Spec{BlockSizes: mix, ReadPct: 100, RandomPct: 100, RandomMap: true, QueueDepth: 1, Workers: 2,
			RegionBytes: 512 * kib, Offset: 4 * mib, OffsetIncrement: mib, CloneFiles: true, FilesInTurn: 1, Loops: 2,
			SequentialStreams: workload.StreamsDirection})
	})
}

// onePassOnOwnTargets runs spec (sequential reads, CloneFiles) with two
// targets for each worker and requires spec.Loops passes of each
// (requirePasses).
func onePassOnOwnTargets(t *testing.T, f Factory, path string, spec workload.Spec) {
	t.Helper()
	var ts []engine.Target
	for i := 0; i < 2*spec.Workers; i++ {
		ts = append(ts, engine.Target{FD: openDirect(t, path, unix.O_RDONLY), Region: workload.Region{Len: 16 * mib}, Index: i})
	}
	h := &harness{t: t, eng: f(), targets: ts, spec: spec}
	h.run()
	requirePasses(t, h, spec.Workers, 2, spec.Loops, spec.WorkerRegion, spec.RegionBytes)
}

// requirePasses: each of the workers read each of its own targets (the
// trace's targets 0 to targets-1 of the worker) loops times over: every
// 4 KiB block of its region [start(w), start(w)+size) loops times, and
// nothing else (fio's loops over nrfiles in turn: one pass of each file
// per loop, whatever its transfer sizes).
func requirePasses(t *testing.T, h *harness, workers, targets, loops int, start func(w int) int64, size int64) {
	t.Helper()
	type block struct {
		laneKey
		off int64
	}
	bytes := map[laneKey]int64{}
	blocks := map[block]int{}
	for _, tr := range h.trace {
		// Worker k's lane index is its own target's: 0 to targets-1.
		s := start(tr.worker)
		require.True(t, tr.off >= s && tr.off+tr.len <= s+size, "worker %d: %s outside [%d, %d)", tr.worker, describe(tr), s, s+size)
		require.Equal(t, tr.len, tr.res, describe(tr))
		k := laneKey{tr.worker, tr.target}
		bytes[k] += tr.len
		for off := tr.off; off < tr.off+tr.len; off += 4 * kib {
			blocks[block{k, off}]++
		}
	}
	for w := 0; w < workers; w++ {
		for tg := 0; tg < targets; tg++ {
			k := laneKey{w, tg}
			require.Equal(t, int64(loops)*size, bytes[k], "worker %d, its target %d: %d pass(es) of %d KiB", w, tg, loops, size/kib)
			for off := start(w); off < start(w)+size; off += 4 * kib {
				require.Equal(t, loops, blocks[block{k, off}], "worker %d, its target %d: block at %d read once a pass", w, tg, off)
			}
		}
	}
}
