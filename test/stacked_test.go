package test

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testloop"
	"github.com/ioprobe/ioprobe/internal/testwait"
)

// Stacked storage and locks, end to end (issue 10, items 3 and 4): each
// refusal is exit status 2, one line naming the reason with no flag
// offered, and the bytes unchanged.

// requireRefused runs a write run on target and checks the refusal.
func requireRefused(t *testing.T, target, reason string, extra ...string) {
	t.Helper()
	args := append([]string{"run", "--target", target, "--read-pct", "0", "--duration", "300ms", "--ramp", "0s"}, extra...)
	o := ioprobe(t, t.TempDir(), args...)
	require.Equal(t, 2, o.code, o.stderr)
	require.Empty(t, o.stdout)
	lines := strings.Split(strings.TrimSpace(o.stderr), "\n")
	require.Len(t, lines, 1, o.stderr)
	require.True(t, strings.HasPrefix(lines[0], "ioprobe: refusing to write to "+target+": "), lines[0])
	require.Contains(t, lines[0], reason)
	require.NotContains(t, lines[0], "overrides this", "nothing may override this refusal")
}

func TestDeviceUnderMountedLoopRefused(t *testing.T) {
	needTools(t, "losetup", "mkfs.ext4", "mount")
	img := imageFile(t, 64<<20)
	dev := attach(t, img)
	upper := attach(t, dev, "-o", "1048576")
	runTool(t, "mkfs.ext4", "-q", "-F", upper)
	dir := mountRO(t, upper)
	before := sha256Of(t, img, 0)
	requireRefused(t, dev, "loop device "+filepath.Base(upper)+", stacked on it (from byte 1048576), is in use: it is mounted at "+dir+" (ext4)", "--allow-destructive")
	require.Equal(t, before, sha256Of(t, img, 0))
}

func TestSecondLoopOverMountedImageRefused(t *testing.T) {
	needTools(t, "losetup", "mkfs.ext4", "mount")
	img := imageFile(t, 64<<20)
	runTool(t, "mkfs.ext4", "-q", "-F", img)
	first := attach(t, img)
	dir := mountRO(t, first)
	second := attach(t, img)
	before := sha256Of(t, img, 0)
	requireRefused(t, second, "loop device "+filepath.Base(first)+", over the same file "+img+" as it (all of it), is in use: it is mounted at "+dir+" (ext4)", "--allow-destructive")
	require.Equal(t, before, sha256Of(t, img, 0))

	// The image itself, as a file target, with --allow-destructive.
	requireRefused(t, img, "it backs loop device "+filepath.Base(first)+" (all of it)", "--allow-destructive")
	requireRefused(t, img, "it backs loop device "+filepath.Base(second)+" (all of it)", "--allow-destructive")
	require.Equal(t, before, sha256Of(t, img, 0))
}

func TestLockedDeviceRefused(t *testing.T) {
	needTools(t, "losetup", "flock")
	dev := testloop.Device(t, 32<<20)
	// flock -o: the lock is flock's own, not inherited by sleep; its own
	// process group, killed by pid when the test ends.
	cmd := exec.Command("flock", "-o", dev, "sleep", "600")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	// Wait for the lock: until then, the probe below (a plain flock -n)
	// succeeds.
	require.Eventually(t, func() bool {
		return exec.Command("flock", "-n", dev, "true").Run() != nil
	}, testwait.Patience, 1e7, "flock never took its lock")
	before := sha256Of(t, dev, 0)
	requireRefused(t, dev, "it is locked by pid "+strconv.Itoa(pid)+" (flock -o "+dev+" sleep 600) (exclusive)", "--allow-destructive")
	require.Equal(t, before, sha256Of(t, dev, 0))

	// Once the holder is gone, the run goes ahead.
	require.NoError(t, syscall.Kill(-pid, syscall.SIGKILL))
	_ = cmd.Wait()
	o := ioprobe(t, t.TempDir(), "run", "--target", dev, "--read-pct", "0", "--duration", "200ms", "--ramp", "0s", "--allow-destructive", "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)
}
