package target

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/hostfs"
)

func loopName(dev string) string { return filepath.Base(dev) }

// mountedImage makes an image file holding an ext4 filesystem, attaches it
// and mounts the loop device read-only (undone when the test ends).
func mountedImage(t *testing.T) (img, dev, dir string) {
	t.Helper()
	requireRoot(t)
	mkfs := requireTool(t, "mkfs.ext4")
	img = newBacking(t, loopSize)
	run(t, mkfs, "-q", "-F", img)
	dev = attachLoop(t, img)
	return img, dev, mountAt(t, dev, "ro")
}

// A device with a loop device stacked on it 1 MiB in (losetup -o 1MiB):
// the loop device's filesystem, mounted or not, lives on the device, which
// neither holds nor claims anything the kernel shows in its holders.
func TestDeviceUnderALoopDevice(t *testing.T) {
	requireRoot(t)
	mkfs := requireTool(t, "mkfs.ext4")
	backing := newBacking(t, loopSize)
	dev := attachLoop(t, backing)
	upper := attachLoop(t, dev, "-o", "1048576")
	stacked := "loop device " + loopName(upper) + ", stacked on it (from byte 1048576),"

	// Nothing on the upper device and nobody using it: the lower one may
	// be written, so the check is not a blanket refusal.
	tg, err := Open(dev, writeAll)
	require.NoError(t, err)
	require.NoError(t, tg.Close())

	// Open by a process.
	f, err := os.Open(upper)
	require.NoError(t, err)
	cmd := exec.Command("sleep", "600")
	cmd.Stdin = f
	require.NoError(t, cmd.Start())
	f.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	before := sha256File(t, backing)
	_, err = Open(dev, writeAll)
	requireSafetyError(t, err, stacked+" is open by pid "+strconv.Itoa(cmd.Process.Pid)+" (sleep 600)", "")
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	require.Equal(t, before, sha256File(t, backing))

	run(t, mkfs, "-q", "-F", upper)
	before = sha256File(t, backing)
	_, err = Open(dev, writeAll)
	requireSafetyError(t, err, stacked+" holds an ext4 filesystem", "")

	dir := mountAt(t, upper, "ro")
	for _, o := range []Options{writeAll, {Write: true}} {
		_, err = Open(dev, o)
		requireSafetyError(t, err, stacked+" is in use: it is mounted at "+dir+" (ext4)", "")
		requireSafetyError(t, Check(dev, o), stacked+" is in use: it is mounted at "+dir+" (ext4)", "")
	}
	require.Equal(t, before, sha256File(t, backing))
}

// Two loop devices over one image file, the first mounted: writing the
// second writes the mounted filesystem.
func TestSecondLoopOverAMountedImage(t *testing.T) {
	img, first, dir := mountedImage(t)
	second := attachLoop(t, img, "-o", "4096")
	before := sha256File(t, img)
	_, err := Open(second, writeAll)
	requireSafetyError(t, err, "loop device "+loopName(first)+", over the same file "+img+" as it (all of it), is in use: it is mounted at "+dir+" (ext4)", "")
	require.Equal(t, before, sha256File(t, img))
}

// The image file of a loop device is never written, mounted or not, ours
// or not, whatever the flags; reading it is fine.
func TestFileThatBacksALoopDevice(t *testing.T) {
	img, dev, _ := mountedImage(t)
	before := sha256File(t, img)
	for _, o := range []Options{writeAll, {Write: true}} {
		_, err := Open(img, o)
		requireSafetyError(t, err, "it backs loop device "+loopName(dev)+" (all of it), whose contents are this file's", "")
	}
	tg, err := Open(img, Options{Align: 4096})
	require.NoError(t, err)
	require.NoError(t, tg.Close())
	require.Equal(t, before, sha256File(t, img))

	// A file ioprobe created and filled, shown by a loop device with an
	// offset: still refused, without any flag; nor is it extended.
	own := filepath.Join(t.TempDir(), "own.dat")
	tg, err = Open(own, Options{Region: 8 << 20, Align: 4096})
	require.NoError(t, err)
	require.NoError(t, tg.Close())
	tg, err = Open(own, Options{Write: true, Align: 4096})
	require.NoError(t, err, "ioprobe's own file is writable before a loop device uses it")
	require.NoError(t, tg.Close())
	owned := attachLoop(t, own, "-o", "1048576", "--sizelimit", "2097152")
	before = sha256File(t, own)
	for _, o := range []Options{{Write: true, Align: 4096}, {Align: 4096, Region: 16 << 20}} {
		_, err = Open(own, o)
		requireSafetyError(t, err, "it backs loop device "+loopName(owned)+" (bytes 1048576 to 3145728)", "")
	}
	var st unix.Stat_t
	require.NoError(t, unix.Stat(own, &st))
	require.EqualValues(t, 8<<20, st.Size)
	require.Equal(t, before, sha256File(t, own))
}

// Without root, ioprobe may not ask loop devices; the backing file's name
// sysfs gives is stat'ed instead, through hostfs with its deadline.
func TestStatBacking(t *testing.T) {
	img := filepath.Join(t.TempDir(), "image.img")
	require.NoError(t, os.WriteFile(img, []byte("x"), 0o644))
	var st unix.Stat_t
	require.NoError(t, unix.Stat(img, &st))
	e := defaultEnv()

	b, err := e.statBacking(hostfs.Loop{Name: "loop9", BackingFile: img, Offset: 1 << 20}, nil)
	require.NoError(t, err)
	require.Equal(t, st.Dev, b.Dev)
	require.Equal(t, st.Ino, b.Ino)
	require.Zero(t, b.Rdev)
	require.EqualValues(t, 1<<20, b.Offset)

	b, err = e.statBacking(hostfs.Loop{Name: "loop9", BackingFile: img, Deleted: true}, nil)
	require.NoError(t, err)
	require.Zero(t, b.Ino, "a name that is gone matches nothing, even when another file has it now")

	b, err = e.statBacking(hostfs.Loop{Name: "loop9", BackingFile: img + ".gone"}, nil)
	require.NoError(t, err)
	require.Zero(t, b.Ino)
}
