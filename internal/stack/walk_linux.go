package stack

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/hostfs"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// Describe describes the storage under path: a file (or directory) and
// what its filesystem lies on, or a block device node and what it lies
// on. path should be resolved (no symlinks): it is also used to find the
// mount a file lies on when the kernel does not name it. h nil is the
// live host. It never fails: what it could not see is in Unseen.
func Describe(ctx context.Context, h *hostfs.Host, path string) Description {
	w := newWalker(ctx, h)
	w.path(path, 0)
	return w.d
}

// DescribeDevices is Describe without opening any file: a file's own
// layer has what a stat says (no allocation, extents or block size).
// What lies under a path is described without becoming, even for a
// moment, a holder of the file another run's safety checks look for (the
// exporter's ioprobe_device_info, read beside the daemon's runs).
func DescribeDevices(ctx context.Context, h *hostfs.Host, path string) Description {
	w := newWalker(ctx, h)
	w.noOpen = true
	w.path(path, 0)
	return w.d
}

// DescribeDevice describes the storage under block device name (its
// kernel name: the exporter's devices list).
func DescribeDevice(ctx context.Context, h *hostfs.Host, name string) Description {
	w := newWalker(ctx, h)
	w.block(name, 0)
	return w.d
}

type walker struct {
	ctx     context.Context
	h       *hostfs.Host
	d       Description
	mounts  hostfs.Mounts
	mErr    error
	mRead   bool
	visited map[string]bool
	cut     bool
	noOpen  bool // DescribeDevices: stat files, never open them
}

func newWalker(ctx context.Context, h *hostfs.Host) *walker {
	if h == nil {
		h = &hostfs.Host{}
	}
	return &walker{ctx: ctx, h: h, visited: map[string]bool{}}
}

func (w *walker) unseen(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	for _, u := range w.d.Unseen {
		if u == s {
			return
		}
	}
	w.d.Unseen = append(w.d.Unseen, s)
}

// room says whether a layer at depth may be added.
func (w *walker) room(depth int) bool {
	if depth < MaxDepth && len(w.d.Stack) < MaxLayers {
		return true
	}
	if !w.cut {
		w.cut = true
		w.unseen("the stack is cut after %d layers, %d deep: ioprobe describes no more", len(w.d.Stack), depth)
	}
	return false
}

func (w *walker) add(l result.Layer) { w.d.Stack = append(w.d.Stack, l) }

func (w *walker) mountTable() hostfs.Mounts {
	if !w.mRead {
		w.mRead = true
		w.mounts, w.mErr = w.h.Mounts()
		if w.mErr != nil {
			w.unseen("the mount table: %v", w.mErr)
		}
	}
	return w.mounts
}

// path describes a file, a directory or a block device node.
func (w *walker) path(path string, depth int) {
	if !w.room(depth) {
		return
	}
	st, err := w.h.Stat(w.ctx, path, "the target "+path)
	if err != nil {
		w.unseen("%s: %v", path, err)
		if depth == 0 && errors.Is(err, fs.ErrNotExist) {
			w.d.Missing = true
		}
		return
	}
	if st.Mode&unix.S_IFMT == unix.S_IFBLK {
		name, ok := w.h.BlockName(hostfs.DevNumOf(st.Rdev))
		if !ok {
			w.unseen("%s: block device %s is not in sysfs", path, hostfs.DevNumOf(st.Rdev))
			return
		}
		w.block(name, depth)
		return
	}
	var fi hostfs.FileInfo
	err = errNotOpened
	if !w.noOpen {
		fi, err = w.h.FileInfo(w.ctx, path, "the target "+path)
	}
	known := err == nil
	if err != nil && err != errNotOpened {
		w.unseen("%s: %v", path, err)
		if errors.Is(err, hostfs.ErrNoAnswer) {
			return
		}
	}
	if !known {
		// Not opened, or not readable here (permissions): the stat still
		// says which filesystem it is on.
		fi = hostfs.FileInfo{Dev: st.Dev, Ino: st.Ino, Mode: st.Mode, Size: st.Size, Extents: -1}
	}
	if fi.Mode&unix.S_IFMT == unix.S_IFDIR {
		w.filesystem(path, fi, known, depth)
		return
	}
	w.add(fileLayer(path, fi, known, depth))
	w.filesystem(path, fi, known, depth+1)
}

// errNotOpened: DescribeDevices does not open files.
var errNotOpened = errors.New("not opened")

// fileLayer is a file's layer; known says fi came from the file itself
// (FileInfo), with its allocation.
func fileLayer(path string, fi hostfs.FileInfo, known bool, depth int) result.Layer {
	l := result.Layer{Kind: result.LayerFile, Name: path, Depth: depth, SizeBytes: fi.Size}
	if known && fi.Mode&unix.S_IFMT == unix.S_IFREG {
		alloc := fi.Blocks * 512
		l.AllocatedBytes = &alloc
		if fi.Extents >= 0 {
			ext := fi.Extents
			l.Extents = &ext
		}
	}
	return l
}

