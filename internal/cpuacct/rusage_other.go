//go:build !unix

package cpuacct

import (
	"errors"
	"time"
)

func processTimes() (user, sys time.Duration, err error) {
	return 0, 0, errors.New("process CPU time (getrusage) is not supported on this platform")
}
