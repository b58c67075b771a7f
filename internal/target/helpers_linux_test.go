package target

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/testdeps"
	"github.com/ioprobe/ioprobe/internal/testloop"
	"github.com/ioprobe/ioprobe/internal/testwait"
)

// requireRoot skips the test without root (loop devices, mount), and
// fails it under make test.
func requireRoot(t *testing.T) {
	t.Helper()
	testdeps.Need(t, testdeps.Root)
}

// requireTool is the path of a program scripts/test-deps.sh installs;
// without it the test skips, and fails under make test.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	return testdeps.LookPath(t, name)
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	require.NoError(t, err, "%s %s: %s", name, strings.Join(args, " "), out)
	return strings.TrimSpace(string(out))
}

// newBacking makes a sparse file of size bytes in the test's temporary
// directory (ext4 under /tmp, which honours O_DIRECT).
func newBacking(t *testing.T, size int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "backing.img")
	f, err := os.Create(p)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(size))
	require.NoError(t, f.Close())
	return p
}

// writeAt writes p into a backing file before it is attached.
func writeAt(t *testing.T, path string, off int64, p []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(p, off)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
}

// attachLoop attaches backing to a free loop device with direct I/O and
// detaches it when the test ends.
func attachLoop(t *testing.T, backing string, extra ...string) string {
	t.Helper()
	requireRoot(t)
	requireTool(t, "losetup")
	args := append([]string{"-f", "--show", "--direct-io=on"}, extra...)
	dev := run(t, "losetup", append(args, backing)...)
	require.True(t, strings.HasPrefix(dev, "/dev/loop"), dev)
	t.Cleanup(func() {
		// Only if still over backing: by now the name may be another's.
		if err := testloop.Detach(dev, backing); err != nil {
			t.Errorf("detach %s: %v", dev, err)
		}
	})
	settleUdev()
	fam, err := readFamily("", filepath.Base(dev))
	require.NoError(t, err)
	require.Empty(t, fam.Partitions, "%s has partitions left from an earlier run; remove them with delpart", dev)
	return dev
}

// settleUdev waits, where udev runs, until it has finished probing new
// devices: its blkid holds them open and LOCK_SH-locked for a moment,
// which the loop and lock checks would rightly see as a user.
func settleUdev() {
	if p, err := exec.LookPath("udevadm"); err == nil {
		_ = exec.Command(p, "settle").Run()
	}
}