// filesystem describes the filesystem a file lies on, then its device:
// the mount is the one the kernel names (statx's mount id), else the one
// its path lies under with the file's device. known says fi came from
// the file (its block size and mount id are the filesystem's).
func (w *walker) filesystem(path string, fi hostfs.FileInfo, known bool, depth int) {
	if !w.room(depth) {
		return
	}
	ms := w.mountTable()
	dev := hostfs.DevNumOf(fi.Dev)
	m, ok := ms.ByID(fi.MountID)
	if !ok || fi.MountID == 0 {
		ok = false
		for _, c := range ms.Under(path) {
			if c.DevNum == dev {
				m, ok = c, true
				break
			}
		}
	}
	if !ok {
		for _, c := range ms {
			if c.DevNum == dev {
				m, ok = c, true
				break
			}
		}
	}
	l := result.Layer{Kind: result.LayerFilesystem, Depth: depth}
	if ok {
		l.Name, l.FSType, l.MountOptions, l.SuperOptions, l.Source = m.MountPoint, m.FSType, m.Options, m.SuperOptions, m.Source
	} else {
		l.Name = "?"
		w.unseen("%s: no mount of device %s in the mount table", path, dev)
	}
	if known {
		l.BlockBytes = fi.FSBlock
	}
	name, hasDev := w.h.BlockName(dev)
	if !hasDev && ok && strings.HasPrefix(m.Source, "/dev/") {
		// btrfs, among others, gives its files an anonymous device: its
		// mount's source names the device it lies on.
		if st, err := w.h.Stat(w.ctx, m.Source, "the device node "+m.Source); err == nil && st.Mode&unix.S_IFMT == unix.S_IFBLK {
			name, hasDev = w.h.BlockName(hostfs.DevNumOf(st.Rdev))
		}
	}
	if hasDev {
		l.Device = name
		if l.FSType == "ext4" {
			if o, err := hostfs.ReadText(w.h.ProcPath("fs", "ext4", name, "options"), hostfs.LimitSmall); err == nil {
				l.FSOptions = strings.Join(strings.Fields(o), ",")
			}
		}
	}
	w.add(l)
	if hasDev {
		w.block(name, depth+1)
		return
	}
	if upper := overlayUpper(l); upper != "" {
		// A container's root: what it writes goes to the upper directory,
		// on a filesystem of the host's (when its name leads there from
		// here).
		w.path(upper, depth+1)
	}
}

// overlayUpper is an overlay filesystem's upper directory (its
// upperdir= option), "" for another filesystem or an overlay without one.
func overlayUpper(l result.Layer) string {
	if l.FSType != "overlay" {
		return ""
	}
	for _, o := range strings.Split(l.SuperOptions, ",") {
		if v, ok := strings.CutPrefix(o, "upperdir="); ok && filepath.IsAbs(v) {
			return hostfs.UnescapeOctal(v)
		}
	}
	return ""
}

// block describes block device name and what it lies on.
func (w *walker) block(name string, depth int) {
	if !w.room(depth) {
		return
	}
	if w.visited[name] {
		// A device met twice (two slaves of one md on one disk's
		// partitions) is described once: its layer is not repeated.
		return
	}
	w.visited[name] = true
	dir, err := w.h.BlockDir(name)
	if err != nil {
		w.unseen("block device %s: %v", name, err)
		return
	}
	attr := func(a string) (string, bool) {
		s, err := hostfs.ReadText(filepath.Join(dir, a), hostfs.LimitAttr)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				w.unseen("%s: %s: %v", name, a, err)
			}
			return "", false
		}
		return s, true
	}
	num := func(a string) int64 {
		s, ok := attr(a)
		if !ok {
			return 0
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			w.unseen("%s: %s: %q is not a number", name, a, s)
			return 0
		}
		return v
	}
	if _, ok := attr("partition"); ok {
		w.add(result.Layer{Kind: result.LayerPartition, Name: name, Depth: depth,
			Number: int(num("partition")), OffsetBytes: num("start") * 512, SizeBytes: num("size") * 512})
		w.block(filepath.Base(filepath.Dir(dir)), depth+1)
		return
	}
	q := w.queue(name, attr, num)
	slaves, err := w.h.Slaves(name)
	if err != nil {
		w.unseen("%s: slaves: %v", name, err)
	}
	slices.Sort(slaves) // a directory's order is the filesystem's
	switch {
	case isDir(filepath.Join(dir, "loop")):
		w.loop(name, q, depth)
	case isDir(filepath.Join(dir, "dm")):
		dmName, _ := attr("dm/name")
		uuid, _ := attr("dm/uuid")
		w.add(result.Layer{Kind: result.LayerDM, Name: name, Depth: depth, DMName: Clean(dmName, maxText),
			DMUUIDPrefix: DMUUIDPrefix(uuid), Slaves: slaves, Queue: &q})
		w.slaves(slaves, depth)
	case isDir(filepath.Join(dir, "md")):
		level, _ := attr("md/level")
		l := result.Layer{Kind: result.LayerMD, Name: name, Depth: depth, Level: Clean(level, 32), Slaves: slaves, Queue: &q}
		if _, ok := attr("md/chunk_size"); ok {
			l.ChunkBytes = num("md/chunk_size")
		}
		w.add(l)
		w.slaves(slaves, depth)
	default:
		// A disk, or another device stacked on others (bcache): the
		// device's own description, then what it lies on.
		w.add(result.Layer{Kind: result.LayerDisk, Name: name, Depth: depth, Slaves: slaves})
		w.d.Disks = append(w.d.Disks, w.disk(name, dir, q, attr))
		w.slaves(slaves, depth)
	}
}

