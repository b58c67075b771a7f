package test

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/blkid/handmade"
	"github.com/ioprobe/ioprobe/internal/testloop"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// Races (issue 20, item 6): data made while ioprobe waits (--start-at) or
// runs. The whole safety check runs again just before the first write,
// and signatures are looked for at the end of every interval; a run that
// finds one stops writing (exit 1, result.safety_stop). The mid-run cases
// write sequentially at a capped rate from offset 0, so the test knows
// where ioprobe's writes are when the data appears (past the region the
// test checksums, and far from the end whatever the machine's speed):
// what the test checks is that ioprobe sees it, stops, and writes nothing
// over it after.

// regionSum is the SHA-256 of n bytes at off of path (negative off: from
// the end).
func regionSum(t *testing.T, path string, off, n int64) string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	if off < 0 {
		end, err := f.Seek(0, io.SeekEnd)
		require.NoError(t, err)
		off += end
	}
	h := sha256.New()
	_, err = io.Copy(h, io.NewSectionReader(f, off, n))
	require.NoError(t, err)
	return hex.EncodeToString(h.Sum(nil))
}

// saidPrepared waits until ioprobe says it is prepared and waits for
// --start-at.
func saidPrepared(t *testing.T, b *background) {
	t.Helper()
	whileAlive(t, b, "ioprobe never said it was prepared", func(c *assert.CollectT) {
		assert.Contains(c, b.stderr(), "ioprobe: prepared; the ramp-up starts at ")
	})
}

// writesSeen waits until the kernel counted writes on dev (ioprobe's).
func writesSeen(t *testing.T, b *background, dev string) {
	t.Helper()
	stat := filepath.Join("/sys/block", filepath.Base(dev), "stat")
	first := -1
	whileAlive(t, b, "ioprobe never wrote to "+dev, func(c *assert.CollectT) {
		p, err := os.ReadFile(stat)
		require.NoError(c, err)
		n, err := strconv.Atoi(strings.Fields(string(p))[4])
		require.NoError(c, err)
		if first < 0 {
			first = n
		}
		assert.Greater(c, n, first+10)
	})
}

// refusedBeforeWriting checks a run that refused at its last check before
// the first write: exit 2, one line, nothing measured.
func refusedBeforeWriting(t *testing.T, b *background, target, reason string) {
	t.Helper()
	require.Equal(t, 2, b.exitCode(t), b.errb.String())
	require.Empty(t, b.out.String())
	lines := strings.Split(strings.TrimSpace(b.errb.String()), "\n")
	require.Len(t, lines, 2, b.errb.String())
	require.True(t, strings.HasPrefix(lines[0], "ioprobe: prepared; "), lines[0])
	lines = lines[1:]
	require.True(t, strings.HasPrefix(lines[0], "ioprobe: refusing to write to "+target+": "), lines[0])
	require.Contains(t, lines[0], reason)
	require.NotContains(t, lines[0], "overrides this")
}

// stoppedWriting checks a run that stopped because a signature appeared:
// exit 1, the result's safety_stop and message say so.
func stoppedWriting(t *testing.T, b *background, target, reason string) *result.Result {
	t.Helper()
	require.Equal(t, 1, b.exitCode(t), b.errb.String())
	r := decodeResult(t, b.out.String())
	require.Equal(t, result.StatusErrors, r.Status)
	require.NotNil(t, r.SafetyStop, r.Message)
	require.Equal(t, target, r.SafetyStop.Target)
	require.Equal(t, []string{"signature"}, r.SafetyStop.Refusals)
	require.Contains(t, r.SafetyStop.Reason, reason)
	require.Positive(t, r.SafetyStop.AfterSeconds)
	require.True(t, strings.HasPrefix(r.Message, "stopped writing to "+target+": "), r.Message)
	require.Contains(t, r.Message, reason)
	require.Contains(t, b.errb.String(), "stopped writing to "+target)
	require.Positive(t, r.Summary.WriteOps)
	return r
}

