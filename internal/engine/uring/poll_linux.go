package uring

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// ringPoll is a paced ring's descriptor in the runtime's network poller: a
// duplicate of it, non-blocking, which is readable while the ring has
// completions to reap (io_uring's poll). A paced ring whose I/O outlasts
// its brief wait (briefWait) parks its goroutine there until the
// completion comes, as its Sleeper parks it until its next slot: the
// processor is free meanwhile and the runtime's sysmon thread stays in its
// deep sleep, where a blocking io_uring_enter through the runtime's system
// call entry would wake it (and it would then poll every 20 µs until the
// completion came: at a canary's rate on a slow disk, more context switches
// than the I/O's own). Nothing is allocated per wait.
type ringPoll struct {
	file *os.File
	rc   syscall.RawConn
	r    *ring
	want uint32                // completions the wait is for
	done func(fd uintptr) bool // p.ready, bound once
}

// enablePoll puts the ring in the runtime's poller. On failure the ring
// waits in io_uring_enter as before.
func (r *ring) enablePoll() error {
	fd, err := unix.FcntlInt(uintptr(r.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return err
	}
	p := &ringPoll{file: os.NewFile(uintptr(fd), "io_uring"), r: r}
	if p.rc, err = p.file.SyscallConn(); err != nil {
		p.file.Close()
		return err
	}
	p.done = p.ready
	r.poll = p
	return nil
}

// ready says whether the wait is over. Called by the poller with the
// duplicate's descriptor, which it does not need.
func (p *ringPoll) ready(uintptr) bool { return p.r.completions() >= p.want }

// wait parks the goroutine until the ring has at least want completions.
// The poller is edge-triggered and forgets an edge that came before the
// wait began, so ready is asked first, after the poller's reset: a
// completion posted before it is seen there, one posted after it wakes the
// wait.
func (p *ringPoll) wait(want uint32) error {
	p.want = want
	return p.rc.Read(p.done)
}

func (p *ringPoll) close() error { return p.file.Close() }
