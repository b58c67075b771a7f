package testloop

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestDetachAndWaitWaitsForTheLastHolder: a device another process holds
// open (here this one, through a descriptor of its own) is only marked
// for clearing by a detach (sysfs autoclear 1, still over its file: what
// TestOwnershipRefusalsExit2 met under load). While it is held the wait
// ends at its deadline, in an error that names the holder; once the
// holder has let go it ends without one, and the device is gone.
func TestDetachAndWaitWaitsForTheLastHolder(t *testing.T) {
	SkipUnlessRoot(t)
	backing := filepath.Join(t.TempDir(), "backing")
	require.NoError(t, os.WriteFile(backing, nil, 0o600))
	require.NoError(t, os.Truncate(backing, 1<<20))
	out, err := exec.Command("losetup", "-f", "--show", backing).CombinedOutput()
	require.NoError(t, err, "%s", out)
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { _ = Detach(dev, backing) })
	holder, err := os.Open(dev)
	require.NoError(t, err)
	defer holder.Close() // on a failure; closed below otherwise

	require.NoError(t, Detach(dev, backing))
	over, err := Over(dev, backing)
	require.NoError(t, err)
	require.True(t, over, "held open, %s is only marked for clearing", dev)
	autoclear, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "loop", "autoclear"))
	require.NoError(t, err)
	require.Equal(t, "1", strings.TrimSpace(string(autoclear)))

	// Held for good: the deadline (short here, nothing will change) ends
	// the wait.
	err = detachAndWait(dev, backing, 100*time.Millisecond)
	require.Error(t, err, "%s is still held open", dev)
	require.Contains(t, err.Error(), fmt.Sprintf("held open by pid %d (", os.Getpid()))

	require.NoError(t, holder.Close())
	require.NoError(t, DetachAndWait(dev, backing))
	over, err = Over(dev, backing)
	require.NoError(t, err)
	require.False(t, over, "%s is detached once its last holder closed it", dev)
}