// duringWait runs prepare-then-wait cases: ioprobe is started with
// --start-at a few seconds ahead, ready says when it has opened its
// target, and make makes the data. On a machine so slow that the data was
// not made before the start, the case starts over with a longer wait
// (the premise, not ioprobe, failed): no timing threshold decides.
func duringWait(t *testing.T, start func(at time.Time) (*background, func()), make func()) *background {
	t.Helper()
	for wait := 3 * time.Second; ; wait *= 2 {
		at := time.Now().Add(wait)
		b, ready := start(at)
		ready()
		make()
		if time.Now().Before(at) || wait > 2*time.Minute {
			return b
		}
		_ = b.cmd.Process.Kill()
		b.exitCode(t)
		t.Logf("the data was made after the start (%s ahead): again with a longer wait", wait)
	}
}

func startAtArgs(at time.Time, target string, extra ...string) []string {
	return append([]string{"run", "--target", target, "--read-pct", "0", "--duration", "1s", "--ramp", "0s",
		"--start-at", at.UTC().Format(time.RFC3339Nano), "--output", "json"}, extra...)
}

// A filesystem made through a second loop device over the same file
// while ioprobe waits for --start-at is refused before the first write.
func TestFilesystemMadeDuringStartAtWait(t *testing.T) {
	needTools(t, "losetup", "mkfs.ext4")
	var backing, dev, second, after string
	b := duringWait(t, func(at time.Time) (*background, func()) {
		backing = filepath.Join(t.TempDir(), "disk.img")
		dev = testloop.DeviceAt(t, backing, 64<<20)
		second = testloop.File(t, backing)
		settle()
		b := startBackground(t, startAtArgs(at, dev, "--allow-destructive")...)
		return b, func() { saidPrepared(t, b) }
	}, func() {
		run(t, "mkfs.ext4", "-q", "-F", second)
		after = sha256Of(t, backing, 0)
	})
	refusedBeforeWriting(t, b, dev, "ext4")
	require.Equal(t, after, sha256Of(t, backing, 0), "written after the filesystem was made")
}

// An ioprobe file that a filesystem is made on (through a loop device
// attached over it) while a run waits for --start-at: refused before the
// first write, the file as mkfs left it.
func TestOwnFileChangedDuringStartAtWait(t *testing.T) {
	needTools(t, "losetup", "mkfs.ext4")
	dir := t.TempDir()
	var path, after string
	b := duringWait(t, func(at time.Time) (*background, func()) {
		path = filepath.Join(t.TempDir(), "own.dat")
		o := ioprobe(t, dir, "run", "--target", path, "--size", "64MiB", "--duration", "100ms", "--ramp", "0s")
		require.Equal(t, 0, o.code, o.stderr)
		b := startBackground(t, startAtArgs(at, path)...)
		return b, func() { saidPrepared(t, b) }
	}, func() {
		loop := testloop.File(t, path)
		settle()
		run(t, "mkfs.ext4", "-q", "-F", loop)
		after = sha256Of(t, path, 0)
	})
	refusedBeforeWriting(t, b, path, "something else changed it after ioprobe checked it, before ioprobe wrote anything")
	require.Equal(t, after, sha256Of(t, path, 0))
}

// midRunArgs is a sequential write run at a capped rate, looked at every
// 200 ms, for up to 30 s: at 250 writes of 4 KiB a second it covers 1 MiB
// a second from offset 0, so in 30 s it never reaches the last 32 MiB of
// a 64 MiB target whatever the machine's load.
func midRunArgs(target string, extra ...string) []string {
	return append([]string{"run", "--target", target, "--read-pct", "0", "--random-pct", "0", "--bs", "4k", "--qd", "1",
		"--rate-iops", "250", "--duration", "30s", "--ramp", "0s", "--interval", "200ms", "--output", "json"}, extra...)
}

