package uring

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// fio's iodepth_batch_complete_min and _max as the ring runs them: with
// its queue full the loop waits for completeMin completions and refills at
// most completeMax slots before it submits again; polling waits for none.
// The queue figures say so: every release in the bucket of at most
// completeMax, and the queue's depth at submission never below qd minus
// what one release refills.
func TestCompletionBatches(t *testing.T) {
	requireUring(t)
	path := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.WriteFile(path, make([]byte, 4<<20), 0o600))
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECT, 0)
	if err == unix.EINVAL {
		t.Skip("the temp directory does not take O_DIRECT") //hygiene:skip the filesystem under the temp directory
	}
	require.NoError(t, err)
	defer unix.Close(fd)
	for _, c := range []struct {
		name       string
		min, max   int
		poll, fio  bool // fio: fio's rules with none of the sizes set (fio's defaults)
		wantLevels int  // Level buckets in use at most
	}{
		{name: "fio's default", fio: true, wantLevels: 1},
		{name: "min 8", min: 8, wantLevels: 2},
		{name: "min 2 max 16", min: 2, max: 16, wantLevels: result.DepthBuckets},
		{name: "poll", poll: true, wantLevels: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			const qd = 16
			spec := workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 4096, Weight: 1}}, ReadPct: 100, RandomPct: 100,
				QueueDepth: qd, Workers: 1, CompleteMin: c.min, CompleteMax: c.max, CompletePoll: c.poll, Duration: 1}.WithDefaults()
			if c.fio {
				spec.SubmitMode = workload.SubmitFio
			}
			require.NoError(t, spec.Validate())
			ctl := engine.NewControl(0, nil)
			start := make(chan struct{})
			ws, err := engine.NewWorkers(engine.WorkerSet{Spec: &spec, Ctl: ctl, Start: start,
				Targets: []engine.Target{{FD: fd, Region: workload.Region{Len: 4 << 20}}}})
			require.NoError(t, err)
			defer engine.CloseWorkers(ws)
			var done atomic.Int64
			ws[0].Trace = func(_ *engine.Lane, op *engine.IO, res int64) {
				if res != op.Len {
					t.Errorf("I/O failed: %d", res)
				}
				// The start of the run fills the queue from empty, the end
				// drains it: count the steady state between. Switched here,
				// at the completions themselves: a goroutine watching the
				// count could be off the CPU for all 2,000 of them on a
				// loaded machine (make test at 19:23: nothing measured).
				switch done.Add(1) {
				case 500:
					ctl.SetMeasuring(true)
				case 2500:
					ctl.SetMeasuring(false)
				case 3000:
					ctl.Stop()
				}
			}
			close(start)
			require.NoError(t, New().Run(ws[0]))
			var d result.Depth
			ws[0].Depth.Add(&d)
			most := max(1, c.max, c.min)
			var used, levels int
			for i, n := range d.Complete {
				if n > 0 {
					used++
					require.LessOrEqual(t, i, result.BatchBucket(most), "releases of at most %d: %+v", most, d)
				}
			}
			require.Positive(t, used, "%+v", d)
			for i, n := range d.Level {
				if n > 0 {
					levels++
					require.GreaterOrEqual(t, i, result.LevelBucket(qd-most), "depth at submission: %+v", d)
				}
			}
			require.LessOrEqual(t, levels, c.wantLevels, "%+v", d)
		})
	}
}
