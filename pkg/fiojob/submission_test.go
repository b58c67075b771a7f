package fiojob

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// fio's iodepth_batch_* options, as fio's fixup_options reads them, and
// with any of them fio's rules (workload.SubmitFio); none: the adaptive
// rule (the whole queue per call at most, every completion refilled). On a
// sync engine (no commit step in fio) they change nothing.
func TestSubmissionOptions(t *testing.T) {
	const base = "[global]\ntime_based\nruntime=10\nfilename=/dev/x\ndirect=1\nioengine=io_uring\niodepth=32\n[j]\n"
	for _, c := range []struct {
		opts                    string
		batch, min, max         int
		poll                    bool
		engineSync              bool
		wantBatch, wantMin, cap int // Spec.Submission(32)
	}{
		{opts: "", wantBatch: 32, wantMin: 1, cap: 32},
		{opts: "iodepth_batch=8\n", batch: 8, wantBatch: 8, wantMin: 1, cap: 1},
		{opts: "iodepth_batch_submit=0\n", batch: 32, wantBatch: 32, wantMin: 1, cap: 1},
		{opts: "iodepth_batch_submit=64\n", batch: 32, wantBatch: 32, wantMin: 1, cap: 1},
		{opts: "iodepth_batch_complete_min=4\n", min: 4, wantBatch: 1, wantMin: 4, cap: 4},
		{opts: "iodepth_batch_complete=4\niodepth_batch_complete_max=16\n", min: 4, max: 16, wantBatch: 1, wantMin: 4, cap: 16},
		{opts: "iodepth_batch_complete_min=8\niodepth_batch_complete_max=2\n", min: 8, max: 2, wantBatch: 1, wantMin: 8, cap: 8},
		{opts: "iodepth_batch_complete_min=0\n", poll: true, wantBatch: 1, wantMin: 0, cap: 1},
		{opts: "ioengine=psync\niodepth_batch=8\niodepth_batch_complete_min=0\n", engineSync: true, wantBatch: 32, wantMin: 1, cap: 32},
	} {
		pts, err := parse(t, base+c.opts, Options{})
		require.NoError(t, err, c.opts)
		s := pts[0].Jobs[0].Spec
		if c.engineSync {
			require.Equal(t, workload.EngineSync, s.Engine)
		}
		require.Equal(t, c.batch, s.SubmitBatch, c.opts)
		require.Equal(t, c.min, s.CompleteMin, c.opts)
		require.Equal(t, c.max, s.CompleteMax, c.opts)
		require.Equal(t, c.poll, s.CompletePoll, c.opts)
		fio := c.opts != "" && !c.engineSync
		require.Equal(t, !fio, s.Adaptive(), c.opts)
		if fio {
			require.Equal(t, workload.SubmitFio, s.SubmitMode, c.opts)
		}
		b, m, x := s.Submission(32)
		require.Equal(t, []int{c.wantBatch, c.wantMin, c.cap}, []int{b, m, x}, c.opts)
	}
	_, err := parse(t, base+"iodepth_batch=-1\n", Options{})
	require.ErrorContains(t, err, "job.fio:9: [j] iodepth_batch: ")
}
