package hostfs

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Host is where ioprobe reads the machine: the roots of sysfs, procfs and
// the device nodes (tests and a container given the host's filesystems
// elsewhere point them away), the deadline of a call that asks another
// filesystem, and the Calls those go through. The zero value reads the
// live /sys, /proc and /dev with DefaultDeadline and the process's shared
// Calls.
type Host struct {
	Sys, Proc, Dev string        // "" is /sys, /proc, /dev
	Deadline       time.Duration // 0 is DefaultDeadline
	Calls          *Calls        // nil is Shared()
}

// SysPath is elem under the sysfs root.
func (h *Host) SysPath(elem ...string) string { return join(h.Sys, "/sys", elem) }

// ProcPath is elem under the procfs root.
func (h *Host) ProcPath(elem ...string) string { return join(h.Proc, "/proc", elem) }

// DevPath is elem under the device nodes' root.
func (h *Host) DevPath(elem ...string) string { return join(h.Dev, "/dev", elem) }

func join(root, def string, elem []string) string {
	if root == "" {
		root = def
	}
	return filepath.Join(append([]string{root}, elem...)...)
}

func (h *Host) deadline() time.Duration {
	if h == nil || h.Deadline <= 0 {
		return DefaultDeadline
	}
	return h.Deadline
}

func (h *Host) calls() *Calls {
	if h == nil || h.Calls == nil {
		return shared
	}
	return h.Calls
}

// DevNum is a device number as the kernel writes it ("8:0").
type DevNum struct{ Major, Minor uint32 }

func (d DevNum) String() string { return fmt.Sprintf("%d:%d", d.Major, d.Minor) }

// ParseDevNum reads "MAJOR:MINOR" (mountinfo, a sysfs dev attribute).
func ParseDevNum(s string) (DevNum, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return DevNum{}, fmt.Errorf("bad major:minor %q", s)
	}
	maj, err1 := strconv.ParseUint(a, 10, 32)
	min, err2 := strconv.ParseUint(b, 10, 32)
	if err1 != nil || err2 != nil {
		return DevNum{}, fmt.Errorf("bad major:minor %q", s)
	}
	return DevNum{uint32(maj), uint32(min)}, nil
}

// DevNumOf splits a dev_t as Linux encodes it (st_dev, st_rdev).
func DevNumOf(dev uint64) DevNum {
	return DevNum{
		Major: uint32((dev>>8)&0xfff | (dev>>32)&^uint64(0xfff)),
		Minor: uint32(dev&0xff | (dev>>12)&^uint64(0xff)),
	}
}

// Encode is the dev_t of d as Linux encodes it.
func (d DevNum) Encode() uint64 {
	maj, min := uint64(d.Major), uint64(d.Minor)
	return (maj&0xfff)<<8 | (maj&^0xfff)<<32 | min&0xff | (min&^0xff)<<12
}
