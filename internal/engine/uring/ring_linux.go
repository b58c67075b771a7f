package uring

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// maxEntries is the largest submission queue io_uring_setup accepts
// (IORING_MAX_ENTRIES).
const maxEntries = 32768

// optionalFlags are the setup flags the engine wants, in the order they are
// given up when the kernel answers EINVAL: newest first (DEFER_TASKRUN also
// needs SINGLE_ISSUER, so it must go before it).
var optionalFlags = []struct {
	flag uint32
	name string
}{
	{setupDeferTaskrun, "DEFER_TASKRUN"},
	{setupSingleIssuer, "SINGLE_ISSUER"},
	{setupCoopTaskrun, "COOP_TASKRUN"},
	{setupSubmitAll, "SUBMIT_ALL"},
}

// ring is one io_uring instance with its mapped queues. Only the goroutine
// (and, with SINGLE_ISSUER, the OS thread) that created it may use it.
//
// Ordering with the kernel: the SQ tail and the CQ head are ours and are
// published with atomic stores after the entries they cover are written or
// read; the SQ head and the CQ tail are the kernel's and are read with
// atomic loads before the entries they cover. Go's atomics are sequentially
// consistent, which is at least the acquire/release the ABI asks for.
type ring struct {
	fd       int
	flags    uint32 // setup flags in effect
	features uint32
	// enterFD and enterFlags are io_uring_enter's fd argument and the
	// flags every call adds: the ring's descriptor and none, or, once
	// registerRing has registered it with the calling thread, its index
	// and IORING_ENTER_REGISTERED_RING.
	enterFD    int
	enterFlags uint32

	sqRing, cqRing, sqeMem []byte
	cqShared               bool // one mapping holds both rings (IORING_FEAT_SINGLE_MMAP)

	sqHead, sqTail *uint32
	sqMask         uint32
	sqes           []sqe
	sqTailLocal    uint32 // SQEs written so far; published by publish

	cqHead, cqTail *uint32
	cqMask         uint32
	cqes           []cqe
	cqHeadLocal    uint32

	bufsRegistered, filesRegistered bool

	// poll, when set (a paced ring), is the ring in the runtime's poller:
	// submitAndWaitBrief waits there once its brief wait is over.
	poll *ringPoll

	// wait is the argument of a timed wait; it lives in the ring so that
	// passing it to the kernel allocates nothing.
	wait struct {
		arg geteventsArg
		ts  unix.Timespec
	}
}

// newRing sets up a ring with at least entries submission slots (and twice
// as many completion slots: the kernel's default), asking for every optional
// flag and dropping them one by one while the kernel says EINVAL.
func newRing(entries uint32) (*ring, error) { return newRingWithout(entries, 0) }

// threadBound are the setup flags that bind a ring to the thread that set
// it up: every io_uring_enter must come from it (SINGLE_ISSUER), and
// completions are posted only inside its io_uring_enter (DEFER_TASKRUN).
const threadBound = setupSingleIssuer | setupDeferTaskrun

// newRingWithout is newRing without the optional flags in without (a
// ring whose goroutine is not locked to its thread: threadBound).
func newRingWithout(entries, without uint32) (*ring, error) {
	if entries == 0 || entries > maxEntries {
		return nil, fmt.Errorf("io_uring: %d queue entries (queue depth × targets) is outside 1..%d", entries, maxEntries)
	}
	flags := uint32(0)
	for _, f := range optionalFlags {
		flags |= f.flag
	}
	flags &^= without
	dropped := 0
	for {
		p := params{flags: flags}
		fd, err := sysSetup(entries, &p)
		if err == unix.EINVAL && dropped < len(optionalFlags) {
			flags &^= optionalFlags[dropped].flag
			dropped++
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("io_uring_setup: %w", err)
		}
		r := &ring{fd: fd, flags: p.flags, features: p.features, enterFD: fd}
		if err := r.mmap(&p); err != nil {
			r.close()
			return nil, err
		}
		return r, nil
	}
}

