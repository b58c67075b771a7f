package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/testdeps"
)

// TestRedteamConfigReadOnlyBindOfSharedDir: a read-only bind mount of a
// directory every user can write does not make the config in it one that
// nobody can change: the directory is still writable through its own
// name. The config is refused as if it were read there; the same bind of
// a directory only root can write passes.
func TestRedteamConfigReadOnlyBindOfSharedDir(t *testing.T) {
	testdeps.Need(t, testdeps.Root)
	dir := t.TempDir()
	shared := filepath.Join(dir, "shared")
	require.NoError(t, os.Mkdir(shared, 0o755))
	require.NoError(t, os.Chmod(shared, 0o777))
	cfg := fmt.Sprintf("targets:\n  data: {path: %s, size: 8MiB}\nmodules:\n  quick: {profile: random-read, max_duration: 1s}\n", filepath.Join(dir, "probe.dat"))
	require.NoError(t, os.WriteFile(filepath.Join(shared, "ioprobe.yaml"), []byte(cfg), 0o644))

	ro := filepath.Join(dir, "ro")
	require.NoError(t, os.Mkdir(ro, 0o755))
	run(t, "mount", "--bind", shared, ro)
	t.Cleanup(func() {
		if out, err := exec.Command("umount", ro).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", ro, err, out)
		}
	})
	run(t, "mount", "-o", "remount,bind,ro", ro)
	file := filepath.Join(ro, "ioprobe.yaml")
	require.ErrorIs(t, os.WriteFile(filepath.Join(ro, "x"), nil, 0o644), unix.EROFS, "the bind is read-only")

	o := ioprobe(t, dir, "serve", "--config.check", file)
	require.Equal(t, 2, o.code, "a read-only view of a directory everyone can write: refused\n%s", o.stderr)
	require.Equal(t, "ioprobe: config file "+file+" is refused: its directory "+ro+" is writable by every user (mode 0777, not sticky)"+
		", who could change what this daemon runs and writes; make it writable only by root or the daemon's user (chmod go-w, chown) (rule shared-directory)\n", o.stderr)

	require.NoError(t, os.Chmod(shared, 0o755))
	o = ioprobe(t, dir, "serve", "--config.check", file)
	require.Equal(t, 0, o.code, o.stderr)
}
