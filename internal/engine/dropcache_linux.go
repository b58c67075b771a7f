package engine

import (
	"time"

	"golang.org/x/sys/unix"
)

// DropCache drops the page cache of the target open on fd, as fio's
// invalidate=1 does before a buffered job and each time it starts a new
// pass (filesetup.c: __file_invalidate_cache): BLKFLSBUF for a block
// device (which writes back dirty pages first; retried for a quarter of a
// second while a multipath map is busy, as fio does), else
// posix_fadvise(POSIX_FADV_DONTNEED) over the whole file. Like fio it
// carries on when the kernel declines: the error is returned for the
// caller to report, never a reason to stop.
func DropCache(fd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED)
	}
	var err error
	for try := 0; try < 25; try++ {
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(unix.BLKFLSBUF), 0); errno == 0 {
			return nil
		} else if err = errno; errno != unix.EAGAIN {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return err
}

// DropCache drops the cache of the target open on fd when an I/O starts a
// new pass over a buffered run's region (workload.Op.DropCache). A
// failure is counted, not fatal (fio carries on too).
func (w *Worker) DropCache(fd int) {
	if DropCache(fd) != nil {
		w.dropFailures.Add(1)
	}
}
