package runner

import (
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// reopen returns a second descriptor of the opened target fd for a group
// that needs other open flags than the target's O_DIRECT one: --sync
// (O_DSYNC or O_SYNC, which Linux sets only at open time) and --buffered
// (no O_DIRECT: the page cache, fio's direct=0). The same file or device
// is reopened through /proc/self/fd, so no path is resolved again and no
// safety check is bypassed. The caller closes it once the engines have
// returned.
func reopen(fd int, mode string, buffered bool) (int, error) {
	flags := unix.O_RDWR | unix.O_CLOEXEC
	if !buffered {
		flags |= unix.O_DIRECT
	}
	switch mode {
	case workload.SyncNone:
	case workload.SyncDsync:
		flags |= unix.O_DSYNC
	case workload.SyncSync:
		flags |= unix.O_SYNC
	default:
		return -1, fmt.Errorf("--sync %q: unknown mode", mode)
	}
	for {
		nfd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(fd), flags, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			what := map[string]string{workload.SyncNone: "", workload.SyncDsync: " O_DSYNC", workload.SyncSync: " O_SYNC"}[mode]
			if buffered {
				what += " without O_DIRECT (buffered)"
			}
			return -1, fmt.Errorf("reopening the target%s: %w", what, err)
		}
		return nfd, nil
	}
}

// readOnlyReopen is reopen for a group that only reads a target opened
// read-only (a buffered read of a device or file that is not written).
func readOnlyReopen(fd int) (int, error) {
	for {
		nfd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(fd), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, fmt.Errorf("reopening the target without O_DIRECT (buffered): %w", err)
		}
		return nfd, nil
	}
}

func closeFD(fd int) { _ = unix.Close(fd) }

func fsyncFD(fd int) error { return unix.Fsync(fd) }
