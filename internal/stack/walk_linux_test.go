package stack

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/hostfs"
	"github.com/ioprobe/ioprobe/internal/testdeps"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// sysfs builds a fixture sysfs tree: block devices in their device
// directories, /sys/class/block links to them, as the kernel lays them out.
type sysfs struct {
	t    *testing.T
	root string
}

func newSysfs(t *testing.T) *sysfs {
	return &sysfs{t: t, root: t.TempDir()}
}

func (s *sysfs) write(rel string, files map[string]string) {
	s.t.Helper()
	for p, text := range files {
		full := filepath.Join(s.root, rel, p)
		require.NoError(s.t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(s.t, os.WriteFile(full, []byte(text), 0o644))
	}
}

func (s *sysfs) link(rel, target string) {
	s.t.Helper()
	full := filepath.Join(s.root, rel)
	require.NoError(s.t, os.MkdirAll(filepath.Dir(full), 0o755))
	require.NoError(s.t, os.Symlink(filepath.Join(s.root, target), full))
}

// block adds device name at dir (relative to the root) with its dev,
// size in sectors and queue attributes, and its class/block link.
func (s *sysfs) block(name, dir, dev string, sectors int64, queue map[string]string) {
	s.t.Helper()
	files := map[string]string{"dev": dev + "\n", "size": fmt.Sprintf("%d\n", sectors)}
	for k, v := range queue {
		files["queue/"+k] = v + "\n"
	}
	s.write(dir, files)
	s.link("class/block/"+name, dir)
}

func (s *sysfs) slaves(dir string, names ...string) {
	for _, n := range names {
		s.write(dir, map[string]string{"slaves/" + n: ""})
	}
}

func ssdQueue(sched string) map[string]string {
	return map[string]string{"logical_block_size": "512", "physical_block_size": "4096", "rotational": "0",
		"scheduler": sched, "nr_requests": "64", "max_sectors_kb": "1280", "read_ahead_kb": "128",
		"write_cache": "write back", "fua": "1", "discard_max_bytes": "2147450880", "zoned": "none"}
}

func bioQueue() map[string]string {
	return map[string]string{"logical_block_size": "512", "physical_block_size": "4096", "rotational": "0",
		"max_sectors_kb": "512", "read_ahead_kb": "6144", "write_cache": "write back", "fua": "0", "discard_max_bytes": "0"}
}

// A file on LVM on a RAID 1 of two SATA disks' partitions, as sysfs
// describes it: the dm device (its name, its uuid's prefix, never the
// rest), the md device (level, chunk), both partitions (number, start)
// and both disks (model, firmware, vendor, bus, queue, NUMA node from the
// PCI function above, the serial hashed from VPD page 0x80 or the wwid).
func TestDescribeDMOverMDOverPartitions(t *testing.T) {
	s := newSysfs(t)
	pci := "devices/pci0000:00/0000:00:1f.2"
	s.write(pci, map[string]string{"numa_node": "1\n"})
	for i, name := range []string{"sda", "sdb"} {
		scsi := fmt.Sprintf("%s/ata%d/host%d/target%d:0:0/%d:0:0:0", pci, i+1, i, i, i)
		s.write(scsi, map[string]string{"model": "Samsung SSD 860 \n", "rev": "4B6Q\n", "vendor": "ATA     \n"})
		s.link(scsi+"/subsystem", "bus/scsi")
		disk := scsi + "/block/" + name
		s.block(name, disk, fmt.Sprintf("8:%d", 16*i), 1953525168, ssdQueue("none [mq-deadline] kyber bfq"))
		s.link(disk+"/device", scsi)
		part := disk + "/" + name + "1"
		s.write(part, map[string]string{"partition": "1\n", "start": "2048\n"})
		s.block(name+"1", part, fmt.Sprintf("8:%d", 16*i+1), 1953523120, nil)
	}
	page := append([]byte{0, 0x80, 0, 16}, []byte("S3Z8NB0K123456A ")...)
	s.write(pci+"/ata1/host0/target0:0:0/0:0:0:0", map[string]string{"vpd_pg80": string(page)})
	s.write(pci+"/ata2/host1/target1:0:0/1:0:0:0", map[string]string{"wwid": "naa.5002538e40a1b2c3\n"})

	s.block("md0", "devices/virtual/block/md0", "9:0", 1953257472, bioQueue())
	s.write("devices/virtual/block/md0", map[string]string{"md/level": "raid1\n", "md/chunk_size": "0\n"})
	s.slaves("devices/virtual/block/md0", "sda1", "sdb1")
	s.block("dm-0", "devices/virtual/block/dm-0", "253:0", 209715200, bioQueue())
	s.write("devices/virtual/block/dm-0", map[string]string{"dm/name": "vg0-data\n",
		"dm/uuid": "LVM-Qm1ZGbn2ZbmXrjGA2dU1WcYgaTG6JKW6Yk3HcbKd1ERUqgYAFfkh4FHM9YtIJ8XM\n"})
	s.slaves("devices/virtual/block/dm-0", "md0")

	d := DescribeDevice(context.Background(), &hostfs.Host{Sys: s.root}, "dm-0")
	require.Empty(t, d.Unseen)
	var kinds, names []string
	for _, l := range d.Stack {
		kinds = append(kinds, fmt.Sprintf("%d:%s", l.Depth, l.Kind))
		names = append(names, l.Name)
	}
	require.Equal(t, []string{"0:dm", "1:md", "2:partition", "3:disk", "2:partition", "3:disk"}, kinds)
	require.Equal(t, []string{"dm-0", "md0", "sda1", "sda", "sdb1", "sdb"}, names)
	dm, md, p1 := d.Stack[0], d.Stack[1], d.Stack[2]
	require.Equal(t, "vg0-data", dm.DMName)
	require.Equal(t, "LVM", dm.DMUUIDPrefix)
	require.Equal(t, []string{"md0"}, dm.Slaves)
	require.Equal(t, &result.Queue{SizeBytes: 209715200 * 512, LogicalBlockBytes: 512, PhysicalBlockBytes: 4096, MaxSectorsKB: 512,
		ReadAheadKB: 6144, WriteCache: "write back"}, dm.Queue, "a bio-based device: no scheduler, no nr_requests")
	require.Equal(t, "raid1", md.Level)
	require.Equal(t, []string{"sda1", "sdb1"}, md.Slaves)
	require.Equal(t, 1, p1.Number)
	require.EqualValues(t, 2048*512, p1.OffsetBytes)
	require.EqualValues(t, 1953523120*512, p1.SizeBytes)

	require.Len(t, d.Disks, 2)
	a, b := d.Disks[0], d.Disks[1]
	one := 1
	require.Equal(t, result.Disk{Name: "sda", Model: "Samsung SSD 860", Vendor: "ATA", Firmware: "4B6Q", Bus: "scsi",
		Queue: result.Queue{SizeBytes: 1953525168 * 512, LogicalBlockBytes: 512, PhysicalBlockBytes: 4096, Scheduler: "mq-deadline",
			NrRequests: 64, MaxSectorsKB: 1280, ReadAheadKB: 128, WriteCache: "write back", FUA: true, DiscardMaxBytes: 2147450880},
		NUMANode: &one, SerialSHA256: HashSerial("S3Z8NB0K123456A"), SerialFrom: "vpd_pg80"}, a)
	require.Equal(t, HashSerial("naa.5002538e40a1b2c3"), b.SerialSHA256)
	require.Equal(t, "wwid", b.SerialFrom)

	// What a result records: the first disk, and every disk.
	var tg result.Target
	d.Apply(&tg)
	require.Equal(t, "sda", tg.Disk.Name)
	require.Len(t, tg.Disks, 2)
	require.Equal(t, "dm LVM → md raid1 over 2 → partition → disk → partition → disk", result.StackShape(tg.Stack))
	// Devices: each queue of its own (dm, md) and the disks; partitions
	// are their disks'.
	var devs []string
	for _, x := range d.Devices() {
		devs = append(devs, x.Name)
	}
	require.Equal(t, []string{"dm-0", "md0", "sda", "sdb"}, devs)
}

// A stack that loops (md0 over md1 over md0: a sysfs that lies) is
// described once; one deeper than MaxDepth is cut there, and says so.
func TestDescribeIsBounded(t *testing.T) {
	s := newSysfs(t)
	s.block("md0", "devices/virtual/block/md0", "9:0", 8, bioQueue())
	s.block("md1", "devices/virtual/block/md1", "9:1", 8, bioQueue())
	s.write("devices/virtual/block/md0", map[string]string{"md/level": "raid0\n"})
	s.write("devices/virtual/block/md1", map[string]string{"md/level": "raid0\n"})
	s.slaves("devices/virtual/block/md0", "md1")
	s.slaves("devices/virtual/block/md1", "md0")
	d := DescribeDevice(context.Background(), &hostfs.Host{Sys: s.root}, "md0")
	require.Len(t, d.Stack, 2)
	require.Empty(t, d.Disks)

	s = newSysfs(t)
	n := MaxDepth + 5
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("dm-%d", i)
		dir := "devices/virtual/block/" + name
		s.block(name, dir, fmt.Sprintf("253:%d", i), 8, bioQueue())
		s.write(dir, map[string]string{"dm/name": name + "\n"})
		s.slaves(dir, fmt.Sprintf("dm-%d", i+1))
	}
	d = DescribeDevice(context.Background(), &hostfs.Host{Sys: s.root}, "dm-0")
	require.Len(t, d.Stack, MaxDepth)
	require.Len(t, d.Unseen, 1)
	require.Contains(t, d.Unseen[0], "the stack is cut after 16 layers")
}

