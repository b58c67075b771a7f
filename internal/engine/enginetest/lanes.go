//go:build linux

package enginetest

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// testLanesOnOneTarget: a worker's outstanding I/Os on one target (the
// sync engine's lanes, the ring's slots) share its sequential position
// and its budget, and a budgeted run still reads the region exactly once
// a loop, as fio's loops over a file do: the I/Os booked against the
// budget are the first ones of the stream, whatever order the lanes drew
// and booked them in. Were drawing the offset and booking the I/O two
// steps, a lane that drew the pass's last block and was delayed before
// booking it (preempted; paced lanes wake together and draw at once)
// could lose the budget's last I/O to a lane that drew after it, past
// the wrap: the region's first block read once more and its last never.
//
// Each worker has its own target (CloneFiles) and a region of 18 blocks
// of 4 KiB, at QD 4: the budget's end falls inside a wake of the lanes,
// 8 workers give 8 budget ends per run.
func testLanesOnOneTarget(t *testing.T, f Factory, path string) {
	read4k := []workload.BlockSize{{Bytes: 4 * kib, Weight: 1}}
	const workers, region = 8, 18 * 4 * kib
	for _, tc := range []struct {
		name  string
		spec  workload.Spec
		loops int
	}{
		// Loops × the region's bytes (fio's loops over size; --io-size).
		{"a pass a loop when paced", workload.Spec{Loops: 2, RateIOPS: 16000}, 2},
		// number_ios × loops I/Os (--number-ios), a pass's worth each.
		{"a pass a loop by number_ios when paced", workload.Spec{Loops: 3, IOCount: region / (4 * kib), RateIOPS: 16000}, 3},
		{"a pass a loop unpaced", workload.Spec{Loops: 2}, 2},
		// Buffered, each loop starts over (the cache dropped at its
		// start, as fio's invalidate): the loop is the stream's, not a
		// lane's share of it.
		{"a pass a loop buffered over six loops", workload.Spec{Loops: 6, Buffered: true}, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			spec.BlockSizes, spec.ReadPct, spec.RandomPct, spec.QueueDepth, spec.Workers = read4k, 100, 0, 4, workers
			spec.RegionBytes, spec.Offset, spec.OffsetIncrement, spec.CloneFiles = region, 4*mib, mib, true
			var ts []engine.Target
			for i := 0; i < workers; i++ {
				ts = append(ts, engine.Target{FD: openDirect(t, path, unix.O_RDONLY), Region: workload.Region{Len: 16 * mib}, Index: i})
			}
			h := &harness{t: t, eng: f(), targets: ts, spec: spec}
			h.run()
			requirePasses(t, h, workers, 1, tc.loops, spec.WorkerRegion, region)
		})
	}
}
