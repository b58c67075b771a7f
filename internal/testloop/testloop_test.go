package testloop

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDetachLeavesAnotherProcesssDevice: once a test's device is
// detached, its name may be attached again over another file (here, at
// once: losetup takes the lowest free name); a second Detach of the
// first leaves the new one attached, and the new one's own Detach
// detaches it.
func TestDetachLeavesAnotherProcesssDevice(t *testing.T) {
	SkipUnlessRoot(t)
	dir := t.TempDir()
	first, second := filepath.Join(dir, "first"), filepath.Join(dir, "second")
	for _, f := range []string{first, second} {
		require.NoError(t, os.WriteFile(f, nil, 0o600))
		require.NoError(t, os.Truncate(f, 1<<20))
	}
	attach := func(f string) string {
		out, err := exec.Command("losetup", "-f", "--show", f).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return strings.TrimSpace(string(out))
	}
	dev := attach(first)
	require.NoError(t, Detach(dev, first))
	require.NoError(t, Detach(dev, first), "a device already detached: nothing to do")
	other := attach(second)
	t.Cleanup(func() { _ = Detach(other, second) })
	require.NoError(t, Detach(dev, first))
	b, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(other), "loop", "backing_file"))
	require.NoError(t, err, "%s was detached by the first device's second Detach", other)
	require.Equal(t, second, strings.TrimSpace(string(b)))
	require.NoError(t, Detach(other, second))
	_, err = os.Stat(filepath.Join("/sys/block", filepath.Base(other), "loop", "backing_file"))
	require.True(t, os.IsNotExist(err), "%s is still attached", other)
}
