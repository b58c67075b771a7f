package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/testdeps"
	"github.com/ioprobe/ioprobe/internal/testloop"
)

// A loop device over a file on a FUSE filesystem whose daemon died: the
// kernel cannot stat the backing file (LOOP_GET_STATUS64 answers
// ENOTCONN), and nothing on that filesystem can be opened again. Writes
// elsewhere run (before the fix every write on the machine was refused:
// "cannot ask loop device … what backs it"); the loop device itself is
// still refused.
func TestLoopOverDeadFUSEBlocksNothingElse(t *testing.T) {
	testdeps.Need(t, testdeps.Root, testdeps.LoopDevices, testdeps.DebianPython, testdeps.PythonModule("fusepy"),
		testdeps.Tool("losetup"), testdeps.Tool("umount"))
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("no /dev/fuse: %v", err) //hygiene:skip a kernel without FUSE; no package gives it
	}
	base := t.TempDir()
	root, fuseMnt := filepath.Join(base, "root"), filepath.Join(base, "fuse")
	require.NoError(t, os.Mkdir(root, 0o700))
	require.NoError(t, os.Mkdir(fuseMnt, 0o700))
	onItsOwnDevice := func(dir string) bool {
		var a, b unix.Stat_t
		return unix.Stat(dir, &a) == nil && unix.Stat(base, &b) == nil && a.Dev != b.Dev
	}
	script, err := filepath.Abs(filepath.Join("testdata", "slowflush.py"))
	require.NoError(t, err)
	fuse := exec.Command("/usr/bin/python3", script, root, fuseMnt, filepath.Join(base, "delay"))
	fuse.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, fuse.Start())
	exited := make(chan struct{})
	go func() { _ = fuse.Wait(); close(exited) }()
	var dev string
	img := filepath.Join(fuseMnt, "img")
	t.Cleanup(func() {
		if dev != "" {
			// Detached for good before the daemon is stopped and its
			// mount unmounted: a detach that a holder deferred keeps the
			// image open (umount: busy), over a daemon about to die.
			if err := testloop.DetachAndWait(dev, img); err != nil {
				t.Errorf("detach %s: %v; the FUSE passthrough (pid %d) and its mount are left as they are", dev, err, fuse.Process.Pid)
				return
			}
		}
		_ = fuse.Process.Kill() // ours, by its pid (already dead when the test got that far)
		<-exited
		if out, err := exec.Command("umount", fuseMnt).CombinedOutput(); err != nil && onItsOwnDevice(fuseMnt) {
			t.Errorf("umount %s: %v: %s", fuseMnt, err, out)
		}
	})
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		select {
		case <-exited:
			require.Fail(c, "the FUSE passthrough exited")
		default:
		}
		assert.True(c, onItsOwnDevice(fuseMnt), "mounted")
	}, 30*time.Second, 20*time.Millisecond, "the FUSE passthrough never mounted")
	require.NoError(t, os.WriteFile(img, nil, 0o600))
	require.NoError(t, os.Truncate(img, 16<<20))
	out, err := exec.Command("losetup", "-f", "--show", img).CombinedOutput()
	require.NoError(t, err, "%s", out)
	dev = strings.TrimSpace(string(out))

	// The daemon dies; its mount stays, disconnected.
	require.NoError(t, fuse.Process.Kill())
	<-exited
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := os.Stat(img) // cached attributes answer until they time out
		assert.ErrorIs(c, err, unix.ENOTCONN)
	}, 30*time.Second, 50*time.Millisecond, "the FUSE mount is dead")

	dir := t.TempDir()
	o := ioprobe(t, dir, "run", "--target", filepath.Join(dir, "probe.dat"), "--size", "8MiB", "--read-pct", "0",
		"--ramp", "0s", "--duration", "300ms", "--output", "json")
	require.Equal(t, 0, o.code, "a write elsewhere runs: %s", o.stderr)
	require.Positive(t, decodeResult(t, o.stdout).Summary.WriteOps)

	o = ioprobe(t, dir, "run", "--target", dev, "--allow-destructive", "--read-pct", "0", "--ramp", "0s", "--duration", "300ms")
	require.Equal(t, 2, o.code, "the loop device itself is refused: %s", o.stderr)
	require.Contains(t, o.stderr, "refusing to write to "+dev)
}
