package test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testloop"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// kernelFlushes reads the completed flush requests of a block device from
// /sys/block/DEV/stat (field 16; kernels 5.5 and later), the reference
// nobody on the team wrote. It skips on an older kernel.
func kernelFlushes(t *testing.T, dev string) uint64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "stat"))
	require.NoError(t, err)
	f := strings.Fields(string(b))
	if len(f) < 17 {
		t.Skipf("%s: the kernel's stat has %d fields: no flush count before Linux 5.5", dev, len(f)) //hygiene:skip the kernel's release
	}
	n, err := strconv.ParseUint(f[15], 10, 64)
	require.NoError(t, err)
	return n
}

// TestFdatasyncReachesTheDevice: a 4 KiB sequential write with
// --fdatasync 1 on a loop device (direct I/O over a file; the loop queue
// has a write cache, so every fdatasync becomes one flush request, and no
// one else flushes that device). The kernel's flush count over the whole
// process must cover every fdatasync ioprobe reports, and ioprobe's own
// device figure (read around the measured window) must match its count
// within 2%. Both engines: sync calls fdatasync, uring IORING_OP_FSYNC.
// The run is 200 writes, not a time: at a load of 27 a 1 s run made 27
// fdatasyncs, and the one flush more the kernel counts over the process
// (the device's close) was then 4%, past the 2% a count makes room for.
func TestFdatasyncReachesTheDevice(t *testing.T) {
	dev := testloop.Device(t, 64<<20)
	for _, engine := range []string{"sync", "uring"} {
		t.Run(engine, func(t *testing.T) {
			before := kernelFlushes(t, dev)
			o := ioprobe(t, t.TempDir(), "run", "--target", dev, "--allow-destructive", "--engine", engine,
				"--bs", "4k", "--read-pct", "0", "--random-pct", "0", "--qd", "1", "--fdatasync", "1",
				"--number-ios", "200", "--ramp", "0s", "--output", "json")
			after := kernelFlushes(t, dev)
			if engine == "uring" && o.code == 2 && strings.Contains(o.stderr, "cannot run here") {
				t.Skip("io_uring is not available here: " + o.stderr) //hygiene:skip the kernel's io_uring
			}
			require.Equal(t, 0, o.code, o.stderr)
			r := decodeResult(t, o.stdout)
			require.Equal(t, workload.EngineName(engine), r.Workload.Engine)
			require.Equal(t, 1, r.Workload.Fdatasync)
			require.NotNil(t, r.Summary.Sync, "a run that flushes has a sync section")
			flushes := r.Summary.Sync.Ops
			require.Positive(t, flushes)
			require.EqualValues(t, 200, r.Summary.WriteOps, "the budget, every write in the window (no ramp-up)")
			// One flush after every write: the last write of the window
			// may still await its flush when counting stops.
			require.InDelta(t, float64(r.Summary.WriteOps), float64(flushes), 1, "one fdatasync per write")
			require.Positive(t, r.Summary.Sync.Latency.Percentiles["99"])
			require.GreaterOrEqual(t, r.Summary.Sync.Latency.MaxSeconds, r.Summary.Sync.Latency.Percentiles["99"])

			// The kernel, read by this test around the whole process.
			kernel := after - before
			require.GreaterOrEqual(t, kernel, flushes, "every fdatasync reached the device as a flush")
			require.InEpsilon(t, float64(flushes), float64(kernel), 0.02, "kernel %d, ioprobe %d", kernel, flushes)
			// The same count in ioprobe's own device figure.
			require.NotNil(t, r.Summary.Device)
			require.InEpsilon(t, float64(flushes), float64(r.Summary.Device.FlushOps), 0.02)
		})
	}
}

// TestDsyncWritesFlushTheDevice: --sync dsync opens the target O_DSYNC.
// The loop device's queue has a volatile write cache and no FUA, so the
// block layer follows every O_DSYNC write with a flush: the kernel's flush
// count must follow the writes, though ioprobe issues no flush call (no
// sync section). Without --sync the same run makes no flush at all.
// Each run is 100 writes, not a time: at a load of 27, 500 ms of O_DSYNC
// writes (each waiting on a flush of the loop's file) completed none.
func TestDsyncWritesFlushTheDevice(t *testing.T) {
	dev := testloop.Device(t, 64<<20)
	run := func(extra ...string) (writes, kernel uint64, hasSync bool) {
		before := kernelFlushes(t, dev)
		args := append([]string{"run", "--target", dev, "--allow-destructive", "--engine", "sync",
			"--bs", "4k", "--read-pct", "0", "--random-pct", "0", "--qd", "1",
			"--number-ios", "100", "--ramp", "0s", "--output", "json"}, extra...)
		o := ioprobe(t, t.TempDir(), args...)
		require.Equal(t, 0, o.code, o.stderr)
		r := decodeResult(t, o.stdout)
		return r.Summary.WriteOps, kernelFlushes(t, dev) - before, r.Summary.Sync != nil
	}
	writes, kernel, hasSync := run("--sync", "dsync")
	require.False(t, hasSync, "O_DSYNC makes no flush call")
	require.Positive(t, writes)
	require.EqualValues(t, 100, writes, "the budget")
	require.GreaterOrEqual(t, kernel, writes, "each O_DSYNC write was followed by a flush")

	writes, kernel, _ = run()
	require.Positive(t, writes)
	require.LessOrEqual(t, kernel, uint64(1), "plain O_DIRECT writes flush nothing (at most the device's close)")
}

// TestBadFlushFlags: bad durable-write flags are refused with one line
// and exit 2, before anything is created.
func TestBadFlushFlags(t *testing.T) {
	dir := t.TempDir()
	tgt := filepath.Join(dir, "probe.dat")
	for _, args := range [][]string{
		{"--fsync", "-1"},
		{"--fdatasync", "x"},
		{"--fsync", "2", "--fdatasync", "1"},
		{"--sync", "always"},
	} {
		o := ioprobe(t, dir, append([]string{"run", "--target", tgt, "--read-pct", "0", "--duration", "1s"}, args...)...)
		require.Equal(t, 2, o.code, "%v: %s", args, o.stderr)
		require.Equal(t, 1, strings.Count(strings.TrimSpace(o.stderr), "\n")+1, "one line: %q", o.stderr)
		require.NoFileExists(t, tgt)
	}
}
