//go:build !linux

package engine

import (
	"errors"
	"sync/atomic"
)

// timerFD exists on Linux only; elsewhere a Sleeper naps.
type timerFD struct{}

func newTimerFD() (*timerFD, error) { return nil, errors.New("no timerfd") }
func (*timerFD) arm(int64) error    { return errors.ErrUnsupported }
func (*timerFD) wait() error        { return errors.ErrUnsupported }
func (*timerFD) fire() error        { return errors.ErrUnsupported }
func (*timerFD) close()             {}
func (*timerFD) watch(*atomic.Bool) {}
