package engine

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// timerFD is a non-blocking CLOCK_MONOTONIC timerfd (the clock of Nanotime)
// in the runtime's network poller. Arming and reading it use RawSyscall:
// neither call can block (the descriptor is non-blocking), so they need not
// tell the scheduler, whose syscall entry would wake a sleeping sysmon.
type timerFD struct {
	file *os.File
	rc   syscall.RawConn
	fd   uintptr
	its  unix.ItimerSpec // arm's, on the sleeping goroutine
	past unix.ItimerSpec // fire's: 1 ns on the clock, set once
	buf  [8]byte
	read func(fd uintptr) bool // t.expired, bound once: waiting allocates nothing
}

func newTimerFD() (*timerFD, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	t := &timerFD{file: os.NewFile(uintptr(fd), "timerfd"), fd: uintptr(fd)}
	t.past.Value = unix.NsecToTimespec(1)
	if t.rc, err = t.file.SyscallConn(); err != nil {
		t.file.Close()
		return nil, err
	}
	t.read = t.expired
	return t, nil
}

// arm sets the timer to expire at the absolute Nanotime instant at (> 0),
// for Sleeper.Until on the sleeping goroutine: its ItimerSpec is that
// goroutine's alone.
func (t *timerFD) arm(at int64) error {
	t.its.Value = unix.NsecToTimespec(at)
	return t.settime(&t.its)
}

// fire makes the timer expire at once, for a stop's wake on another
// goroutine: its ItimerSpec (an instant long past) is written once, when
// the timer is made, and only read after, so a wake never races the
// sleeping goroutine's arm.
func (t *timerFD) fire() error { return t.settime(&t.past) }

func (t *timerFD) settime(its *unix.ItimerSpec) error {
	_, _, errno := unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, t.fd, unix.TFD_TIMER_ABSTIME, uintptr(unsafe.Pointer(its)), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// wait parks the goroutine in the network poller until the timer has
// expired (since it was last read). It reads before it parks, always: the
// poller is edge-triggered and RawRead forgets a readiness that came
// before it (pollReset), so a timer that expired between arm and wait
// (a short slot, a preempted goroutine) has no edge left to come, and
// only the read sees it. Going to the poller first without reading lost
// that wake-up and slept until the run's stop.
func (t *timerFD) wait() error { return t.rc.Read(t.read) }

// expired reads the expiry count: false (wait for readiness) while the
// timer has not expired.
func (t *timerFD) expired(fd uintptr) bool {
	_, _, errno := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&t.buf[0])), uintptr(len(t.buf)))
	return errno != unix.EAGAIN
}

func (t *timerFD) close() { _ = t.file.Close() }
