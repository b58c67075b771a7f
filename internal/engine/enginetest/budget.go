//go:build linux

package enginetest

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// testBudgetCount: with a stop-after budget of number_ios × loops I/Os
// each worker issues exactly that many, sees every one complete, and its
// engine returns without being told to stop.
func testBudgetCount(t *testing.T, f Factory, path string) {
	fd := openDirect(t, path, unix.O_RDONLY)
	h := &harness{t: t, eng: f(),
		spec: workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 4 * kib, Weight: 1}}, ReadPct: 100, RandomPct: 100,
			QueueDepth: 4, Workers: 2, IOCount: 500, Loops: 3},
		targets: []engine.Target{{FD: fd, Region: workload.Region{Len: 8 * mib}}, {FD: fd, Region: workload.Region{Start: 8 * mib, Len: 8 * mib}}}}
	h.run()
	require.False(t, h.ctl.Stopped(), "the engines returned on their own")
	require.False(t, h.overIssued)
	require.Len(t, h.issues, len(h.trace), "every issued I/O completed")
	perWorker := map[int]int{}
	for _, tr := range h.trace {
		require.Equal(t, tr.len, tr.res, describe(tr))
		perWorker[tr.worker]++
	}
	require.Equal(t, map[int]int{0: 1500, 1: 1500}, perWorker)
}

// testBudgetBytes: without io_count the budget is bytes, by default one
// pass over the worker's regions per loop: a worker issues while fewer
// bytes than that went before, so its total passes the budget by less
// than its largest transfer.
func testBudgetBytes(t *testing.T, f Factory, path string) {
	fd := openDirect(t, path, unix.O_RDWR)
	bs, err := workload.ParseBlockSizes("4k:70,64k:30")
	require.NoError(t, err)
	const region = 4 * mib
	h := &harness{t: t, eng: f(),
		spec:    workload.Spec{BlockSizes: bs, ReadPct: 50, RandomPct: 100, QueueDepth: 8, Workers: 1, Loops: 2},
		targets: []engine.Target{{FD: fd, Region: workload.Region{Len: region}}}}
	h.run()
	require.False(t, h.ctl.Stopped())
	require.Len(t, h.issues, len(h.trace))
	var total int64
	for _, tr := range h.trace {
		require.Equal(t, tr.len, tr.res, describe(tr))
		total += tr.len
	}
	require.GreaterOrEqual(t, total, int64(2*region))
	require.Less(t, total, int64(2*region+64*kib))

	// An explicit io_bytes replaces the region.
	h2 := &harness{t: t, eng: f(),
		spec: workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 16 * kib, Weight: 1}}, ReadPct: 100, RandomPct: 0,
			QueueDepth: 2, Workers: 1, IOBytes: 1 * mib, Loops: 1},
		targets: []engine.Target{{FD: fd, Region: workload.Region{Len: region}}}}
	h2.run()
	require.Len(t, h2.trace, 64, "1 MiB in 16 KiB I/Os")
}