// A loop device whose backing ioprobe cannot reach (no device node here,
// a name that leads nowhere) is described from sysfs, and what is missing
// below it is said, not guessed.
func TestDescribeLoopFromSysfsAlone(t *testing.T) {
	s := newSysfs(t)
	dir := "devices/virtual/block/loop7"
	s.block("loop7", dir, "7:7", 2048, ssdQueue("[none] mq-deadline"))
	s.write(dir, map[string]string{"loop/backing_file": "/gone/img (deleted)\n", "loop/offset": "4096\n", "loop/sizelimit": "1048576\n", "loop/dio": "1\n"})
	s.link("block/loop7", dir) // hostfs reads a loop device's attributes under /sys/block
	h := &hostfs.Host{Sys: s.root, Dev: t.TempDir(), Proc: t.TempDir(), Calls: hostfs.NewCalls(4), Deadline: time.Minute}
	d := DescribeDevice(context.Background(), h, "loop7")
	require.NotEmpty(t, d.Stack)
	l := d.Stack[0]
	require.Equal(t, result.LayerLoop, l.Kind)
	require.Equal(t, "/gone/img", l.Backing)
	require.True(t, l.BackingDeleted)
	require.EqualValues(t, 4096, l.OffsetBytes)
	require.EqualValues(t, 1<<20, l.SizeLimitBytes)
	require.NotNil(t, l.DirectIO)
	require.True(t, *l.DirectIO)
	require.Equal(t, "none", l.Queue.Scheduler)
	joined := strings.Join(d.Unseen, "\n")
	require.Contains(t, joined, "what backs loop7")
	require.Contains(t, joined, "/gone/img")
	require.Empty(t, d.Disks, "no disk is guessed")
}