// mkfs through a second loop device over the file behind the target,
// mid-run: ioprobe stops writing, and the superblock stays as mkfs wrote
// it.
func TestMkfsThroughSecondLoopMidRun(t *testing.T) {
	needTools(t, "losetup", "mkfs.ext4")
	backing := filepath.Join(t.TempDir(), "disk.img")
	dev := testloop.DeviceAt(t, backing, 64<<20)
	second := testloop.File(t, backing)
	settle()
	b := startBackground(t, midRunArgs(dev, "--allow-destructive")...)
	writesSeen(t, b, dev)
	run(t, "mkfs.ext4", "-q", "-F", second)
	sb := regionSum(t, backing, 1024, 1024)
	stoppedWriting(t, b, dev, "ext4")
	require.Equal(t, sb, regionSum(t, backing, 1024, 1024), "the superblock was written over")
}

// sgdisk does not open exclusively, so it writes a GPT onto the device
// ioprobe holds with O_EXCL: ioprobe stops writing, and both GPT headers
// and their tables stay as sgdisk wrote them.
func TestSgdiskMidRun(t *testing.T) {
	needTools(t, "losetup", "sgdisk")
	backing := filepath.Join(t.TempDir(), "disk.img")
	dev := testloop.DeviceAt(t, backing, 64<<20)
	settle()
	b := startBackground(t, midRunArgs(dev, "--allow-destructive")...)
	writesSeen(t, b, dev)
	// The kernel cannot re-read the table of a device held exclusively,
	// so sgdisk's exit status says so; what it wrote is what counts.
	out, _ := exec.Command("sgdisk", "-o", "-n", "1:2048:+8M", dev).CombinedOutput()
	const gpt = 34 * 512 // protective MBR, header, 32 sectors of entries
	head, tail := regionSum(t, backing, 0, gpt), regionSum(t, backing, -33*512, 33*512)
	r := stoppedWriting(t, b, dev, "gpt")
	require.Equal(t, head, regionSum(t, backing, 0, gpt), "the primary GPT was written over (sgdisk: %s)", out)
	require.Equal(t, tail, regionSum(t, backing, -33*512, 33*512), "the backup GPT was written over")
	require.Less(t, r.Summary.WriteBytes, uint64(32<<20))
}

// A label written into ioprobe's own file mid-run (a ZFS label near its
// end): ioprobe stops writing and leaves it.
func TestLabelInOwnFileMidRun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "own.dat")
	const size = 64 << 20
	o := ioprobe(t, dir, "run", "--target", path, "--size", "64MiB", "--duration", "100ms", "--ramp", "0s")
	require.Equal(t, 0, o.code, o.stderr)
	var label handmade.Header
	for _, h := range handmade.Headers() {
		if h.Name == "zfs-label3-only" {
			label = h
		}
	}
	require.NotEmpty(t, label.Name)
	b := startBackground(t, midRunArgs(path)...)
	whileAlive(t, b, "ioprobe never wrote", func(c *assert.CollectT) {
		assert.Greater(c, procIO(c, b.cmd.Process.Pid, "write_bytes"), uint64(64<<10))
	})
	patches := label.Build(size)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	for _, p := range patches {
		require.Greater(t, p.Off, int64(size/2), "past what the run reaches")
		_, err := f.WriteAt(p.Data, p.Off)
		require.NoError(t, err)
	}
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	sums := make([]string, len(patches))
	for i, p := range patches {
		sums[i] = regionSum(t, path, p.Off, int64(len(p.Data)))
	}
	stoppedWriting(t, b, path, "zfs_member")
	for i, p := range patches {
		require.Equal(t, sums[i], regionSum(t, path, p.Off, int64(len(p.Data))))
	}
	// The run stopped for it and left the marker busy: the next write
	// run refuses the label, offering no flag, and a read run reads every
	// sector and names the first that is not ioprobe's.
	o = ioprobe(t, dir, "run", "--target", path, "--read-pct", "0", "--duration", "100ms", "--ramp", "0s")
	require.Equal(t, 2, o.code, o.stderr)
	require.Contains(t, o.stderr, "zfs_member")
	require.Contains(t, o.stderr, "(--allow-destructive does not lift this refusal)")
	o = ioprobe(t, dir, "run", "--target", path, "--read-pct", "0", "--allow-destructive", "--duration", "100ms", "--ramp", "0s")
	require.Equal(t, 2, o.code, o.stderr)
	require.Contains(t, o.stderr, "zfs_member")
}
