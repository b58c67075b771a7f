package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/target"
	"github.com/ioprobe/ioprobe/internal/testloop"
	"github.com/ioprobe/ioprobe/internal/testwait"
)

// What the device's figures hold besides the workload's requests on the
// target: ioprobe's own safety checks (left out), and a partition's
// flushes (its whole disk's).

// TestDeviceFiguresLeaveOutOwnChecks: in a write run, the safety checks'
// reads at the end of every interval reach the device. The device
// latency times the workload's requests only: its count is the kernel's
// requests in the window less ioprobe's own check reads, it has no
// reads at all (the run wrote only), and the kernel's reads it took out
// are the checks' (summary.device.own_read_ops). So "above the device"
// compares ioprobe's writes with the device's writes, and is not
// negative where the device's write time is below ioprobe's.
//
// The run is paced and its intervals short, so that the checks' 64 KiB
// reads are as many as the writes: mixed in, they would move the
// device's mean and count by far more than the tolerance.
func TestDeviceFiguresLeaveOutOwnChecks(t *testing.T) {
	dev := testloop.Device(t, 64<<20)
	dir := t.TempDir()
	o := ioprobe(t, dir, "run", "--target", dev, "--allow-destructive", "--read-pct", "0", "--qd", "1", "--rate-iops", "200",
		"--interval", "200ms", "--duration", "3s", "--ramp", "0s", "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)
	r := decodeResult(t, o.stdout)
	d, checks := r.Summary.Device, r.SafetyChecks
	require.NotNil(t, d)
	require.NotNil(t, checks)
	require.NotNil(t, d.Latency, "root, BTF: the programs load (%s)", d.LatencyUnavailable)
	require.Empty(t, d.OwnInLatency, "Linux 6.5 or later takes the mark")
	l := d.Latency
	own := checks.WindowReadOps
	t.Logf("kernel: %d reads (+%d own), %d writes; checks read %d times in the window; device timed %d reads, %d writes",
		d.ReadOps, d.OwnReadOps, d.WriteOps, own, l.Read.Count, l.Write.Count)
	require.Greater(t, own, r.Summary.WriteOps/4, "the checks read often enough to show")

	kernel := d.ReadOps + d.OwnReadOps + d.WriteOps // the kernel's requests in the window
	require.InDelta(t, float64(kernel-own), float64(l.Count), float64(kernel)/100+2,
		"the device's count is the kernel's requests less ioprobe's own check reads")
	require.Zero(t, l.Read.Count, "a write run's device reads are ioprobe's checks: counted apart")
	require.InDelta(t, float64(own), float64(d.OwnReadOps), 2, "the marked requests are the checks' reads (a look may straddle the window's edge)")
	require.LessOrEqual(t, d.ReadOps, uint64(2), "the kernel's reads less ioprobe's own: none")

	// The device's write time is below ioprobe's: what lies above the
	// device is not negative, in the result and in its text.
	require.Less(t, l.Write.MeanSeconds, r.Summary.WriteLatency.MeanSeconds)
	require.LessOrEqual(t, l.MeanSeconds, r.Summary.Latency.MeanSeconds, "the device's mean is of the same writes as ioprobe's")
	file := filepath.Join(dir, "run.json")
	require.NoError(t, os.WriteFile(file, []byte(o.stdout), 0o644))
	rep := ioprobe(t, dir, "report", file)
	require.Equal(t, 0, rep.code, rep.stderr)
	line := lineWith(t, rep.stdout, "above the device:")
	require.NotContains(t, line, "-", "above the device is not negative: %s", line)
	require.Contains(t, lineWith(t, rep.stdout, "own reads"), "safety checks")
}

// TestPartitionFlushesAreTheDisks: fdatasync on a partition of a loop
// device flushes the whole disk: a flush request carries the disk, and
// the kernel counts it on the disk alone. The run's flush figures are the
// disk's flushes in the window, and the result says they were counted on
// the disk.
func TestPartitionFlushesAreTheDisks(t *testing.T) {
	disk, part := partitioned(t, 64<<20, 32)
	name := filepath.Base(disk)

	before, err := target.ReadDiskStats("", name)
	require.NoError(t, err)
	o := ioprobe(t, t.TempDir(), "run", "--target", part, "--allow-destructive", "--read-pct", "0", "--fdatasync", "1",
		"--qd", "1", "--duration", "2s", "--ramp", "0s", "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)
	after, err := target.ReadDiskStats("", name)
	require.NoError(t, err)
	r := decodeResult(t, o.stdout)
	d := r.Summary.Device
	require.NotNil(t, d)
	require.NotNil(t, r.Summary.Sync)
	disk0 := after.Sub(before).FlushOps // the disk's flushes over the whole run
	t.Logf("%d fdatasyncs; the run's flushes %d (timed %d); the disk's over the whole run %d",
		r.Summary.Sync.Ops, d.FlushOps, d.Latency.Flush.Count, disk0)
	require.Equal(t, []string{filepath.Base(part)}, d.Devices)
	require.Equal(t, []string{name}, d.FlushDevices, "counted on the whole disk, and said so")
	require.Positive(t, d.FlushOps)
	// Only the run flushed the disk; a worker's last flushes may land
	// after the window closed, never before it opened (no ramp-up).
	require.LessOrEqual(t, d.FlushOps, disk0)
	require.InDelta(t, float64(disk0), float64(d.FlushOps), float64(disk0)/100+2, "the window's flushes are the disk's")
	require.NotNil(t, d.Latency)
	require.InDelta(t, float64(d.FlushOps), float64(d.Latency.Flush.Count), float64(d.FlushOps)/100+1, "the programs time the disk's flushes for the partition")
}

// TestCheckEtcdOnAPartitionCountsTheDisksFlushes: check etcd in a
// directory on ext4 on a partition: the kernel's flushes are the whole
// disk's (none is ever counted on the partition), the check's flush
// figures too, and it says on which disk they were counted.
func TestCheckEtcdOnAPartitionCountsTheDisksFlushes(t *testing.T) {
	needTools(t, "mkfs.ext4", "mount", "umount")
	disk, part := partitioned(t, 256<<20, 224) // the check needs two 64 MB WAL segments
	runTool(t, "mkfs.ext4", "-q", "-F", part)
	dir := t.TempDir()
	runTool(t, "mount", part, dir)
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	name := filepath.Base(disk)
	before, err := target.ReadDiskStats("", name)
	require.NoError(t, err)
	o := ioprobe(t, t.TempDir(), "check", "etcd", "--target", dir, "--duration", "2s", "--backend=false", "--output", "json")
	require.Contains(t, []int{0, 2, 3}, o.code, o.stderr) // the verdict is this machine's
	after, err := target.ReadDiskStats("", name)
	require.NoError(t, err)
	require.NotEmpty(t, o.stdout, o.stderr)
	r := checkDoc(t, o.stdout)
	require.NotNil(t, r.Kernel)
	k := r.Kernel
	disk0 := after.Sub(before).FlushOps
	t.Logf("%d fdatasyncs; the check's flushes %d on %s (%s); the disk's over the whole check %d", k.Fdatasyncs, k.Flushes, k.Device, k.FlushDevice, disk0)
	require.Equal(t, filepath.Base(part), k.Device)
	require.Equal(t, name, k.FlushDevice, "counted on the whole disk, and said so")
	require.Positive(t, k.Flushes)
	require.LessOrEqual(t, k.Flushes, disk0)
	require.InDelta(t, float64(disk0), float64(k.Flushes), float64(disk0)/100+2, "the check's flushes are the disk's")
}

// partitioned attaches a loop device of size bytes with one partition
// of partMiB at its start, and returns the disk's and the partition's
// device paths.
func partitioned(t *testing.T, size int64, partMiB int) (disk, part string) {
	t.Helper()
	needTools(t, "losetup", "sfdisk", "partx")
	img := imageFile(t, size)
	runIn(t, fmt.Sprintf("label: dos\n,%dMiB,L\n", partMiB), "sfdisk", "-q", img)
	disk = attach(t, img, "--partscan")
	part = disk + "p1"
	if _, err := os.Stat(part); err != nil {
		runTool(t, "partx", "-a", disk) // no udev here to make the nodes
	}
	require.Eventually(t, func() bool { _, err := os.Stat(part); return err == nil }, testwait.Patience, 10*time.Millisecond)
	// A partition added by hand outlives the detach: it goes first
	// (cleanups run last first).
	t.Cleanup(func() {
		if out, err := exec.Command("partx", "-d", disk).CombinedOutput(); err != nil {
			t.Errorf("partx -d %s: %v: %s", disk, err, out)
		}
	})
	return disk, part
}

// lineWith is the first line of s that contains sub.
func lineWith(t *testing.T, s, sub string) string {
	t.Helper()
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	require.Failf(t, "no line", "no line with %q in:\n%s", sub, s)
	return ""
}
