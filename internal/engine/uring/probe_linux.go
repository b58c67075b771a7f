package uring

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// probe sets up a two-entry ring with the flags the engine uses, submits
// one NOP and reaps it: a seccomp filter may allow io_uring_setup and still
// refuse io_uring_enter. It returns the flags the kernel accepted.
func probe() (string, error) {
	// SINGLE_ISSUER binds the ring to the thread that set it up.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r, err := newRing(2)
	if err != nil {
		return "", explain(err)
	}
	defer r.close()
	if r.features&featExtArg == 0 {
		return "", errors.New("the kernel's io_uring lacks IORING_FEAT_EXT_ARG (Linux 5.11 or later is needed)")
	}
	*r.nextSQE() = sqe{opcode: opNop, userData: 0xc0ffee}
	for {
		_, errno := r.submitAndWait(1, 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return "", fmt.Errorf("io_uring_enter: %w", errno)
		}
		break
	}
	if atomic.LoadUint32(r.cqTail) == r.cqHeadLocal {
		return "", errors.New("io_uring_enter returned without completing a NOP")
	}
	c := r.cqes[r.cqHeadLocal&r.cqMask]
	atomic.StoreUint32(r.cqHead, r.cqHeadLocal+1)
	if c.userData != 0xc0ffee || c.res != 0 {
		return "", fmt.Errorf("io_uring NOP came back as user_data %#x res %d", c.userData, c.res)
	}
	return "setup flags " + describeFlags(r.flags), nil
}

// explain turns a failed io_uring_setup into the reason an operator can act on.
func explain(err error) error {
	switch {
	case errors.Is(err, unix.ENOSYS):
		return fmt.Errorf("%w (this kernel is built without io_uring)", err)
	case errors.Is(err, unix.EPERM):
		switch sysctl("kernel/io_uring_disabled") {
		case "2":
			return fmt.Errorf("%w (sysctl kernel.io_uring_disabled=2)", err)
		case "1":
			return fmt.Errorf("%w (sysctl kernel.io_uring_disabled=1 and this process is not in kernel.io_uring_group)", err)
		}
		return fmt.Errorf("%w (a seccomp filter or security module refuses io_uring)", err)
	case errors.Is(err, unix.ENOMEM):
		return fmt.Errorf("%w (locked-memory limit too low for the ring: ulimit -l)", err)
	}
	return err
}

func sysctl(name string) string {
	b, err := os.ReadFile("/proc/sys/" + name)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// suits reads one page at offset 0 with RWF_NOWAIT: the kernel refuses the
// flag with EOPNOTSUPP, before any I/O, exactly when the file cannot take
// non-blocking I/O, which is also when io_uring punts every request to a
// worker thread. Any other outcome (data, EAGAIN, an alignment EINVAL on a
// device with larger blocks) means the flag was accepted.
func suits(fd int) error {
	page := unix.Getpagesize()
	buf, err := unix.Mmap(-1, 0, page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil // cannot tell; io_uring still works
	}
	defer unix.Munmap(buf)
	_, err = unix.Preadv2(fd, [][]byte{buf}, 0, unix.RWF_NOWAIT)
	if errors.Is(err, unix.EOPNOTSUPP) {
		return errors.New("cannot take non-blocking I/O (RWF_NOWAIT refused), so io_uring would hand every I/O to a kernel worker thread, which costs more CPU than blocking pread/pwrite")
	}
	return nil
}
