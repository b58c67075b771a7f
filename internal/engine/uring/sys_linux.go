package uring

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel ABI, from include/uapi/linux/io_uring.h. Only what the engine
// uses is declared.
const (
	setupSQPoll         = 1 << 1
	setupClamp          = 1 << 4
	setupSubmitAll      = 1 << 7  // 5.18: keep submitting after a failed SQE
	setupCoopTaskrun    = 1 << 8  // 5.19: no IPI to run completions
	setupSingleIssuer   = 1 << 12 // 6.0: one task submits
	setupDeferTaskrun   = 1 << 13 // 6.1: completions run only in io_uring_enter(GETEVENTS)
	featSingleMmap      = 1 << 0
	featNoDrop          = 1 << 1
	featExtArg          = 1 << 8
	enterGetEvents      = 1 << 0
	enterExtArg         = 1 << 3
	enterRegisteredRing = 1 << 4 // 5.18: the fd argument is a registered ring's index
	sqeFixedFile        = 1 << 0
	opNop               = 0
	opFsync             = 3
	opTimeout           = 11     // tests only
	fsyncDatasync       = 1 << 0 // IORING_FSYNC_DATASYNC, in the SQE's fsync_flags
	opReadFixed         = 4
	opWriteFixed        = 5
	opRead              = 22
	opWrite             = 23
	offSQRing           = 0
	offCQRing           = 0x8000000
	offSQEs             = 0x10000000
	registerBuffers     = 0
	unregisterBuffers   = 1
	registerFiles       = 2
	unregisterFiles     = 3
	registerRingFDs     = 20 // 5.18
	unregisterRingFDs   = 21
	maxRegisteredBufs   = 1 << 14 // IORING_MAX_REG_BUFFERS
	maxRegisteredBufLen = 1 << 30 // a registered buffer may not exceed 1 GiB
)

type sqringOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	resv2                                                           uint64
}

type cqringOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	resv2                                                           uint64
}

type params struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqringOffsets
	cqOff                                                                  cqringOffsets
}

// sqe is struct io_uring_sqe (64 bytes) with the read/write view of its
// unions.
type sqe struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16
	fd          int32
	off         uint64
	addr        uint64
	len         uint32
	rwFlags     uint32
	userData    uint64
	bufIndex    uint16
	personality uint16
	fileIndex   uint32
	addr3       uint64
	_           uint64
}

// rsrcUpdate is struct io_uring_rsrc_update, for IORING_REGISTER_RING_FDS.
type rsrcUpdate struct {
	offset, resv uint32
	data         uint64
}

// cqe is struct io_uring_cqe (16 bytes; the ring is never set up with CQE32).
type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

// geteventsArg is struct io_uring_getevents_arg, passed with
// IORING_ENTER_EXT_ARG to wait with a timeout.
type geteventsArg struct {
	sigmask   uint64
	sigmaskSz uint32
	minWaitUs uint32
	ts        uint64 // *unix.Timespec
}

// Compile-time checks of the ABI sizes.
var (
	_ [64 - unsafe.Sizeof(sqe{})]struct{}
	_ [unsafe.Sizeof(sqe{}) - 64]struct{}
	_ [16 - unsafe.Sizeof(cqe{})]struct{}
	_ [unsafe.Sizeof(cqe{}) - 16]struct{}
	_ [120 - unsafe.Sizeof(params{})]struct{}
	_ [unsafe.Sizeof(params{}) - 120]struct{}
	_ [24 - unsafe.Sizeof(geteventsArg{})]struct{}
	_ [unsafe.Sizeof(geteventsArg{}) - 24]struct{}
)

func sysSetup(entries uint32, p *params) (int, error) {
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(p)), 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// sysEnter is io_uring_enter(2). It goes through the runtime's syscall
// entry (not RawSyscall): it may block, and the scheduler must be able to
// hand this thread's P to other goroutines meanwhile.
func sysEnter(fd int, toSubmit, minComplete, flags uint32, arg unsafe.Pointer, argSize uintptr) (int, unix.Errno) {
	n, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(fd), uintptr(toSubmit), uintptr(minComplete), uintptr(flags), uintptr(arg), argSize)
	return int(n), errno
}

// sysEnterNoWait is io_uring_enter(2) for a call that waits for nothing
// (min_complete 0): a submission, which the kernel does without sleeping
// (an I/O that cannot go at once completes with EAGAIN inside io_uring and
// is retried by a worker thread). It skips the runtime's syscall entry and
// exit, which cost a few hundred nanoseconds of the one call per I/O that
// submitting each I/O on its own makes.
func sysEnterNoWait(fd int, toSubmit, flags uint32) (int, unix.Errno) {
	n, _, errno := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(fd), uintptr(toSubmit), 0, uintptr(flags), 0, 0)
	return int(n), errno
}

func sysRegister(fd int, opcode uint32, arg unsafe.Pointer, nr uint32) error {
	_, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(fd), uintptr(opcode), uintptr(arg), uintptr(nr), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
