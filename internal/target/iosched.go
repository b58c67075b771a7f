package target

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ioprobe/ioprobe/internal/hostfs"
)

// IOScheduler is the I/O scheduler of the block device that I/O to a path
// reaches, as fio's ioscheduler option finds it (diskutil.c: the device
// of the file's filesystem, or the device itself; the whole disk of a
// partition) and as /sys/block/DEV/queue/scheduler lists it.
type IOScheduler struct {
	// Device is the kernel name of the device ("loop3", "sda"); "" when
	// the path's filesystem has no block device in sysfs (btrfs's
	// anonymous st_dev, overlayfs, NFS), where fio switches nothing.
	Device string
	// Missing: the device has no scheduler file (fio: "os or kernel
	// doesn't support IO scheduler switching", and it goes on).
	Missing bool
	// Current is the scheduler in use (the bracketed name); Offered
	// every one the kernel lists. A device that takes no scheduler
	// (bio-based: dm, md, zram) lists only "none", unbracketed: not
	// Tunable (fio: "io scheduler is not tunable", and it goes on).
	Current string
	Offered []string
	Tunable bool

	file string
}

// SchedulerOf reads the I/O scheduler of the device under path (a file
// that does not exist yet: under its directory). It changes nothing.
func SchedulerOf(path string) (IOScheduler, error) {
	key, err := DeviceKey(path)
	if err != nil {
		return IOScheduler{}, err
	}
	if strings.HasPrefix(key, "dev ") {
		return IOScheduler{}, nil
	}
	return readScheduler("", key)
}

// readScheduler reads device name's scheduler file under sysRoot.
func readScheduler(sysRoot, name string) (IOScheduler, error) {
	dir, err := blockDir(sysRoot, name)
	if err != nil {
		return IOScheduler{}, err
	}
	s := IOScheduler{Device: name, file: filepath.Join(dir, "queue", "scheduler")}
	b, err := os.ReadFile(s.file)
	if errors.Is(err, fs.ErrNotExist) {
		s.Missing = true
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("%s: %w", s.file, err)
	}
	s.parse(string(b))
	return s, nil
}

// parse reads the kernel's list: "none [mq-deadline] kyber bfq", or
// "none" for a device that takes none.
func (s *IOScheduler) parse(text string) {
	s.Current, s.Offered, s.Tunable = hostfs.ParseScheduler(text)
}

// Reread reads the device's scheduler file again.
func (s IOScheduler) Reread() (IOScheduler, error) {
	b, err := os.ReadFile(s.file)
	if err != nil {
		return s, err
	}
	now := s
	now.parse(string(b))
	return now, nil
}

// Offers says whether the kernel lists the scheduler name for the device.
func (s IOScheduler) Offers(name string) bool { return slices.Contains(s.Offered, name) }

// CanSwitch says whether this process may write the scheduler file: it
// opens it for reading and writing, as fio does (fopen "r+"), and writes
// nothing. The error is the open's ("permission denied" for anyone but
// root, "read-only file system" in a container with /sys read-only).
func (s IOScheduler) CanSwitch() error {
	f, err := os.OpenFile(s.file, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	return f.Close()
}

// Switch writes name to the device's scheduler file and reads it back, as
// fio's set_ioscheduler does: the scheduler in use must then be name.
// It returns the device's state after the write.
func (s IOScheduler) Switch(name string) (IOScheduler, error) {
	f, err := os.OpenFile(s.file, os.O_RDWR, 0)
	if err != nil {
		return s, err
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte(name), 0); err != nil {
		return s, fmt.Errorf("write %q to %s: %w", name, s.file, err)
	}
	buf := make([]byte, 4096)
	n, err := f.ReadAt(buf, 0)
	if n == 0 && err != nil {
		return s, fmt.Errorf("read %s back: %w", s.file, err)
	}
	now := s
	now.parse(string(buf[:n]))
	if now.Tunable && now.Current != name {
		return now, fmt.Errorf("%s says %q after ioprobe wrote %q to it", s.file, strings.TrimSpace(string(buf[:n])), name)
	}
	return now, nil
}
