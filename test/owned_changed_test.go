package test

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/testdeps"
)

// Files ioprobe created and someone changed since (issue 20, item 3): a
// superblock written into an ioprobe file past its first 64 KiB, 1 MiB of
// foreign data in the middle. A write run is refused, with or without
// --allow-destructive for a filesystem (no flag is offered then), and the
// bytes are unchanged; ioprobe's own runs, repeated, reuse the file.

// newOwnFile makes an ioprobe file of 64 MiB with a run and returns it.
func newOwnFile(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "own.dat")
	o := ioprobe(t, dir, "run", "--target", path, "--size", "64MiB", "--read-pct", "0", "--duration", "100ms", "--ramp", "0s")
	require.Equal(t, 0, o.code, o.stderr)
	return path
}

// superblockOf makes a filesystem with tool on an image of size bytes and
// returns n bytes of it at off (its superblock).
func superblockOf(t *testing.T, size, off, n int64, tool string, args ...string) []byte {
	t.Helper()
	testdeps.Need(t, testdeps.Tool(tool))
	img := filepath.Join(t.TempDir(), "fs.img")
	require.NoError(t, os.WriteFile(img, nil, 0o600))
	require.NoError(t, os.Truncate(img, size))
	run(t, tool, append(args, img)...)
	f, err := os.Open(img)
	require.NoError(t, err)
	defer f.Close()
	p := make([]byte, n)
	_, err = f.ReadAt(p, off)
	require.NoError(t, err)
	require.False(t, bytes.Equal(p, make([]byte, n)), "%s wrote nothing at %d", tool, off)
	return p
}

// writeRefused runs a write run on path and checks the refusal: exit 2,
// one line with each reason, the override offered or not, the file's
// bytes unchanged.
func writeRefused(t *testing.T, dir, path, override string, reasons []string, extra ...string) {
	t.Helper()
	before := sha256Of(t, path, 0)
	o := ioprobe(t, dir, append([]string{"run", "--target", path, "--read-pct", "0", "--duration", "200ms", "--ramp", "0s"}, extra...)...)
	require.Equal(t, 2, o.code, o.stderr)
	require.Empty(t, o.stdout)
	require.Equal(t, 1, strings.Count(o.stderr, "\n"), o.stderr)
	require.True(t, strings.HasPrefix(o.stderr, "ioprobe: refusing to write to "+path+": "), o.stderr)
	for _, r := range reasons {
		require.Contains(t, o.stderr, r)
	}
	if override == "" {
		require.NotContains(t, o.stderr, "overrides this")
		require.Contains(t, o.stderr, "(--allow-destructive does not lift this refusal)")
	} else {
		require.Contains(t, o.stderr, "("+override+" overrides this)")
	}
	require.Equal(t, before, sha256Of(t, path, 0), "refused, yet the file changed")
}

func TestSuperblockInOwnFileRefused(t *testing.T) {
	for _, c := range []struct {
		typ, tool string
		args      []string
		size, off int64
	}{
		// btrfs: the superblock at 64 KiB (libblkid btrfs.c).
		{"btrfs", "mkfs.btrfs", []string{"-q", "-f"}, 128 << 20, 64 << 10},
		// gfs2: the superblock at 64 KiB (libblkid gfs.c).
		{"gfs2", "mkfs.gfs2", []string{"-O", "-p", "lock_nolock", "-J", "8"}, 64 << 20, 64 << 10},
	} {
		t.Run(c.typ, func(t *testing.T) {
			sb := superblockOf(t, c.size, c.off, 4096, c.tool, c.args...)
			dir := t.TempDir()
			path := newOwnFile(t, dir)
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteAt(sb, c.off)
			require.NoError(t, err)
			require.NoError(t, f.Close())
			// The filesystem is the reason, one no flag lifts, said first.
			reasons := []string{"(TYPE=" + c.typ + ", signature at byte "}
			writeRefused(t, dir, path, "", reasons)
			writeRefused(t, dir, path, "", reasons, "--allow-destructive")
		})
	}
}

func TestForeignDataInOwnFileRefused(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	path := newOwnFile(t, dir)
	// ioprobe's own runs, one after another, and one that grows the
	// file, reuse it without a flag.
	for _, args := range [][]string{{"--read-pct", "0"}, {"--read-pct", "50", "--bs", "64k"}, {"--read-pct", "0", "--verify"}, {"--read-pct", "0", "--size", "80MiB"}} {
		o := ioprobe(t, dir, append([]string{"run", "--target", path, "--duration", "200ms", "--ramp", "0s", "--output", "json"}, args...)...)
		require.Equal(t, 0, o.code, "%v: %s", args, o.stderr)
		r := decodeResult(t, o.stdout)
		require.False(t, r.Targets[0].Created)
	}
	data := make([]byte, 1<<20)
	_, err := rand.Read(data)
	require.NoError(t, err)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(data, 40<<20)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	writeRefused(t, dir, path, "--allow-destructive", []string{"something else modified it since ioprobe last wrote it"})

	// The modification time put back (touch -d): the change time says
	// the file changed, every sector is read, the first foreign one named.
	// (ioprobe's marking moves the change time by up to 20 ms, which it
	// allows for: a change is seen by it once it is later than that.)
	time.Sleep(100 * time.Millisecond) //hygiene:sleep the clock must pass ioprobe's 20 ms ctime slack: no event to wait on
	marker := make([]byte, 512)
	n, err := unix.Getxattr(path, "user.ioprobe", marker)
	require.NoError(t, err)
	mtime := mtimeFromMarker(t, string(marker[:n]))
	require.NoError(t, unix.UtimesNanoAt(unix.AT_FDCWD, path, []unix.Timespec{{Nsec: unix.UTIME_OMIT}, unix.NsecToTimespec(mtime)}, 0))
	writeRefused(t, dir, path, "--allow-destructive", []string{"its content is no longer ioprobe's (byte 41943040)"})
}

func mtimeFromMarker(t *testing.T, m string) int64 {
	t.Helper()
	for _, f := range strings.Fields(m) {
		if v, ok := strings.CutPrefix(f, "mtime="); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("no mtime in %q", m)
	return 0
}
