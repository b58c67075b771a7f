package devlat

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ioprobe/ioprobe/internal/hostfs"
)

// Device is a block device to watch, by the kernel's name for it, with
// its disk's request queue: the programs keep a request's issue time by
// its driver tag, in a slot per tag of each hardware queue.
type Device struct {
	Name         string // "loop0", "vda1"
	Major, Minor uint32
	// Disk is the whole disk of a partition (its flushes are the disk's),
	// Name itself for a disk.
	Disk                 string
	DiskMajor, DiskMinor uint32
	// HWQueues and Tags are the disk's hardware queues and driver tags per
	// queue when it was resolved (sysfs mq/*/nr_tags); a request on a
	// queue or tag beyond them (the driver grew them since) is counted,
	// not timed.
	HWQueues, Tags uint32
}

// kernelDev is the device number as the kernel keeps it in struct
// block_device (MKDEV: 20 bits of minor), which the filter map is keyed
// by; userspace's dev_t encodes it differently.
func (d Device) kernelDev() uint32 { return d.Major<<20 | d.Minor }

// diskDev is kernelDev of the whole disk.
func (d Device) diskDev() uint32 { return d.DiskMajor<<20 | d.DiskMinor }

// Partition says whether the device is a partition of Disk.
func (d Device) Partition() bool { return d.Disk != "" && d.Disk != d.Name }

// Unavailable says why device latency cannot be measured, in one line a
// result carries as summary.device.latency_unavailable.
type Unavailable struct{ Reason string }

func (u *Unavailable) Error() string { return u.Reason }

func unavailable(format string, args ...any) *Unavailable {
	return &Unavailable{Reason: fmt.Sprintf(format, args...)}
}

// Bounds of a queue's tag slots: what sysfs says, within reason.
const (
	maxHWQueues  = 4096
	maxTags      = 65536
	maxQueueTags = 1 << 20 // slots of one queue (16 MiB)
	defaultTags  = 1024    // when sysfs does not say
)

// Resolve finds block device name under sysRoot ("" is /sys) and checks
// that its I/O becomes block-layer requests: a bio-based device (zram,
// device-mapper, md) hands its bios on without them, so no request
// tracepoint ever sees its I/O. A partition's requests are its disk's,
// counted against the partition.
func Resolve(sysRoot, name string) (Device, error) {
	if sysRoot == "" {
		sysRoot = "/sys"
	}
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
		return Device{}, unavailable("bad block device name %q", name)
	}
	dir, err := filepath.EvalSymlinks(filepath.Join(sysRoot, "class", "block", name))
	if err != nil {
		return Device{}, unavailable("no block device %s in %s/class/block", name, sysRoot)
	}
	ma, mi, err := readDevNumber(dir, name)
	if err != nil {
		return Device{}, err
	}
	d := Device{Name: name, Major: ma, Minor: mi, Disk: name, DiskMajor: ma, DiskMinor: mi}
	disk := dir
	if (&hostfs.Host{Sys: sysRoot}).IsPartition(name) {
		disk = filepath.Dir(dir)
		d.Disk = filepath.Base(disk)
		if d.DiskMajor, d.DiskMinor, err = readDevNumber(disk, d.Disk); err != nil {
			return Device{}, err
		}
	}
	if _, err := os.Stat(filepath.Join(disk, "mq")); err != nil {
		return Device{}, unavailable("%s is a bio-based device (no blk-mq queue): its I/O never becomes block-layer requests, so it has no request service time to trace", filepath.Base(disk))
	}
	d.HWQueues, d.Tags = queueGeometry(disk)
	return d, nil
}

// readDevNumber reads a sysfs device directory's dev file.
func readDevNumber(dir, name string) (uint32, uint32, error) {
	b, err := hostfs.ReadText(filepath.Join(dir, "dev"), hostfs.LimitAttr)
	if err != nil {
		return 0, 0, unavailable("%s: %v", name, err)
	}
	d, err := hostfs.ParseDevNum(b)
	if err != nil || d.Minor >= 1<<20 {
		return 0, 0, unavailable("%s: bad device number %q", name, b)
	}
	return d.Major, d.Minor, nil
}

// queueGeometry is a disk's hardware queues (the entries of its mq
// directory) and the most driver tags one has (mq/N/nr_tags; without
// them, queue/nr_requests), bounded so that one queue's slots stay
// within maxQueueTags.
func queueGeometry(disk string) (hw, tags uint32) {
	entries, _ := hostfs.ReadDirNames(filepath.Join(disk, "mq"))
	for _, e := range entries {
		if _, err := strconv.ParseUint(e, 10, 32); err != nil {
			continue
		}
		hw++
		if n, ok := readUint(filepath.Join(disk, "mq", e, "nr_tags")); ok {
			tags = max(tags, n)
		}
	}
	if tags == 0 {
		n, ok := readUint(filepath.Join(disk, "queue", "nr_requests"))
		tags = defaultTags
		if ok && n > 0 {
			tags = n
		}
	}
	hw = min(max(hw, 1), maxHWQueues)
	tags = min(tags, maxTags)
	hw = min(hw, maxQueueTags/tags)
	return hw, tags
}

func readUint(path string) (uint32, bool) {
	s, err := hostfs.ReadText(path, hostfs.LimitAttr)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 32)
	return uint32(n), err == nil
}
