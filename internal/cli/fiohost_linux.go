package cli

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/pkg/fiojob"
)

// fioStat tells fiojob what is at a job's file, as fio would see it: a
// regular file's size, a block device's (BLKGETSIZE64), or that nothing
// is there yet. Nothing is created or written.
func fioStat(path string) (fiojob.FileInfo, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fiojob.FileInfo{}, nil
	}
	if err != nil {
		return fiojob.FileInfo{}, err
	}
	if st.Mode().IsRegular() {
		return fiojob.FileInfo{Exists: true, Regular: true, Size: st.Size()}, nil
	}
	if st.Mode()&fs.ModeDevice == 0 || st.Mode()&fs.ModeCharDevice != 0 {
		return fiojob.FileInfo{Exists: true}, nil // the target's own checks say what it is
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return fiojob.FileInfo{Exists: true}, nil
	}
	defer unix.Close(fd)
	var size uint64
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(unix.BLKGETSIZE64), uintptr(unsafe.Pointer(&size))); errno != 0 {
		return fiojob.FileInfo{Exists: true}, nil
	}
	return fiojob.FileInfo{Exists: true, Size: int64(size)}, nil
}

// fioKeywords are fio's $pagesize, $mb_memory and $ncpus as fio reads
// them (options.c: fio_keywords_init): the page size, the physical
// memory in MiB and the configured CPUs (sysconf's
// _SC_NPROCESSORS_CONF: the cpuN entries under /sys).
func fioKeywords() map[string]string {
	kw := map[string]string{"$pagesize": strconv.Itoa(os.Getpagesize())}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				if kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64); err == nil {
					kw["$mb_memory"] = strconv.FormatUint(kb/1024, 10)
				}
			}
		}
		f.Close()
	}
	cpus := runtime.NumCPU()
	if m, err := filepath.Glob("/sys/devices/system/cpu/cpu[0-9]*"); err == nil && len(m) > 0 {
		cpus = len(m)
	}
	kw["$ncpus"] = strconv.Itoa(cpus)
	return kw
}
