//go:build linux

package enginetest

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/target"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// testSubmission: by default an engine hands each sequential I/O to the
// kernel on its own (the sync engine always; the ring by its adaptive rule,
// as fio's iodepth_batch_submit=1), so 4 KiB sequential reads reach a
// block device as 4 KiB requests, (next to) none merged, and the queue
// stays at its depth (fio reaps one completion, then submits one I/O).
// With a batch of the queue depth, an engine that batches (uring) submits
// several I/Os per call, and the block layer merges the contiguous ones it
// was handed together.
func testSubmission(t *testing.T, f Factory, path string) {
	const qd = 32 // the and fio's comparison depth
	fd := openDirect(t, path, unix.O_RDONLY)
	if p, err := exec.LookPath("udevadm"); err == nil {
		_ = exec.Command(p, "settle").Run() // udev's probe of a new loop device reads it too
	}
	spec := workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 4 * kib, Weight: 1}}, ReadPct: 100, RandomPct: 0, QueueDepth: qd, Workers: 1}
	run := func(spec workload.Spec) (result.Depth, devStat, int) {
		h := &harness{t: t, eng: f(), limit: 4000, spec: spec, targets: []engine.Target{{FD: fd, Region: workload.Region{Len: 32 * mib}}}}
		before := readDevStat(t, path)
		ws := h.run()
		after := readDevStat(t, path)
		var d result.Depth
		ws[0].Depth.Add(&d)
		return d, after.sub(before), len(h.trace)
	}
	sum := func(a [result.DepthBuckets]uint64) (n uint64) {
		for _, v := range a {
			n += v
		}
		return n
	}

	d, dev, n := run(spec)
	require.GreaterOrEqual(t, sum(d.Level), uint64(n), "every I/O traced was counted as submitted")
	require.Equal(t, sum(d.Level), d.Submit[1], "one submission call per I/O, none with more than one: %+v", d)
	require.Equal(t, sum(d.Level), sum(d.Submit), "no empty submission: %+v", d)
	require.Greater(t, d.Level[result.LevelBucket(qd)], sum(d.Level)*9/10, "the queue stays at its depth of %d: %+v", qd, d)
	require.Positive(t, sum(d.Complete))
	if dev.ok {
		t.Logf("%s, default submission, sequential 4 KiB reads at QD %d: %d I/Os, the device saw %d reads, %d merged, %d bytes", f().Name(), qd, n, dev.reads, dev.readMerges, dev.readBytes)
		// Nothing plugs I/Os of one call together; a loaded machine may
		// still merge some that wait in the device's queue (fio's alike:
		// 1.1-1.2% of reads at load 9-17 here). Plugged, nearly every one of
		// the contiguous reads of one call merges: a tenth tells the two apart on any
		// machine.
		const tol = 0.1
		require.LessOrEqual(t, float64(dev.readMerges), tol*float64(n), "the block layer merged reads submitted one at a time: %+v", dev)
		require.InEpsilon(t, 4*kib, float64(dev.readBytes)/float64(dev.reads), tol, "requests of 4 KiB: %+v", dev)
	}

	if f().Name() != workload.EngineURing {
		return
	}
	spec.SubmitBatch, spec.CompleteMax = qd, qd
	d, dev, _ = run(spec)
	require.Positive(t, d.Submit[2]+d.Submit[3]+d.Submit[4], "some submission calls carried 5 to 32 I/Os: %+v", d)
	require.Less(t, sum(d.Submit), sum(d.Level), "fewer calls than I/Os: %+v", d)
	if dev.ok {
		t.Logf("%s, --batch-submit %d: the device saw %d reads, %d merged", f().Name(), qd, dev.reads, dev.readMerges)
		require.Positive(t, dev.readMerges, "contiguous reads submitted together were merged")
	}
}

// devStat is a block device's reads: completed, merged and bytes; ok is
// false for a target that is not a block device.
type devStat struct {
	ok                           bool
	reads, readMerges, readBytes uint64
}

func (s devStat) sub(o devStat) devStat {
	return devStat{ok: s.ok && o.ok, reads: s.reads - o.reads, readMerges: s.readMerges - o.readMerges, readBytes: s.readBytes - o.readBytes}
}

// readDevStat reads the kernel's counters of path when it is a block
// device.
func readDevStat(t *testing.T, path string) devStat {
	t.Helper()
	if !isBlock(t, path) {
		return devStat{}
	}
	st, err := target.ReadDiskStats("", filepath.Base(path))
	require.NoError(t, err)
	return devStat{ok: true, reads: st.ReadOps, readMerges: st.ReadMerges, readBytes: st.ReadBytes()}
}