func (r *ring) mmap(p *params) error {
	const prot, mflags = unix.PROT_READ | unix.PROT_WRITE, unix.MAP_SHARED | unix.MAP_POPULATE
	sqSize := int(p.sqOff.array + p.sqEntries*4)
	cqSize := int(p.cqOff.cqes + p.cqEntries*uint32(unsafe.Sizeof(cqe{})))
	if p.features&featSingleMmap != 0 {
		sqSize = max(sqSize, cqSize)
	}
	var err error
	if r.sqRing, err = unix.Mmap(r.fd, offSQRing, sqSize, prot, mflags); err != nil {
		return fmt.Errorf("io_uring: mmap SQ ring: %w", err)
	}
	r.cqRing, r.cqShared = r.sqRing, p.features&featSingleMmap != 0
	if !r.cqShared {
		if r.cqRing, err = unix.Mmap(r.fd, offCQRing, cqSize, prot, mflags); err != nil {
			r.cqRing = nil
			return fmt.Errorf("io_uring: mmap CQ ring: %w", err)
		}
	}
	if r.sqeMem, err = unix.Mmap(r.fd, offSQEs, int(p.sqEntries)*int(unsafe.Sizeof(sqe{})), prot, mflags); err != nil {
		return fmt.Errorf("io_uring: mmap SQEs: %w", err)
	}
	r.sqHead = u32At(r.sqRing, p.sqOff.head)
	r.sqTail = u32At(r.sqRing, p.sqOff.tail)
	r.sqMask = *u32At(r.sqRing, p.sqOff.ringMask)
	r.sqes = unsafe.Slice((*sqe)(unsafe.Pointer(&r.sqeMem[0])), p.sqEntries)
	// SQE i always sits in array slot i: the engine fills SQEs in ring
	// order, so the indirection is set once here and never touched again.
	array := unsafe.Slice(u32At(r.sqRing, p.sqOff.array), p.sqEntries)
	for i := range array {
		array[i] = uint32(i)
	}
	r.sqTailLocal = atomic.LoadUint32(r.sqTail)

	r.cqHead = u32At(r.cqRing, p.cqOff.head)
	r.cqTail = u32At(r.cqRing, p.cqOff.tail)
	r.cqMask = *u32At(r.cqRing, p.cqOff.ringMask)
	r.cqes = unsafe.Slice((*cqe)(unsafe.Pointer(&r.cqRing[p.cqOff.cqes])), p.cqEntries)
	r.cqHeadLocal = atomic.LoadUint32(r.cqHead)
	return nil
}

func u32At(mem []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&mem[off])) }

// sqEntries is the size of the submission queue.
func (r *ring) sqEntries() int { return len(r.sqes) }

// nextSQE returns the next submission slot. The caller must not have more
// unsubmitted SQEs than the queue holds; the engine never has more I/Os in
// flight than that.
func (r *ring) nextSQE() *sqe {
	e := &r.sqes[r.sqTailLocal&r.sqMask]
	r.sqTailLocal++
	return e
}

// publish makes the SQEs written so far visible to the kernel.
func (r *ring) publish() { atomic.StoreUint32(r.sqTail, r.sqTailLocal) }

// unsubmitted is the number of published SQEs the kernel has not consumed.
func (r *ring) unsubmitted() uint32 { return r.sqTailLocal - atomic.LoadUint32(r.sqHead) }

// submit hands every unsubmitted SQE to the kernel without waiting for
// anything. It returns what io_uring_enter returned: the number submitted,
// or an errno (EAGAIN or EBUSY when the kernel could not take them now).
func (r *ring) submit() (int, unix.Errno) {
	r.publish()
	return sysEnterNoWait(r.enterFD, r.unsubmitted(), r.enterFlags)
}

// submitAndWait submits every unsubmitted SQE and waits until at least
// minComplete completions are in the CQ ring, or until timeoutNs has passed
// when timeoutNs > 0. It returns what io_uring_enter returned: with
// something submitted, the number submitted, else 0 or an errno (EINTR when
// a signal interrupted the wait, ETIME when the timeout passed).
func (r *ring) submitAndWait(minComplete uint32, timeoutNs int64) (int, unix.Errno) {
	r.publish()
	toSubmit := r.unsubmitted()
	if minComplete == 0 {
		return sysEnterNoWait(r.enterFD, toSubmit, r.enterFlags|enterGetEvents)
	}
	if timeoutNs <= 0 {
		return sysEnter(r.enterFD, toSubmit, minComplete, r.enterFlags|enterGetEvents, nil, 0)
	}
	w := &r.wait
	w.ts = unix.NsecToTimespec(timeoutNs)
	w.arg = geteventsArg{ts: uint64(uintptr(unsafe.Pointer(&w.ts)))}
	return sysEnter(r.enterFD, toSubmit, minComplete, r.enterFlags|enterGetEvents|enterExtArg, unsafe.Pointer(&w.arg), unsafe.Sizeof(w.arg))
}

// briefWait bounds the first wait of a paced ring for its completions (see
// submitAndWaitBrief): what its goroutine may hold its processor without
// telling the scheduler, as a goroutine may compute for that long.
const briefWait = 1_000_000 // ns

// submitAndWaitBrief is submitAndWait without a timeout for a paced ring:
// it submits and waits up to briefWait through RawSyscall, then, when the
// completions have not come, goes on waiting in the runtime's poller
// (ringPoll), or, when the ring is not in it, through the runtime's
// syscall entry as submitAndWait does. It returns 0 or an errno.
//
// Why: a paced ring's goroutine comes back from a sleep in the poller,
// where every processor was idle and the runtime's sysmon thread asleep;
// the runtime's syscall entry wakes sysmon, which then polls every 20 µs
// until the processors are idle again: four or five more context switches
// per I/O of a 20 IOPS canary. RawSyscall does not tell the scheduler that
// the thread may block, so it is used only for a wait that cannot last:
// the kernel ends it after briefWait, a signal (the runtime's preemption,
// a stop-the-world) ends it at once, and meanwhile the goroutine holds its
// processor as if it computed, for at most a millisecond.
func (r *ring) submitAndWaitBrief(minComplete uint32) unix.Errno {
	r.publish()
	w := &r.wait
	w.ts = unix.NsecToTimespec(briefWait)
	w.arg = geteventsArg{ts: uint64(uintptr(unsafe.Pointer(&w.ts)))}
	_, _, errno := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.enterFD), uintptr(r.unsubmitted()), uintptr(minComplete),
		uintptr(r.enterFlags|enterGetEvents|enterExtArg), uintptr(unsafe.Pointer(&w.arg)), unsafe.Sizeof(w.arg))
	switch errno {
	case 0, unix.ETIME, unix.EINTR:
	default:
		return errno
	}
	if r.completions() >= minComplete {
		return 0
	}
	if r.poll != nil && r.unsubmitted() == 0 {
		if err := r.poll.wait(minComplete); err == nil {
			return 0
		}
	}
	_, errno = sysEnter(r.enterFD, r.unsubmitted(), minComplete, r.enterFlags|enterGetEvents, nil, 0)
	return errno
}

