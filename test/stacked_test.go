package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testdeps"
	"github.com/ioprobe/ioprobe/internal/testloop"
)

// Stacked storage and locks, end to end (issue 10, items 3 and 4): each
// refusal is exit status 2, one line naming the reason with no flag
// offered, and the bytes unchanged.

func runTool(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	require.NoError(t, err, "%s %s: %s", name, strings.Join(args, " "), out)
	return strings.TrimSpace(string(out))
}

// needTools needs root (loop devices, mount) and the programs names:
// a skip run by hand, a failure under make test (testdeps).
func needTools(t *testing.T, names ...string) {
	t.Helper()
	testdeps.Need(t, testdeps.Root)
	for _, n := range names {
		testdeps.Need(t, testdeps.Tool(n))
	}
}

// attach attaches file (or device) as a loop device with extra losetup
// arguments and detaches it when the test ends.
func attach(t *testing.T, file string, extra ...string) string {
	t.Helper()
	dev := runTool(t, "losetup", append(append([]string{"-f", "--show", "--direct-io=on"}, extra...), file)...)
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "-d", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup -d %s: %v: %s", dev, err, out)
		}
	})
	if p, err := exec.LookPath("udevadm"); err == nil {
		_ = exec.Command(p, "settle").Run()
	}
	return dev
}

// mountRO mounts dev read-only and unmounts it when the test ends.
func mountRO(t *testing.T, dev string) string {
	t.Helper()
	dir := t.TempDir()
	runTool(t, "mount", "-o", "ro", dev, dir)
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

func imageFile(t *testing.T, size int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "image.img")
	require.NoError(t, os.WriteFile(p, nil, 0o600))
	require.NoError(t, os.Truncate(p, size))
	return p
}

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
	}, 10e9, 1e7, "flock never took its lock")
	before := sha256Of(t, dev, 0)
	requireRefused(t, dev, "it is locked by pid "+strconv.Itoa(pid)+" (flock -o "+dev+" sleep 600) (exclusive)", "--allow-destructive")
	require.Equal(t, before, sha256Of(t, dev, 0))

	// Once the holder is gone, the run goes ahead.
	require.NoError(t, syscall.Kill(-pid, syscall.SIGKILL))
	_ = cmd.Wait()
	o := ioprobe(t, t.TempDir(), "run", "--target", dev, "--read-pct", "0", "--duration", "200ms", "--ramp", "0s", "--allow-destructive", "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)
}