// mountAt mounts dev on a new directory and unmounts it when the test ends.
// Refusal tests mount read-only, so the device's bytes stay put.
func mountAt(t *testing.T, dev, mode string) string {
	t.Helper()
	dir := t.TempDir()
	run(t, "mount", "-o", mode, dev, dir)
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// addPartitions registers partitions (start and length in 512-byte sectors)
// on dev with BLKPG (addpart), which works even where the kernel has no
// partition-table parsers, and removes them when the test ends.
func addPartitions(t *testing.T, dev string, parts ...[2]int64) []string {
	t.Helper()
	requireTool(t, "addpart")
	var names []string
	for i, p := range parts {
		n := i + 1
		run(t, "addpart", dev, itoa(n), itoa(int(p[0])), itoa(int(p[1])))
		t.Cleanup(func() {
			if out, err := exec.Command("delpart", dev, itoa(n)).CombinedOutput(); err != nil {
				t.Errorf("delpart %s %d: %v: %s", dev, n, err, out)
			}
		})
		name := dev + "p" + itoa(n)
		require.Eventually(t, func() bool { _, err := os.Stat(name); return err == nil }, testwait.Patience, 1e7, "%s did not appear", name)
		names = append(names, name)
	}
	return names
}

func itoa(n int) string { return strconv.Itoa(n) }

func sha256File(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	h := sha256.New()
	_, err = io.Copy(h, f)
	require.NoError(t, err)
	return hex.EncodeToString(h.Sum(nil))
}

// openFlags returns the status flags of fd (O_ACCMODE, O_DIRECT).
func openFlags(t *testing.T, fd int) int {
	t.Helper()
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	require.NoError(t, err)
	return fl
}

// requireSafetyError checks that err is a refusal with the reason and
// override given.
func requireSafetyError(t *testing.T, err error, reason, override string) *SafetyError {
	t.Helper()
	var se *SafetyError
	require.ErrorAs(t, err, &se)
	require.Contains(t, se.Reason, reason)
	require.Equal(t, override, se.Override)
	if override == "" {
		require.NotContains(t, se.Error(), "overrides", "a refusal nothing overrides must not suggest a flag")
		if se.Write {
			require.Contains(t, se.Error(), "("+NoOverride+")", "a refusal to write says that the flag would not lift it")
		}
	} else {
		require.Contains(t, se.Error(), "("+override+" overrides this)")
	}
	require.True(t, IsBadInput(err))
	require.NotEmpty(t, se.IDs, "a refusal without an id from Refusals")
	for _, id := range se.IDs {
		require.NotEmpty(t, overrideOrNone(id), "%s is not in Refusals", id)
	}
	return se
}

// overrideOrNone is the override of refusal id, "none" when nothing
// overrides it, and "" when id is not in Refusals.
func overrideOrNone(id RefusalID) string {
	for _, r := range Refusals {
		if r.ID == id {
			if r.Override == "" {
				return "none"
			}
			return r.Override
		}
	}
	return ""
}

func markerOf(t *testing.T, path string) string {
	t.Helper()
	buf := make([]byte, 512)
	n, err := unix.Getxattr(path, markerXattr, buf)
	require.NoError(t, err)
	return string(buf[:n])
}

// markedSize returns the size path's marker records, and checks that the
// marker names path itself.
func markedSize(t *testing.T, path string) int64 {
	t.Helper()
	m, _, ok := parseMarker([]byte(markerOf(t, path)))
	require.True(t, ok, markerOf(t, path))
	var st unix.Stat_t
	require.NoError(t, unix.Stat(path, &st))
	require.Equal(t, st.Ino, m.ino)
	return m.size
}

func requireNoEntry(t *testing.T, path string) {
	t.Helper()
	_, err := os.Lstat(path)
	require.ErrorIs(t, err, os.ErrNotExist, "%s must not exist", path)
}

// newOwned creates an ioprobe file of size bytes and returns its path.
func newOwned(t *testing.T, dir string, size int64) string {
	t.Helper()
	path := filepath.Join(dir, "ioprobe.dat")
	tg, err := Open(path, Options{Region: size})
	require.NoError(t, err)
	require.True(t, tg.Formatted)
	require.NoError(t, tg.Close())
	return path
}

// requireForeign checks that writing path without --allow-destructive is
// refused for reason and that the file's bytes did not change. judged
// says whether a --verify read of it is still judged: where the marker
// names this file, ioprobe wrote every sector, and one that is not sound
// was changed behind its back (what --verify reports); a copy's or an old
// marker proves nothing, and nothing is judged.
func requireForeign(t *testing.T, path, reason string, judged bool) {
	t.Helper()
	requireRefusedFile(t, path, reason, "--allow-destructive", judged)
}

// requireRefusedFile is requireForeign for a refusal with this override
// ("": nothing lifts it).
func requireRefusedFile(t *testing.T, path, reason, override string, judged bool) {
	t.Helper()
	before := sha256File(t, path)
	_, err := Open(path, Options{Write: true})
	requireSafetyError(t, err, reason, override)
	tg, err := Open(path, Options{})
	require.NoError(t, err, "reading stays allowed")
	require.Equal(t, judged, tg.Formatted)
	if judged {
		require.NotZero(t, tg.SectorKey)
	}
	require.NoError(t, tg.Close())
	require.Equal(t, before, sha256File(t, path), "refusing changed the file")
}
