package devlat

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ioprobe/ioprobe/internal/hostfs"
)

// Device is a block device to watch, by the kernel's name for it.
type Device struct {
	Name         string // "loop0", "vda1"
	Major, Minor uint32
}

// kernelDev is the device number as the kernel keeps it in struct
// block_device (MKDEV: 20 bits of minor), which the filter map is keyed
// by; userspace's dev_t encodes it differently.
func (d Device) kernelDev() uint32 { return d.Major<<20 | d.Minor }

// Unavailable says why device latency cannot be measured, in one line a
// result carries as summary.device.latency_unavailable.
type Unavailable struct{ Reason string }

func (u *Unavailable) Error() string { return u.Reason }

func unavailable(format string, args ...any) *Unavailable {
	return &Unavailable{Reason: fmt.Sprintf(format, args...)}
}

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
	b, err := hostfs.ReadText(filepath.Join(dir, "dev"), hostfs.LimitAttr)
	if err != nil {
		return Device{}, unavailable("%s: %v", name, err)
	}
	d, err := hostfs.ParseDevNum(b)
	if err != nil || d.Minor >= 1<<20 {
		return Device{}, unavailable("%s: bad device number %q", name, b)
	}
	disk := dir
	if (&hostfs.Host{Sys: sysRoot}).IsPartition(name) {
		disk = filepath.Dir(dir)
	}
	if _, err := os.Stat(filepath.Join(disk, "mq")); err != nil {
		return Device{}, unavailable("%s is a bio-based device (no blk-mq queue): its I/O never becomes block-layer requests, so it has no request service time to trace", filepath.Base(disk))
	}
	return Device{Name: name, Major: d.Major, Minor: d.Minor}, nil
}
