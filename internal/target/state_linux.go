package target

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"golang.org/x/sys/unix"
)

// The marker's state follows ioprobe's writes to a file it owns: busy
// before the first byte of a fill, an extension or a write run, ready
// (with the file's size and times) once they end. Every change of state
// goes through the file's descriptor.

// markBusy marks the file open as fd busy: an ioprobe run is about to
// write it. The generation goes up by one.
func markBusy(fd int, m marker) (marker, error) {
	m.gen++
	m.busy = true
	m.run = rand.Uint64() | 1
	return m, setMarker(fd, m)
}

// markReady marks the file open as fd ready, recording its size and
// times as they are now. Writing the marker moves the change time; it is
// written again (a few times at most) until it moved by less than
// ctimeSlack, so that the next run's check of the change time holds.
func markReady(fd int, m marker) (marker, error) {
	m.busy, m.run = false, 0
	for try := 0; ; try++ {
		before, err := timesOf(fd)
		if err != nil {
			return m, fmt.Errorf("statx: %w", err)
		}
		m.mtime, m.ctime = before.mtime, before.ctime
		if before.size != m.size {
			return m, fmt.Errorf("its size is %d bytes, not the %d ioprobe filled", before.size, m.size)
		}
		if err := setMarker(fd, m); err != nil {
			return m, err
		}
		after, err := timesOf(fd)
		if err != nil {
			return m, fmt.Errorf("statx: %w", err)
		}
		if after.mtime == m.mtime && after.size == m.size && after.ctime-m.ctime <= int64(ctimeSlack) || try == 3 {
			return m, nil
		}
	}
}

// setMarker writes the marker xattr through fd. A filesystem without
// user xattrs is not an error: the file then works for this run only.
func setMarker(fd int, m marker) error {
	err := unix.Fsetxattr(fd, markerXattr, []byte(m.String()), 0)
	if err != nil && !errors.Is(err, unix.ENOTSUP) {
		return fmt.Errorf("mark as ioprobe's (xattr %s): %w", markerXattr, err)
	}
	return nil
}

// tryLockAlone takes the writers' flock on fd exclusively if nobody else
// holds it (converting a shared one this descriptor holds): true when
// this is the only run writing the file.
func tryLockAlone(fd int) bool {
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EINTR {
			return err == nil
		}
	}
}

// lockedByWriter says whether a run holds the writers' flock on the file
// open as fd (a descriptor of this Open's own, which holds no lock yet).
// Where flock fails otherwise, it says no: the caller then reads every
// sector rather than trust a run it cannot see.
func lockedByWriter(fd int) bool {
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		switch err {
		case unix.EINTR:
			continue
		case unix.EWOULDBLOCK:
			return true
		case nil:
			unix.Flock(fd, unix.LOCK_UN)
		}
		return false
	}
}
