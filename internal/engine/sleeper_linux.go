package engine

import (
	"os"
	"sync/atomic"
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
	due  int64           // the instant armed, on the sleeping goroutine
	// stop, when set, is the run's stop flag: fire's wake ends a wait
	// only once it is set.
	stop *atomic.Bool
	done func(fd uintptr) bool // t.expired, bound once: waiting allocates nothing
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
	t.done = t.expired
	return t, nil
}

// arm sets the timer to expire at the absolute Nanotime instant at (> 0),
// for Sleeper.Until on the sleeping goroutine: its ItimerSpec is that
// goroutine's alone.
func (t *timerFD) arm(at int64) error {
	t.due = at
	t.its.Value = unix.NsecToTimespec(at)
	return t.settime(&t.its)
}

// watch makes a wait also end when stop is set (with fire's wake).
func (t *timerFD) watch(stop *atomic.Bool) { t.stop = stop }

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

// wait parks the goroutine in the network poller until the instant
// armed has come (or the run's stop). It asks the clock before it parks,
// always: the poller is edge-triggered and RawRead forgets a readiness
// that came before it (pollReset), so a timer that expired between arm
// and wait (a short slot, a preempted goroutine) has no edge left to come,
// and only the clock says it has expired. Going to the poller first
// without looking lost that wake-up and slept until the run's stop.
//
// The clock, not a read of the timer's expiry count: the timer expires
// on the same CLOCK_MONOTONIC no earlier than the instant armed, so the
// clock has passed it whenever the timer has fired, and a vDSO clock read
// costs no system call where a read costs two per sleep (one finding
// nothing before the park, one taking the count after it). The count is
// never read: arming again (timerfd_settime) sets it back to 0, and each
// expiry after that is an edge of its own.
func (t *timerFD) wait() error { return t.rc.Read(t.done) }

// expired says whether the wait is over: the instant armed has come, or
// the run stopped.
func (t *timerFD) expired(uintptr) bool {
	return Nanotime() >= t.due || t.stop != nil && t.stop.Load()
}

func (t *timerFD) close() { _ = t.file.Close() }
