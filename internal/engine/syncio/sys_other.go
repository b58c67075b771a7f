//go:build !(linux && (amd64 || arm64 || loong64 || mips64 || mips64le || ppc64 || ppc64le || riscv64 || s390x))

package syncio

import "golang.org/x/sys/unix"

// pread and pwrite return bytes, or -errno (see sys_linux64.go).
func pread(fd int, b []byte, off int64) int64 { return result(unix.Pread(fd, b, off)) }

func pwrite(fd int, b []byte, off int64) int64 { return result(unix.Pwrite(fd, b, off)) }

func result(n int, err error) int64 {
	if err != nil {
		return -int64(errnoOf(err))
	}
	return int64(n)
}
