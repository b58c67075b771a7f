package devlat

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/testloop"
)

// loopDevice attaches a loop device (root) and returns it resolved.
func loopDevice(t *testing.T, size int64) (path string, d Device) {
	path = testloop.Device(t, size)
	d, err := Resolve("", filepath.Base(path))
	require.NoError(t, err)
	return path, d
}

// openTracer opens the programs for devs, or fails: the tests that call
// it run as root on a kernel with BTF, where they must load.
func openTracer(t *testing.T, devs ...Device) *Tracer {
	tr, err := Open(devs)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, tr.Close()) })
	return tr
}

// directIO does O_DIRECT 4 KiB I/O on path, one at a time, reads and
// writes mixed, for about d or n I/Os, and returns how many it did.
func directIO(t *testing.T, path string, size int64, d time.Duration, n int) int {
	fd, buf := openDirect(t, path, unix.O_RDWR, 4096)
	end := time.Now().Add(d)
	done := 0
	var err error
	for ; done < n && time.Now().Before(end); done++ {
		off := rand.Int64N(size/4096) * 4096
		if done%3 == 0 {
			_, err = unix.Pwrite(fd, buf, off)
		} else {
			_, err = unix.Pread(fd, buf, off)
		}
		require.NoError(t, err)
	}
	return done
}

// openDirect opens path for O_DIRECT I/O (flags: the access mode) and
// maps a page-aligned buffer of n bytes; both go when the test ends.
func openDirect(t *testing.T, path string, flags, n int) (int, []byte) {
	fd, err := unix.Open(path, flags|unix.O_DIRECT, 0)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(fd) })
	buf, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Munmap(buf) })
	return fd, buf
}

// queueSetting is the path of a queue setting of device name, put back
// as it was when the test ends: a loop device keeps its settings for
// whoever attaches it next.
func queueSetting(t *testing.T, name, setting string) string {
	path := filepath.Join("/sys/block", name, "queue", setting)
	was, err := os.ReadFile(path)
	require.NoError(t, err)
	if setting == "scheduler" { // "none [mq-deadline] kyber": the one in brackets
		s := string(was)
		if i, j := strings.IndexByte(s, '['), strings.IndexByte(s, ']'); i >= 0 && j > i {
			was = []byte(s[i+1 : j])
		}
	}
	t.Cleanup(func() { require.NoError(t, os.WriteFile(path, was, 0)) })
	return path
}
