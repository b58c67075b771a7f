package engine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// firstOffsets builds the workers of a sequential read spec over a 4 MiB
// region and returns where each worker's first I/O lands.
func firstOffsets(t *testing.T, streams string) []int64 {
	t.Helper()
	spec := workload.Spec{ReadPct: 100, RandomPct: 0, Workers: 4, SequentialStreams: streams}.WithDefaults()
	spec.QueueDepth = 1
	region := workload.Region{Len: 4 << 20}
	ws, err := engine.NewWorkers(engine.WorkerSet{Spec: &spec, Ctl: engine.NewControl(0, nil),
		Targets: []engine.Target{{FD: -1, Region: region, Path: "test"}}, Seed: 1})
	require.NoError(t, err)
	t.Cleanup(func() { engine.CloseWorkers(ws) })
	var out []int64
	for _, w := range ws {
		g, err := workload.NewGenerator(&spec, region, w.Cursors[0], 1)
		require.NoError(t, err)
		var op workload.Op
		g.Next(&op)
		out = append(out, op.Offset)
	}
	return out
}

// Iometer's workers spread over the region so that sequential workers
// sharing a target do not read the same blocks; fio's job clones
// (numjobs, offset_increment=0) all start at the region's start, and a
// fio job file keeps that meaning (sequential_streams "direction").
func TestWorkersStartWhereTheirModelSays(t *testing.T) {
	require.Equal(t, []int64{0, 1 << 20, 2 << 20, 3 << 20}, firstOffsets(t, workload.StreamsWorker))
	require.Equal(t, []int64{0, 0, 0, 0}, firstOffsets(t, workload.StreamsDirection))
}
