package test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testdeps"
	"github.com/ioprobe/ioprobe/internal/testloop"
)

// TestOwnershipRefusalsExit2 runs the two cases through the
// binary: an ioprobe file after mkfs.ext4 through a loop device and a
// mount (same size, marker intact), and a user's file that got ioprobe's
// marker with cp --preserve=xattr. A write run without
// --allow-destructive is refused: exit 2, one line on stderr, the bytes
// unchanged; the flag is offered for the copy, not for the filesystem. The ioprobe file they came from stays writable.
func TestOwnershipRefusalsExit2(t *testing.T) {
	dir := t.TempDir()
	own := filepath.Join(dir, "own.dat")
	write := func(path string) outcome {
		return ioprobe(t, dir, "run", "--target", path, "--read-pct", "0", "--duration", "200ms", "--ramp", "0s", "--output", "json")
	}
	o := ioprobe(t, dir, "run", "--target", own, "--size", "32MiB", "--duration", "100ms", "--ramp", "0s", "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)

	refused := func(path, reason, override string) {
		t.Helper()
		before, err := os.ReadFile(path)
		require.NoError(t, err)
		o := write(path)
		require.Equal(t, 2, o.code, o.stderr)
		require.Empty(t, o.stdout)
		require.Equal(t, 1, strings.Count(o.stderr, "\n"), "one line: %q", o.stderr)
		require.True(t, strings.HasPrefix(o.stderr, "ioprobe: refusing to write to "+path+": "), o.stderr)
		require.Contains(t, o.stderr, reason)
		require.Contains(t, o.stderr, override)
		after, err := os.ReadFile(path)
		require.NoError(t, err)
		require.True(t, bytes.Equal(before, after), "refused, yet the file changed")
	}

	user := filepath.Join(dir, "user.db")
	require.NoError(t, os.WriteFile(user, []byte(strings.Repeat("a user's rows\n", 1<<16)), 0o644))
	cp := exec.Command("cp", "--preserve=xattr", own, user)
	out, err := cp.CombinedOutput()
	require.NoError(t, err, "%s", out)
	refused(user, "it carries the marker of another file", "(--allow-destructive overrides this)")

	o = write(own)
	require.Equal(t, 0, o.code, "the original is still ioprobe's: %s", o.stderr)

	// mkfs through a loop device.
	testdeps.Need(t, testdeps.LoopDevices, testdeps.Tool("mkfs.ext4"))
	mnt := t.TempDir()
	func() {
		dev := testloop.File(t, own)
		// Detached before the file is checked, and the detach done: a
		// process that held the device open for a moment (a probe, another
		// test's ioprobe asking every loop device what backs it) defers it
		// to its last close, and until then the file does back a loop
		// device, which is the refusal the run would rightly give.
		defer func() { require.NoError(t, testloop.DetachAndWait(dev, own)) }()
		mustRun(t, "mkfs.ext4", "-q", "-F", dev)
		mustRun(t, "mount", dev, mnt)
		defer mustRun(t, "umount", mnt)
		require.NoError(t, os.WriteFile(filepath.Join(mnt, "notes.txt"), []byte("a user's notes\n"), 0o644))
	}()
	st, err := os.Stat(own)
	require.NoError(t, err)
	require.EqualValues(t, 32<<20, st.Size(), "same size: the marker's size still matches")
	// The filesystem is the reason, and no flag lifts it (issue 20, item
	// 11): the flag is not offered.
	refused(own, "it holds an ext4 filesystem (TYPE=ext4", "(--allow-destructive does not lift this refusal)")
}

func mustRun(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	require.NoError(t, err, "%s %s: %s", name, strings.Join(args, " "), out)
	return string(out)
}
