package test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testwait"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// What a result says it measured (targets[].stack, disk), checked
// against util-linux's lsblk and sysfs on real devices: a file on ext4
// on a partition of a loop device, a loop device over a loop device, and
// zram.

// lsblkDev is lsblk's description of one device (-J -O -b: every column,
// sizes in bytes), children left out.
func lsblkDev(t *testing.T, dev string) map[string]any {
	t.Helper()
	out := runTool(t, "lsblk", "-J", "-O", "-b", dev)
	var doc struct {
		Blockdevices []map[string]any `json:"blockdevices"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	require.Len(t, doc.Blockdevices, 1, out)
	return doc.Blockdevices[0]
}

// lsblkText is a text column of lsblk ("" for its null).
func lsblkText(m map[string]any, col string) string {
	s, _ := m[col].(string)
	return strings.TrimSpace(s)
}

// lsblkNum is a numeric column of lsblk (0 for its null).
func lsblkNum(t *testing.T, m map[string]any, col string) int64 {
	t.Helper()
	switch v := m[col].(type) {
	case nil:
		return 0
	case float64:
		return int64(v)
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		require.NoError(t, err, "lsblk %s: %q", col, v)
		return n
	}
	t.Fatalf("lsblk %s: %v (%T)", col, m[col], m[col])
	return 0
}

// sysText is a sysfs attribute of a block device.
func sysText(t *testing.T, dev, attr string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/sys/class/block", dev, attr))
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}

// requireQueueAsLsblk checks a device's queue settings against lsblk's
// columns for it (and its type).
func requireQueueAsLsblk(t *testing.T, name, typ string, q result.Queue) {
	t.Helper()
	l := lsblkDev(t, "/dev/"+name)
	require.Equal(t, name, lsblkText(l, "kname"))
	require.Equal(t, typ, lsblkText(l, "type"), name)
	require.Equal(t, lsblkText(l, "sched"), q.Scheduler, "%s: scheduler (lsblk sched)", name)
	require.Equal(t, l["rota"], q.Rotational, "%s: rotational (lsblk rota)", name)
	require.Equal(t, lsblkNum(t, l, "log-sec"), q.LogicalBlockBytes, "%s: lsblk log-sec", name)
	require.Equal(t, lsblkNum(t, l, "phy-sec"), q.PhysicalBlockBytes, "%s: lsblk phy-sec", name)
	require.Equal(t, lsblkNum(t, l, "rq-size"), q.NrRequests, "%s: nr_requests (lsblk rq-size)", name)
	require.Equal(t, lsblkNum(t, l, "disc-max"), q.DiscardMaxBytes, "%s: lsblk disc-max", name)
	require.Equal(t, lsblkNum(t, l, "size"), q.SizeBytes, "%s: lsblk size", name)
	require.Equal(t, lsblkNum(t, l, "ra"), q.ReadAheadKB, "%s: read_ahead_kb (lsblk ra)", name)
	require.Equal(t, sysText(t, name, "queue/max_sectors_kb"), strconv.FormatInt(q.MaxSectorsKB, 10), name)
	require.Equal(t, sysText(t, name, "queue/write_cache"), q.WriteCache, name)
}

// requireDiskAsLsblk checks a disk against lsblk: its queue, model and
// firmware (lsblk rev).
func requireDiskAsLsblk(t *testing.T, d result.Disk) {
	t.Helper()
	requireQueueAsLsblk(t, d.Name, "disk", d.Queue)
	l := lsblkDev(t, "/dev/"+d.Name)
	require.Equal(t, lsblkText(l, "model"), d.Model, "%s: lsblk model", d.Name)
	require.Equal(t, lsblkText(l, "rev"), d.Firmware, "%s: lsblk rev", d.Name)
	// The serial hashed, never itself: sysfs's (lsblk's comes from udev,
	// which this machine may not run).
	for _, src := range []string{"device/serial", "serial"} {
		b, err := os.ReadFile(filepath.Join("/sys/class/block", d.Name, src))
		if serial := strings.TrimSpace(string(b)); err == nil && serial != "" {
			require.Equal(t, fmt.Sprintf("%x", sha256.Sum256([]byte(serial))), d.SerialSHA256, "%s: %s hashed", d.Name, src)
			require.Equal(t, src, d.SerialFrom)
			js, err := json.Marshal(d)
			require.NoError(t, err)
			require.NotContains(t, string(js), serial, "never the serial itself")
			return
		}
	}
}

// requireBelowIsHost checks the layers below a file on the host's own
// filesystem (the test's temporary directory): the filesystem its
// mountinfo line says, then down to a disk that is the result's.
func requireBelowIsHost(t *testing.T, tg result.Target, layers []result.Layer, file string) {
	t.Helper()
	require.GreaterOrEqual(t, len(layers), 2, "%+v", layers)
	fs := layers[0]
	require.Equal(t, result.LayerFilesystem, fs.Kind)
	require.Equal(t, blockDevOf(t, file), fs.Device, "the filesystem's device is the file's st_dev")
	last := layers[len(layers)-1]
	require.Equal(t, result.LayerDisk, last.Kind)
	require.NotNil(t, tg.Disk)
	require.Equal(t, last.Name, tg.Disk.Name)
	requireDiskAsLsblk(t, *tg.Disk)
}

func runJSON(t *testing.T, args ...string) *result.Result {
	t.Helper()
	o := ioprobe(t, t.TempDir(), append(args, "--duration", "300ms", "--ramp", "0s", "--output", "json")...)
	require.Equal(t, 0, o.code, o.stderr)
	return decodeResult(t, o.stdout)
}

// (a) A file on ext4 on the first partition of a loop device over a
// file on the host's filesystem.
func TestStackFileOnExt4OnPartitionOfLoop(t *testing.T) {
	needTools(t, "losetup", "sfdisk", "partx", "mkfs.ext4", "mount", "umount", "lsblk", "blkid")
	img := imageFile(t, 64<<20)
	runIn(t, "label: dos\n,40MiB,L\n", "sfdisk", "-q", img)
	disk := attach(t, img, "--partscan")
	part := disk + "p1"
	if _, err := os.Stat(part); err != nil {
		runTool(t, "partx", "-a", disk) // no udev here to make the nodes
	}
	require.Eventually(t, func() bool { _, err := os.Stat(part); return err == nil }, testwait.Patience, 10*time.Millisecond)
	// Cleanups run last first: the unmount, then the partition (which
	// outlives a detach when added by hand), then the detach.
	t.Cleanup(func() {
		if out, err := exec.Command("partx", "-d", disk).CombinedOutput(); err != nil {
			t.Errorf("partx -d %s: %v: %s", disk, err, out)
		}
	})
	runTool(t, "mkfs.ext4", "-q", "-F", part)
	dir := t.TempDir()
	runTool(t, "mount", "-o", "noatime", part, dir)
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	file := filepath.Join(dir, "x.dat")

	r := runJSON(t, "run", "--target", file, "--size", "4MiB")
	require.Len(t, r.Targets, 1)
	tg := r.Targets[0]
	require.Empty(t, tg.StackUnseen)
	require.Empty(t, tg.StackChanged)
	kinds := []string{}
	for _, l := range tg.Stack {
		kinds = append(kinds, l.Kind)
	}
	require.Equal(t, []string{"file", "filesystem", "partition", "loop", "file", "filesystem"}, kinds[:6], "%v", kinds)
	pn, ln := filepath.Base(part), filepath.Base(disk)

	f := tg.Stack[0]
	require.Equal(t, file, f.Name)
	require.EqualValues(t, 4<<20, f.SizeBytes)
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(file, &st))
	require.NotNil(t, f.AllocatedBytes)
	require.Equal(t, st.Blocks*512, *f.AllocatedBytes, "st_blocks")
	require.NotNil(t, f.Extents)
	require.Positive(t, *f.Extents, "ioprobe filled the file: ext4 maps it with extents")

	fs := tg.Stack[1]
	require.Equal(t, dir, fs.Name)
	require.Equal(t, "ext4", fs.FSType)
	require.Equal(t, pn, fs.Device)
	require.Contains(t, strings.Split(fs.MountOptions, ","), "noatime")
	require.Equal(t, mountOptions(t, dir), fs.MountOptions, "mountinfo's per-mount options")
	var sfs syscall.Statfs_t
	require.NoError(t, syscall.Statfs(dir, &sfs))
	require.EqualValues(t, sfs.Bsize, fs.BlockBytes, "statfs f_bsize (mkfs.ext4 makes 1 KiB blocks on a small filesystem)")
	require.Contains(t, fs.FSOptions, "data=ordered", "ext4's options in effect, defaults too (/proc/fs/ext4)")
	l := lsblkDev(t, part)
	require.Contains(t, l["mountpoints"], any(dir), "lsblk: the partition is mounted there")
	// lsblk's fstype comes from udev, which this machine may not run:
	// blkid probes the partition itself.
	require.Equal(t, "ext4", runTool(t, "blkid", "-p", "-o", "value", "-s", "TYPE", part))

	p := tg.Stack[2]
	require.Equal(t, pn, p.Name)
	require.Equal(t, "part", lsblkText(l, "type"))
	require.Equal(t, ln, lsblkText(l, "pkname"), "the partition's disk")
	require.Equal(t, 1, p.Number)
	require.Equal(t, lsblkNum(t, l, "start")*512, p.OffsetBytes, "lsblk start, in sectors")
	require.EqualValues(t, 1<<20, p.OffsetBytes, "sfdisk's default alignment")
	require.Equal(t, lsblkNum(t, l, "size"), p.SizeBytes)
	require.EqualValues(t, 40<<20, p.SizeBytes)

	lp := tg.Stack[3]
	require.Equal(t, ln, lp.Name)
	require.Equal(t, img, lp.Backing)
	require.Equal(t, sysText(t, ln, "loop/backing_file"), lp.Backing)
	require.NotNil(t, lp.DirectIO)
	require.Equal(t, sysText(t, ln, "loop/dio") == "1", *lp.DirectIO)
	require.True(t, *lp.DirectIO, "attached with --direct-io=on")
	require.NotNil(t, lp.Queue)
	requireQueueAsLsblk(t, ln, "loop", *lp.Queue)

	bf := tg.Stack[4]
	require.Equal(t, img, bf.Name)
	require.EqualValues(t, 64<<20, bf.SizeBytes)
	requireBelowIsHost(t, tg, tg.Stack[5:], img)

	// The text says it under the target.
	o := ioprobe(t, t.TempDir(), "report", writeResultFile(t, r))
	require.Equal(t, 0, o.code, o.stderr)
	require.Contains(t, o.stdout, "Storage   file "+file)
	require.Contains(t, o.stdout, "ext4 on "+dir+" (")
	require.Contains(t, o.stdout, "→ partition "+pn+" (#1 at 1 MiB, 40 MiB) → loop "+ln+" (scheduler "+lp.Queue.Scheduler+", direct I/O on) → file "+img)
}

// (b) A loop device over a loop device over a file.
func TestStackLoopOverLoop(t *testing.T) {
	needTools(t, "losetup", "lsblk")
	img := imageFile(t, 32<<20)
	inner := attach(t, img)
	outer := attach(t, inner)
	r := runJSON(t, "run", "--target", outer)
	tg := r.Targets[0]
	require.Empty(t, tg.StackUnseen)
	on, in := filepath.Base(outer), filepath.Base(inner)
	require.GreaterOrEqual(t, len(tg.Stack), 5, "%+v", tg.Stack)
	o, i, f := tg.Stack[0], tg.Stack[1], tg.Stack[2]
	require.Equal(t, result.Layer{Kind: "loop", Name: on, Depth: 0, Backing: inner, DirectIO: o.DirectIO, Queue: o.Queue}, o)
	require.Equal(t, sysText(t, on, "loop/backing_file"), o.Backing)
	require.Equal(t, result.LayerLoop, i.Kind)
	require.Equal(t, in, i.Name)
	require.Equal(t, 1, i.Depth)
	require.Equal(t, img, i.Backing)
	require.Equal(t, result.LayerFile, f.Kind)
	require.Equal(t, img, f.Name)
	require.Equal(t, 2, f.Depth)
	requireQueueAsLsblk(t, on, "loop", *o.Queue)
	requireQueueAsLsblk(t, in, "loop", *i.Queue)
	requireBelowIsHost(t, tg, tg.Stack[3:], img)
}

// (c) zram: a disk of its own, without a device, a scheduler or a
// request queue.
func TestStackZram(t *testing.T) {
	needTools(t, "lsblk")
	const dev = "/dev/zram0"
	if _, err := os.Stat(dev); err != nil {
		t.Skipf("%s: %v", dev, err) //hygiene:skip zram is a kernel module make test cannot load
	}
	quiet(t)
	size := sysText(t, "zram0", "disksize")
	if size == "0" {
		require.NoError(t, os.WriteFile("/sys/block/zram0/disksize", []byte("2G"), 0))
		t.Cleanup(func() { // only what this test sized
			if err := os.WriteFile("/sys/block/zram0/reset", []byte("1"), 0); err != nil {
				t.Errorf("reset zram0: %v", err)
			}
		})
	}
	r := runJSON(t, "run", "--target", dev)
	tg := r.Targets[0]
	require.Empty(t, tg.StackUnseen)
	require.Equal(t, []result.Layer{{Kind: "disk", Name: "zram0"}}, tg.Stack)
	require.NotNil(t, tg.Disk)
	d := *tg.Disk
	require.Empty(t, d.Bus, "no device under it")
	require.Empty(t, d.Scheduler, "bio-based: no scheduler")
	require.Zero(t, d.NrRequests)
	_, err := os.Stat("/sys/block/zram0/queue/scheduler")
	require.True(t, os.IsNotExist(err), "sysfs agrees: no scheduler file")
	require.Empty(t, d.SerialSHA256)
	requireDiskAsLsblk(t, d)
}

// mountOptions is the per-mount options of the mount at dir, from
// mountinfo.
func mountOptions(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	opts := ""
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 5 && f[4] == dir {
			opts = f[5] // the last one mounted there is on top
		}
	}
	require.NotEmpty(t, opts, "%s is a mount point", dir)
	return opts
}

// writeResultFile writes r as a result file and returns its path.
func writeResultFile(t *testing.T, r *result.Result) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "result.json")
	b, err := json.Marshal(r)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

// quiet holds the shared machine's lock for zram0 and for measurements
// meant to be quiet (/tmp/ioprobe-quiet.lock, as scripts/bench-fio.sh
// takes it) until the test ends; it waits at most ten minutes for it.
func quiet(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile("/tmp/ioprobe-quiet.lock", os.O_CREATE|os.O_RDWR, 0o666)
	require.NoError(t, err)
	got := make(chan error, 1)
	go func() { got <- syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }()
	select {
	case err := <-got:
		require.NoError(t, err)
	case <-time.After(10 * time.Minute):
		t.Fatal("/tmp/ioprobe-quiet.lock: another user of the machine held it for ten minutes")
	}
	t.Cleanup(func() { f.Close() }) // the lock goes with the descriptor
}
