package uring

import (
	"os"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/iobuf"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// ramFile is a file of random data on tmpfs opened with O_DIRECT: no
// disk time, so the ring's rules are exercised at the rate of the CPU.
func ramFile(t *testing.T, size int) int {
	t.Helper()
	f, err := os.CreateTemp("/dev/shm", "ioprobe-adaptive-")
	if err != nil {
		t.Skipf("no tmpfs at /dev/shm: %v", err) //hygiene:skip the machine's tmpfs, not something make test installs
	}
	t.Cleanup(func() { _ = os.Remove(f.Name()) })
	data := make([]byte, size)
	iobuf.FillRandom(data, 1)
	_, err = f.Write(data)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	fd, err := unix.Open(f.Name(), unix.O_RDONLY|unix.O_DIRECT, 0)
	if err == unix.EINVAL {
		t.Skip("tmpfs here does not take O_DIRECT (Linux before 6.6)") //hygiene:skip the kernel's tmpfs
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = unix.Close(fd) })
	return fd
}

// call is one io_uring_enter that submitted I/Os: them, in the order they
// were prepared, and how many completions the ring had reaped since the
// call before (before preparing the first of them).
type call struct {
	ios    []workload.Op
	reaped int
}

// runCalls runs spec (read only) on fd until total I/Os have completed,
// and returns every call that submitted I/Os, and the queue figures
// counted between the 10th and the 90th per cent of the completions.
func runCalls(t *testing.T, fd int, size int64, spec workload.Spec, total int64) ([]call, result.Depth) {
	t.Helper()
	spec.Workers, spec.Duration = 1, 1
	if len(spec.BlockSizes) == 0 {
		spec.BlockSizes = []workload.BlockSize{{Bytes: 4096, Weight: 1}}
	}
	spec = spec.WithDefaults()
	require.NoError(t, spec.Validate())
	ctl := engine.NewControl(0, nil)
	start := make(chan struct{})
	ws, err := engine.NewWorkers(engine.WorkerSet{Spec: &spec, Ctl: ctl, Start: start,
		Targets: []engine.Target{{FD: fd, Region: workload.Region{Len: size}}}})
	require.NoError(t, err)
	defer engine.CloseWorkers(ws)
	// The hooks all run on the ring's goroutine, one at a time.
	var calls []call
	var open call
	reaped := 0
	ws[0].Issue = func(_ *engine.Lane, op *engine.IO) {
		if len(open.ios) == 0 {
			open.reaped, reaped = reaped, 0
		}
		open.ios = append(open.ios, op.Op)
	}
	ws[0].Commit = func() { calls, open = append(calls, open), call{} }
	var done atomic.Int64
	ws[0].Trace = func(_ *engine.Lane, op *engine.IO, res int64) {
		if res != op.Len {
			t.Errorf("I/O failed: %d", res)
		}
		reaped++
		switch done.Add(1) {
		case total / 10:
			ctl.SetMeasuring(true)
		case total * 9 / 10:
			ctl.SetMeasuring(false)
		case total:
			ctl.Stop()
		}
	}
	close(start)
	require.NoError(t, New().Run(ws[0]))
	require.Empty(t, open.ios, "every I/O issued went with a call")
	var d result.Depth
	ws[0].Depth.Add(&d)
	return calls, d
}

// touch says whether two I/Os are contiguous (either way round).
func touch(a, b workload.Op) bool {
	return a.Offset+a.Len == b.Offset || b.Offset+b.Len == a.Offset
}

// requireApart: no call carried two I/Os that touch.
func requireApart(t *testing.T, calls []call) {
	t.Helper()
	for i, c := range calls {
		for j := range c.ios {
			for k := range j {
				require.False(t, touch(c.ios[j], c.ios[k]), "call %d carried two contiguous I/Os: %+v", i, c.ios)
			}
		}
	}
}

// The adaptive rule on random reads that cannot touch (4 KiB at 8 KiB
// alignment): every completion the ring reaped is refilled, and all of
// them go to the kernel in one io_uring_enter, whatever the device's
// timing made of them; fio's rules, asked for, keep one I/O per call and
// one completion refilled per pass; sequential reads go one per call,
// with the queue at its depth, as fio's.
func TestAdaptiveBatchesWhatCannotMerge(t *testing.T) {
	requireUring(t)
	const qd, size = 16, 16 << 20
	fd := ramFile(t, size)
	random := workload.Spec{ReadPct: 100, RandomPct: 100, QueueDepth: qd, Align: 8192}

	calls, d := runCalls(t, fd, size, random, 20000)
	requireApart(t, calls)
	require.Len(t, calls[0].ios, qd, "the first call fills the queue")
	ios, several := qd, 0
	for i, c := range calls[1:] {
		require.Len(t, c.ios, c.reaped, "call %d: every completion reaped since the call before refilled, in one call", i+1)
		ios += len(c.ios)
		if len(c.ios) > 1 {
			several++
		}
	}
	require.Positive(t, several, "some passes reaped several completions (else this test shows nothing)")
	t.Logf("adaptive: %d calls for %d I/Os; queue figures %+v", len(calls), ios, d)

	fio := random
	fio.SubmitMode = workload.SubmitFio
	calls, d = runCalls(t, fd, size, fio, 5000)
	for i, c := range calls {
		require.Len(t, c.ios, 1, "fio's iodepth_batch_submit=1: call %d", i)
	}
	require.Equal(t, d.Complete[result.BatchBucket(1)], sumOf(d.Complete), "fio's iodepth_batch_complete_max=1: %+v", d)

	calls, d = runCalls(t, fd, size, workload.Spec{ReadPct: 100, RandomPct: 0, QueueDepth: qd}, 5000)
	for i, c := range calls {
		require.Len(t, c.ios, 1, "sequential: call %d", i)
	}
	// (Where the stream wraps to the region's start, its first I/O
	// touches nothing: the pass after it refills every completed slot.)
	require.GreaterOrEqual(t, d.Level[result.LevelBucket(qd)], sumOf(d.Level)*99/100, "submitted with the queue at %d, as fio's: %+v", qd, d)
}

func sumOf(a [result.DepthBuckets]uint64) (n uint64) {
	for _, v := range a {
		n += v
	}
	return n
}

// A mix of sequential and random I/O: no call carries two I/Os that
// touch, an I/O that touches its target's last one of the calls before
// starts its call, and the random ones between still go together.
func TestAdaptiveSplitsAtContiguousIO(t *testing.T) {
	requireUring(t)
	const qd, size = 16, 16 << 20
	fd := ramFile(t, size)
	calls, _ := runCalls(t, fd, size, workload.Spec{ReadPct: 100, RandomPct: 60, QueueDepth: qd}, 20000)
	requireApart(t, calls)
	var last workload.Op
	several := 0
	for i, c := range calls {
		for j, op := range c.ios {
			if j > 0 && i > 0 {
				require.False(t, touch(op, last), "call %d: I/O %d touches the last of the calls before (%+v) but did not start its call: %+v", i, j, last, c.ios)
			}
		}
		if len(c.ios) > 1 {
			several++
		}
		last = c.ios[len(c.ios)-1]
	}
	require.Positive(t, several, "random I/Os batched between the sequential ones")
}
