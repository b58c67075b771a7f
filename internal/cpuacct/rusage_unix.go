//go:build unix

package cpuacct

import (
	"time"

	"golang.org/x/sys/unix"
)

// processTimes is the user and system time of the whole process, every
// thread included: io_uring's io-wq workers and SQPOLL thread are threads
// of the submitting process, so their time is here too.
func processTimes() (user, sys time.Duration, err error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, err
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), nil
}
