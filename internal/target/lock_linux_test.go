package target

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ioprobe/ioprobe/internal/testwait"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestParseLocks(t *testing.T) {
	const locks = `1: POSIX  ADVISORY  WRITE 700 00:05:77 0 EOF
2: FLOCK  ADVISORY  WRITE 8256 00:05:77 0 EOF
2: -> FLOCK  ADVISORY  WRITE 9000 00:05:77 0 EOF
3: FLOCK  ADVISORY  READ 8300 00:05:77 0 EOF
4: FLOCK  ADVISORY  WRITE 8400 fe:00:77 0 EOF
5: OFDLCK ADVISORY  READ -1 00:05:77 0 EOF
6: FLOCK  ADVISORY  WRITE 8500 00:05:78 0 EOF
`
	got, err := parseLocks(strings.NewReader(locks), 0, 5, 77)
	require.NoError(t, err)
	require.Equal(t, []lockHolder{{PID: 8256, Write: true}, {PID: 8300}}, got, "POSIX and OFD locks, waiters, other devices and inodes are not flock holders")
	got, err = parseLocks(strings.NewReader(locks), 0xfe, 0, 77)
	require.NoError(t, err)
	require.Equal(t, []lockHolder{{PID: 8400, Write: true}}, got, "the device is in hex")
	_, err = parseLocks(strings.NewReader("1: FLOCK ADVISORY WRITE 1 zz:05 0 EOF\n"), 0, 5, 77)
	require.Error(t, err)
}

// holdLock starts `flock -o NODE sleep 600` (util-linux; -o: sleep does not
// inherit the lock) in its own process group, waits until /proc/locks
// shows its lock on node and returns its pid; the group is killed by pid
// when the test ends.
func holdLock(t *testing.T, node string, shared bool) int {
	t.Helper()
	requireTool(t, "flock")
	args := []string{"-o", node, "sleep", "600"}
	if shared {
		args = append([]string{"-s"}, args...)
	}
	cmd := exec.Command("flock", args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = unix.Kill(-pid, unix.SIGKILL)
		_ = cmd.Wait()
	})
	var st unix.Stat_t
	require.NoError(t, unix.Stat(node, &st))
	require.Eventually(t, func() bool {
		f, err := os.Open("/proc/locks")
		if err != nil {
			return false
		}
		defer f.Close()
		hs, err := parseLocks(f, unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
		return err == nil && len(hs) > 0 && hs[0].PID == pid
	}, testwait.Patience, 1e7, "flock never took its lock")
	return pid
}

// flockFree asks util-linux's flock whether node can be locked
// exclusively right now.
func flockFree(t *testing.T, node string) bool {
	t.Helper()
	err := exec.Command("flock", "-n", "-E", "99", node, "true").Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 99 {
		return false
	}
	require.NoError(t, err)
	return true
}

func TestLockedDeviceIsRefused(t *testing.T) {
	backing := newBacking(t, loopSize)
	dev := attachLoop(t, backing)
	before := sha256File(t, backing)
	pid := holdLock(t, dev, false)
	holder := "pid " + strconv.Itoa(pid) + " (flock -o " + dev + " sleep 600) (exclusive)"

	_, err := Open(dev, writeAll)
	requireSafetyError(t, err, "it is locked by "+holder, "")
	// Without --allow-destructive the lock is the reason given, not the
	// default that a flag would override.
	_, err = Open(dev, Options{Write: true, Align: 4096})
	requireSafetyError(t, err, "it is locked by "+holder, "")
	// Reading takes no lock and needs none.
	tg, err := Open(dev, Options{Align: 4096})
	require.NoError(t, err)
	require.NoError(t, tg.Close())
	require.Equal(t, before, sha256File(t, backing))
}

func TestSharedLockIsRefusedToo(t *testing.T) {
	backing := newBacking(t, loopSize)
	dev := attachLoop(t, backing)
	before := sha256File(t, backing)
	pid := holdLock(t, dev, true)
	_, err := Open(dev, writeAll)
	requireSafetyError(t, err, "it is locked by pid "+strconv.Itoa(pid)+" (flock -s -o "+dev+" sleep 600) (shared)", "")
	require.Equal(t, before, sha256File(t, backing))
}

// ioprobe holds LOCK_EX on the device, and on the whole disk of a
// partition, from Open to Close.
func TestWriterHoldsTheLock(t *testing.T) {
	backing := newBacking(t, loopSize)
	dev := attachLoop(t, backing)
	requireTool(t, "flock")
	require.True(t, flockFree(t, dev))
	tg, err := Open(dev, writeAll)
	require.NoError(t, err)
	require.False(t, flockFree(t, dev), "ioprobe does not hold the lock while it may write")
	require.NoError(t, tg.Close())
	require.True(t, flockFree(t, dev), "the lock outlived the target")

	parts := addPartitions(t, dev, [2]int64{2048, 16384})
	tg, err = Open(parts[0], writeAll)
	require.NoError(t, err)
	require.False(t, flockFree(t, dev), "the whole disk is not locked while its partition may be written")
	require.False(t, flockFree(t, parts[0]))
	require.NoError(t, tg.Close())
	require.True(t, flockFree(t, dev))
	require.True(t, flockFree(t, parts[0]))
}

// A partition whose whole disk is locked is refused: systemd and udev lock
// the disk, never the partition.
func TestPartitionOfLockedDiskIsRefused(t *testing.T) {
	backing := newBacking(t, loopSize)
	dev := attachLoop(t, backing)
	parts := addPartitions(t, dev, [2]int64{2048, 16384})
	before := sha256File(t, backing)
	pid := holdLock(t, dev, false)
	_, err := Open(parts[0], writeAll)
	requireSafetyError(t, err, "its disk "+strings.TrimPrefix(dev, "/dev/")+" is locked by pid "+strconv.Itoa(pid), "")
	require.Equal(t, before, sha256File(t, backing))
}
