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
