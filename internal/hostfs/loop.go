package hostfs

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Loop is an attached loop device as sysfs describes it: nothing here
// asks the filesystem of its backing file, so listing the loop devices
// never waits on a filesystem that does not answer.
type Loop struct {
	Name string // "loop3"
	Dev  DevNum // 7:3
	// BackingFile is the kernel's name for the file or device node the
	// loop device shows (see Mounts.Under for what such a name is
	// worth), " (deleted)" cut off into Deleted.
	BackingFile string
	Deleted     bool
	Offset      uint64 // the first byte of the backing shown
	SizeLimit   uint64 // how many bytes are shown (0: to the end)
}

// Span says which bytes of its backing the loop device shows.
func (l Loop) Span() string {
	switch {
	case l.SizeLimit > 0:
		return fmt.Sprintf("bytes %d to %d", l.Offset, l.Offset+l.SizeLimit)
	case l.Offset > 0:
		return fmt.Sprintf("from byte %d", l.Offset)
	}
	return "all of it"
}

// Loops lists the attached loop devices from /sys/block/loop*/loop. A loop
// device detached while it is read is left out (the kernel answers ENXIO
// or ENODEV for one bound to nothing); any other error is returned: a
// loop device ioprobe cannot see is one it cannot check.
func (h *Host) Loops() ([]Loop, error) {
	names, err := h.BlockDevices()
	if err != nil {
		return nil, err
	}
	var out []Loop
	for _, name := range names {
		if !strings.HasPrefix(name, "loop") {
			continue
		}
		l, ok, err := h.loop(name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if ok {
			out = append(out, l)
		}
	}
	return out, nil
}

// Loop describes loop device name; false when it is not attached.
func (h *Host) Loop(name string) (Loop, bool, error) { return h.loop(name) }

func (h *Host) loop(name string) (Loop, bool, error) {
	dir := h.SysPath("block", name)
	detached := func(err error) bool {
		return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENODEV) || errors.Is(err, syscall.ENXIO)
	}
	file, err := ReadText(filepath.Join(dir, "loop", "backing_file"), LimitAttr)
	if detached(err) {
		return Loop{}, false, nil
	}
	if err != nil {
		return Loop{}, false, err
	}
	l := Loop{Name: name}
	l.BackingFile, l.Deleted = strings.CutSuffix(file, " (deleted)")
	dev, err := ReadText(filepath.Join(dir, "dev"), LimitAttr)
	if err != nil {
		return Loop{}, false, err
	}
	if l.Dev, err = ParseDevNum(dev); err != nil {
		return Loop{}, false, err
	}
	for attr, v := range map[string]*uint64{"offset": &l.Offset, "sizelimit": &l.SizeLimit} {
		s, err := ReadText(filepath.Join(dir, "loop", attr), LimitAttr)
		if detached(err) {
			return Loop{}, false, nil
		}
		if err != nil {
			return Loop{}, false, err
		}
		if *v, err = strconv.ParseUint(s, 10, 64); err != nil {
			return Loop{}, false, fmt.Errorf("loop/%s: %w", attr, err)
		}
	}
	return l, true, nil
}

// Describe names loop device l and where its backing file lies, for an
// error: "loop device loop1 (its backing file /x/img, on the fuse mount
// /x (StallFS))". ms may be nil.
func (l Loop) Describe(ms Mounts) string {
	s := "loop device " + l.Name + " (its backing file " + l.BackingFile
	if l.Deleted {
		s += ", deleted"
	}
	if under := ms.Under(l.BackingFile); len(under) > 0 {
		s += ", on " + under[0].String()
	}
	return s + ")"
}
