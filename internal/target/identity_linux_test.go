package target

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A partition and its disk are one device to the scheduler; a device sysfs
// does not know is named by its numbers.
func TestDeviceKeyFromSysfs(t *testing.T) {
	root := fakeSysfs(t)
	require.Equal(t, "loop0", deviceKey(root, 7, 0))
	require.Equal(t, "loop0", deviceKey(root, 259, 1))
	require.Equal(t, "dm-0", deviceKey(root, 253, 0))
	require.Equal(t, "dev 0:42", deviceKey(root, 0, 42))
}

// A file that does not exist yet has its directory's device.
func TestDeviceKeyOfNewFile(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "a")
	require.NoError(t, os.WriteFile(existing, nil, 0o600))
	k1, err := DeviceKey(existing)
	require.NoError(t, err)
	k2, err := DeviceKey(filepath.Join(dir, "not-yet"))
	require.NoError(t, err)
	require.Equal(t, k1, k2)
	require.NotEmpty(t, k1)
	var st unix.Stat_t
	require.NoError(t, unix.Stat(dir, &st))
	require.Equal(t, deviceKey("", unix.Major(st.Dev), unix.Minor(st.Dev)), k1)
	_, err = DeviceKey(filepath.Join(dir, "no-dir", "x"))
	require.True(t, IsBadInput(err), "%v", err)
}

// A file that another run creates and removes while the daemon looks up
// its device keeps one key throughout: the daemon's device locks are keyed
// on it, and a lookup that failed at the wrong moment gave two runs on one
// target two different locks (a suite ran beside its target's canary). A
// dangling symlink is still refused.
func TestDeviceKeyWhileTheFileComesAndGoes(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "probe.dat")
	want, err := DeviceKey(p)
	require.NoError(t, err)

	stop := make(chan struct{})
	cycles := make(chan int)
	go func() {
		n := 0
		defer func() { cycles <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if f, err := os.Create(p); err == nil {
				f.Close()
			}
			_ = os.Remove(p)
			n++
		}
	}()
	wrong := map[string]int{}
	const lookups = 20000
	for range lookups {
		k, err := DeviceKey(p)
		switch {
		case err != nil:
			wrong[err.Error()]++
		case k != want:
			wrong["key "+k]++
		}
	}
	close(stop)
	n := <-cycles
	require.Positive(t, n, "the file never came and went while the lookups ran")
	require.Empty(t, wrong, "%d lookups beside %d creations and removals of the file", lookups, n)

	link := filepath.Join(dir, "dangling")
	require.NoError(t, os.Symlink(filepath.Join(dir, "missing"), link))
	_, err = DeviceKey(link)
	require.ErrorContains(t, err, "is a symlink whose target does not exist")
}