// What describing a file's storage costs (twice per run: before the
// first I/O and after the last).
func BenchmarkDescribeFile(b *testing.B) {
	f := filepath.Join(b.TempDir(), "x.dat")
	require.NoError(b, os.WriteFile(f, make([]byte, 1<<20), 0o600))
	h := &hostfs.Host{Calls: hostfs.NewCalls(8), Deadline: time.Minute}
	b.ReportAllocs()
	for b.Loop() {
		if d := Describe(context.Background(), h, f); len(d.Stack) < 2 {
			b.Fatalf("%+v", d)
		}
	}
}

// An overlay (a container's root) has no device of its own: its stack
// goes on at its upper directory, where what is written lands.
func TestDescribeOverlayFollowsItsUpperDir(t *testing.T) {
	testdeps.Need(t, testdeps.Root, testdeps.Tool("mount"), testdeps.Tool("umount"))
	dir := t.TempDir()
	for _, d := range []string{"lower", "upper", "work", "merged"} {
		require.NoError(t, os.Mkdir(filepath.Join(dir, d), 0o755))
	}
	m := filepath.Join(dir, "merged")
	opts := fmt.Sprintf("lowerdir=%s/lower,upperdir=%s/upper,workdir=%s/work", dir, dir, dir)
	if out, err := exec.Command("mount", "-t", "overlay", "overlay", "-o", opts, m).CombinedOutput(); err != nil {
		t.Skipf("mount -t overlay: %v: %s", err, out) //hygiene:skip the kernel's overlay filesystem
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", m).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", m, err, out)
		}
	})
	f := filepath.Join(m, "x.dat")
	require.NoError(t, os.WriteFile(f, []byte("x"), 0o600))
	d := Describe(context.Background(), &hostfs.Host{Calls: hostfs.NewCalls(8), Deadline: time.Minute}, f)
	require.Empty(t, d.Unseen)
	require.GreaterOrEqual(t, len(d.Stack), 3)
	require.Equal(t, result.LayerFile, d.Stack[0].Kind)
	ov, below := d.Stack[1], d.Stack[2]
	require.Equal(t, "overlay", ov.FSType)
	require.Equal(t, m, ov.Name)
	require.Empty(t, ov.Device)
	require.Equal(t, result.LayerFilesystem, below.Kind, "the upper directory's filesystem")
	require.Equal(t, 2, below.Depth)
	var st, up unix.Stat_t
	require.NoError(t, unix.Stat(filepath.Join(dir, "upper"), &up))
	require.NoError(t, unix.Stat(dir, &st))
	require.Equal(t, st.Dev, up.Dev)
	if name, ok := (&hostfs.Host{}).BlockName(hostfs.DevNumOf(up.Dev)); ok {
		require.Equal(t, name, below.Device)
	}
}

// DescribeDevices reaches the same devices as Describe with a stat of
// the file alone: no allocation, extents or block size, which only an
// open file tells.
func TestDescribeDevicesOpensNothing(t *testing.T) {
	f := filepath.Join(t.TempDir(), "x.dat")
	require.NoError(t, os.WriteFile(f, make([]byte, 8192), 0o600))
	h := &hostfs.Host{Calls: hostfs.NewCalls(8), Deadline: time.Minute}
	full, devs := Describe(context.Background(), h, f), DescribeDevices(context.Background(), h, f)
	require.Empty(t, devs.Unseen)
	require.Len(t, devs.Stack, len(full.Stack))
	require.NotNil(t, full.Stack[0].AllocatedBytes)
	require.Nil(t, devs.Stack[0].AllocatedBytes)
	require.Nil(t, devs.Stack[0].Extents)
	require.EqualValues(t, 8192, devs.Stack[0].SizeBytes)
	require.Zero(t, devs.Stack[1].BlockBytes)
	require.Equal(t, full.Stack[1].Name, devs.Stack[1].Name, "the same mount")
	require.Equal(t, full.Stack[1].Device, devs.Stack[1].Device)
	require.Equal(t, full.Disks, devs.Disks)
}
