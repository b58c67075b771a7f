package runner

import (
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// syncOpen returns a second descriptor of the opened target fd for a
// group run with --sync: the same file or device (reopened through
// /proc/self/fd, so no path is resolved again and no safety check is
// bypassed) with O_DSYNC or O_SYNC, which Linux sets only at open time. The
// caller closes it once the engines have returned.
func syncOpen(fd int, mode string) (int, error) {
	flags := unix.O_RDWR | unix.O_DIRECT | unix.O_CLOEXEC
	switch mode {
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
			return -1, fmt.Errorf("reopening the target with O_%s: %w", map[string]string{workload.SyncDsync: "DSYNC", workload.SyncSync: "SYNC"}[mode], err)
		}
		return nfd, nil
	}
}

func closeFD(fd int) { _ = unix.Close(fd) }