// registerRing registers the ring's descriptor with the calling thread
// (IORING_REGISTER_RING_FDS, as t/io_uring does by default), so that
// io_uring_enter finds the ring by index instead of looking the
// descriptor up, and taking and dropping a reference to it, in the
// process's shared descriptor table on every call. The index is the
// thread's: the ring is used from its one locked thread, and close
// unregisters it from that thread. Without it (before Linux 5.18)
// calls go by descriptor as before.
func (r *ring) registerRing() error {
	up := rsrcUpdate{offset: ^uint32(0), data: uint64(r.fd)} // any free index
	n, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerRingFDs, uintptr(unsafe.Pointer(&up)), 1, 0, 0)
	if errno != 0 {
		return fmt.Errorf("io_uring: register ring: %w", errno)
	}
	if n != 1 {
		return fmt.Errorf("io_uring: register ring: %d registered", n)
	}
	r.enterFD, r.enterFlags = int(up.offset), enterRegisteredRing
	return nil
}

// completions is the number of CQEs posted and not yet reaped.
func (r *ring) completions() uint32 { return atomic.LoadUint32(r.cqTail) - r.cqHeadLocal }

// registerBuffers registers iovs as fixed buffers 0..len(iovs)-1.
func (r *ring) registerBuffers(iovs []unix.Iovec) error {
	if len(iovs) == 0 || len(iovs) > maxRegisteredBufs {
		return fmt.Errorf("io_uring: cannot register %d buffers (1..%d)", len(iovs), maxRegisteredBufs)
	}
	if err := sysRegister(r.fd, registerBuffers, unsafe.Pointer(&iovs[0]), uint32(len(iovs))); err != nil {
		return fmt.Errorf("io_uring: register buffers: %w", err)
	}
	r.bufsRegistered = true
	return nil
}

// registerFiles registers fds as fixed files 0..len(fds)-1.
func (r *ring) registerFiles(fds []int32) error {
	if len(fds) == 0 {
		return errors.New("io_uring: no files to register")
	}
	if err := sysRegister(r.fd, registerFiles, unsafe.Pointer(&fds[0]), uint32(len(fds))); err != nil {
		return fmt.Errorf("io_uring: register files: %w", err)
	}
	r.filesRegistered = true
	return nil
}

// close unregisters what was registered, unmaps the queues and closes the
// ring. Every I/O must have completed (the engine drains before closing).
func (r *ring) close() error {
	var errs []error
	if r.enterFlags&enterRegisteredRing != 0 {
		up := rsrcUpdate{offset: uint32(r.enterFD)}
		if _, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), unregisterRingFDs, uintptr(unsafe.Pointer(&up)), 1, 0, 0); errno != 0 {
			errs = append(errs, fmt.Errorf("io_uring: unregister ring: %w", errno))
		}
		r.enterFD, r.enterFlags = r.fd, 0
	}
	if r.poll != nil {
		errs = append(errs, r.poll.close())
		r.poll = nil
	}
	if r.bufsRegistered {
		errs = append(errs, sysRegister(r.fd, unregisterBuffers, nil, 0))
		r.bufsRegistered = false
	}
	if r.filesRegistered {
		errs = append(errs, sysRegister(r.fd, unregisterFiles, nil, 0))
		r.filesRegistered = false
	}
	r.sqes, r.cqes = nil, nil
	if r.sqeMem != nil {
		errs = append(errs, unix.Munmap(r.sqeMem))
	}
	if r.cqRing != nil && !r.cqShared {
		errs = append(errs, unix.Munmap(r.cqRing))
	}
	if r.sqRing != nil {
		errs = append(errs, unix.Munmap(r.sqRing))
	}
	r.sqeMem, r.cqRing, r.sqRing = nil, nil, nil
	if r.fd >= 0 {
		errs = append(errs, unix.Close(r.fd))
		r.fd = -1
	}
	return errors.Join(errs...)
}

// describeFlags names the optional setup flags in effect ("none" if none).
func describeFlags(flags uint32) string {
	var names []string
	for i := len(optionalFlags) - 1; i >= 0; i-- {
		if flags&optionalFlags[i].flag != 0 {
			names = append(names, optionalFlags[i].name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, "|")
}