func (w *walker) slaves(slaves []string, depth int) {
	for _, s := range slaves {
		w.block(s, depth+1)
	}
}

func isDir(p string) bool {
	fi, err := os.Stat(p) // sysfs: nothing here waits on another filesystem
	return err == nil && fi.IsDir()
}

// queue reads a device's request queue settings.
func (w *walker) queue(name string, attr func(string) (string, bool), num func(string) int64) result.Queue {
	q := result.Queue{
		SizeBytes:          num("size") * 512, // sysfs counts 512-byte sectors whatever the block size
		LogicalBlockBytes:  num("queue/logical_block_size"),
		PhysicalBlockBytes: num("queue/physical_block_size"),
		Rotational:         num("queue/rotational") == 1,
		NrRequests:         num("queue/nr_requests"),
		MaxSectorsKB:       num("queue/max_sectors_kb"),
		ReadAheadKB:        num("queue/read_ahead_kb"),
		FUA:                num("queue/fua") == 1,
		DiscardMaxBytes:    num("queue/discard_max_bytes"),
	}
	if s, ok := attr("queue/scheduler"); ok {
		current, _, _ := hostfs.ParseScheduler(s)
		q.Scheduler = Clean(current, 32)
	}
	if s, ok := attr("queue/write_cache"); ok {
		q.WriteCache = Clean(s, 32)
	}
	if s, ok := attr("queue/zoned"); ok && s != "none" {
		q.Zoned = Clean(s, 32)
	}
	return q
}

// disk describes a disk: what its device says of itself, and its queue.
func (w *walker) disk(name, dir string, q result.Queue, attr func(string) (string, bool)) result.Disk {
	d := result.Disk{Name: name, Queue: q}
	first := func(attrs ...string) string {
		for _, a := range attrs {
			if s, ok := attr(a); ok && s != "" {
				return Clean(s, maxText)
			}
		}
		return ""
	}
	d.Model = first("device/model", "device/name")
	d.Vendor = first("device/vendor")
	d.Firmware = first("device/rev", "device/firmware_rev", "device/fwrev")
	if p, err := os.Readlink(filepath.Join(dir, "device", "subsystem")); err == nil {
		d.Bus = Clean(filepath.Base(p), 32)
	}
	d.NUMANode = numaNode(dir)
	for _, src := range []string{"device/serial", "serial"} {
		if s, ok := attr(src); ok && strings.TrimSpace(s) != "" {
			d.SerialSHA256, d.SerialFrom = HashSerial(s), src
			return d
		}
	}
	if b, err := hostfs.ReadFile(filepath.Join(dir, "device", "vpd_pg80"), hostfs.LimitAttr); err == nil {
		if s := ParseVPD80(b); s != "" {
			d.SerialSHA256, d.SerialFrom = HashSerial(s), "vpd_pg80"
			return d
		}
	}
	for _, src := range []string{"device/wwid", "wwid"} {
		if s, ok := attr(src); ok && strings.TrimSpace(s) != "" {
			d.SerialSHA256, d.SerialFrom = HashSerial(s), "wwid"
			return d
		}
	}
	return d
}

// numaNode is the NUMA node of the disk's device, or of the nearest
// device above it that has one (a virtio or NVMe disk's PCI function);
// nil when none says.
func numaNode(dir string) *int {
	dev, err := filepath.EvalSymlinks(filepath.Join(dir, "device"))
	if err != nil {
		return nil
	}
	// A SATA disk's device is five levels below its PCI function
	// (port, host, target, LUN); a USB disk's, more.
	for i := 0; i < 8 && filepath.Base(dev) != "devices" && dev != "/" && dev != "."; i++ {
		s, err := hostfs.ReadText(filepath.Join(dev, "numa_node"), hostfs.LimitAttr)
		if err == nil {
			if v, err := strconv.Atoi(s); err == nil {
				return &v
			}
			return nil
		}
		dev = filepath.Dir(dev)
	}
	return nil
}
