//go:build linux && (amd64 || arm64 || loong64 || mips64 || mips64le || ppc64 || ppc64le || riscv64 || s390x)

package syncio

import (
	"syscall"
	"unsafe"
)

// pread and pwrite are one system call each through the runtime's
// syscall entry (syscall.Syscall6), returning what the engine records:
// bytes, or -errno. x/sys/unix's Pread and Pwrite add a frame and an
// error value per call. Not RawSyscall: a read or write of a block device
// sleeps uninterruptibly for as long as the device takes, and a thread
// that did not tell the scheduler would hold its processor, and any
// stop-the-world, for all that time (docs/performance.md, "QD 1").
func pread(fd int, b []byte, off int64) int64 {
	return rw(syscall.SYS_PREAD64, fd, b, off)
}

func pwrite(fd int, b []byte, off int64) int64 {
	return rw(syscall.SYS_PWRITE64, fd, b, off)
}

func rw(trap uintptr, fd int, b []byte, off int64) int64 {
	n, _, errno := syscall.Syscall6(trap, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), uintptr(off), 0, 0)
	if errno != 0 {
		return -int64(errno)
	}
	return int64(n)
}
