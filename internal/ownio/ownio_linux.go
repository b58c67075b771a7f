package ownio

import (
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// The I/O priority's layout (include/uapi/linux/ioprio.h).
const (
	classShift = 13
	hintShift  = 3
	levelMask  = 7
	classNone  = 0
	classRT    = 1
	classBE    = 2
	classIdle  = 3
	whoProcess = 1
)

// Do runs fn with its I/O marked, on an OS thread of its own that ends
// with it, and says whether the mark was taken: a kernel before Linux 6.5
// refuses a hint (EINVAL), and fn then runs unmarked.
func Do(fn func() error) (marked bool, err error) {
	type out struct {
		marked bool
		err    error
	}
	done := make(chan out, 1)
	go func() {
		// Never unlocked: the thread ends with this goroutine, and its
		// I/O priority with it.
		runtime.LockOSThread()
		m := mark() == nil
		done <- out{m, fn()}
	}()
	o := <-done
	return o.marked, o.err
}

// mark gives the calling thread ioprobe's mark: its class and level as
// the kernel has them (for a thread with none set, as it derives them
// from the scheduling policy and nice value), and the hint.
func mark() error {
	tid := unix.Gettid()
	prio, _, errno := unix.Syscall(unix.SYS_IOPRIO_GET, whoProcess, uintptr(tid), 0)
	if errno != 0 {
		return errno
	}
	class, level := int(prio)>>classShift, int(prio)&levelMask
	if class == classNone {
		class, level = niceClass(tid)
	}
	v := class<<classShift | Hint<<hintShift | level
	if _, _, errno := unix.Syscall(unix.SYS_IOPRIO_SET, whoProcess, uintptr(tid), uintptr(v)); errno != 0 {
		return errno
	}
	return nil
}

// niceClass is the class and level the kernel gives a thread without an
// I/O priority of its own (task_nice_ioclass, task_nice_ioprio).
func niceClass(tid int) (class, level int) {
	class = classBE
	switch p, _ := unix.SchedGetAttr(tid, 0); {
	case p == nil:
	case p.Policy == unix.SCHED_IDLE:
		class = classIdle
	case p.Policy == unix.SCHED_FIFO || p.Policy == unix.SCHED_RR:
		class = classRT
	}
	// getpriority(2)'s system call answers 20 - nice.
	raw, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if err != nil {
		return class, 4
	}
	nice := 20 - raw
	return class, min(max((nice+20)/5, 0), 7)
}

var marks struct {
	once sync.Once
	ok   bool
}

// Marks says whether this kernel takes the mark (asked once, on a thread
// that ends with the question).
func Marks() bool {
	marks.once.Do(func() {
		marks.ok, _ = Do(func() error { return nil })
	})
	return marks.ok
}
