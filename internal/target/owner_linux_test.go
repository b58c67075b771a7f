package target

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

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

// requireOwned checks that path may be written without a flag, as ioprobe's.
func requireOwned(t *testing.T, path string) {
	t.Helper()
	tg, err := Open(path, Options{Write: true})
	require.NoError(t, err)
	require.True(t, tg.Writable)
	require.True(t, tg.Formatted)
	require.NotZero(t, tg.SectorKey)
	require.NoError(t, tg.Close())
}

// requireForeign checks that writing path without --allow-destructive is
// refused for reason and that the file's bytes did not change. judged
// says whether a --verify read of it is still judged: where the marker
// names this file, ioprobe wrote every sector, and one that is not sound
// was changed behind its back (what --verify reports); a copy's or an old
// marker proves nothing, and nothing is judged.
func requireForeign(t *testing.T, path, reason string, judged bool) {
	t.Helper()
	before := sha256File(t, path)
	_, err := Open(path, Options{Write: true})
	requireSafetyError(t, err, reason, "--allow-destructive")
	tg, err := Open(path, Options{})
	require.NoError(t, err, "reading stays allowed")
	require.Equal(t, judged, tg.Formatted)
	if judged {
		require.NotZero(t, tg.SectorKey)
	}
	require.NoError(t, tg.Close())
	require.Equal(t, before, sha256File(t, path), "refusing changed the file")
}

// An ioprobe file that a filesystem was made on through a loop device
// (same size, same inode, the marker untouched) is someone's data now.
func TestMkfsOnOwnFileMakesItForeign(t *testing.T) {
	requireRoot(t)
	mkfs := requireTool(t, "mkfs.ext4")
	path := newOwned(t, t.TempDir(), 32*mib)
	requireOwned(t, path)
	marked := markerOf(t, path)
	t.Run("mkfs and mount", func(t *testing.T) {
		dev := attachLoop(t, path)
		run(t, mkfs, "-q", "-F", dev)
		dir := mountAt(t, dev, "rw")
		require.NoError(t, os.WriteFile(filepath.Join(dir, "precious.txt"), []byte("a user's data\n"), 0o644))
	}) // unmounted and detached here
	require.Equal(t, marked, markerOf(t, path), "the marker survives mkfs")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.EqualValues(t, 32*mib, fi.Size())
	// The filesystem is the reason given, one no flag lifts: the refusal
	// does not offer --allow-destructive only to refuse again once given.
	before := sha256File(t, path)
	for _, o := range []Options{{Write: true}, {Write: true, AllowDestructive: true}} {
		_, err = Open(path, o)
		requireSafetyError(t, err, "it holds an ext4 filesystem (TYPE=ext4", "")
	}
	tg, err := Open(path, Options{})
	require.NoError(t, err, "reading stays allowed")
	require.True(t, tg.Formatted)
	require.NoError(t, tg.Close())
	require.Equal(t, before, sha256File(t, path), "refusing changed the file")
}

// Copies carry the marker (cp --preserve=xattr) but are not ioprobe's:
// neither a whole copy, nor a user's file that only got the xattr, nor
// one whose marker was forged to name it.
func TestCopiedMarkerIsNotOwnership(t *testing.T) {
	cp := requireTool(t, "cp")
	dir := t.TempDir()
	path := newOwned(t, dir, 4*mib)

	copied := filepath.Join(dir, "copy.dat")
	run(t, cp, "--preserve=xattr", path, copied)
	require.Equal(t, markerOf(t, path), markerOf(t, copied))
	requireForeign(t, copied, "it carries the marker of another file", false)

	user := filepath.Join(dir, "user.db")
	require.NoError(t, os.WriteFile(user, bytes.Repeat([]byte("rows of a user's database\n"), 4*mib/26+1)[:4*mib], 0o644))
	run(t, cp, "--attributes-only", "--preserve=xattr", path, user)
	require.Equal(t, markerOf(t, path), markerOf(t, user))
	requireForeign(t, user, "it carries the marker of another file", false)

	// A marker that names the user's file itself: the content decides.
	var st unix.Statx_t
	require.NoError(t, unix.Statx(unix.AT_FDCWD, user, 0, unix.STATX_INO|unix.STATX_BTIME, &st))
	forged := marker{size: 4 * mib, id: 42, ino: st.Ino}
	if st.Mask&unix.STATX_BTIME != 0 {
		forged.btime = st.Btime.Sec*1e9 + int64(st.Btime.Nsec)
	}
	require.NoError(t, unix.Setxattr(user, markerXattr, []byte(forged.String()), 0))
	requireForeign(t, user, "its content is no longer ioprobe's (byte 0)", true)

	requireOwned(t, path) // the original stays ioprobe's
}

// Damage where the check always looks (one sector at the start, one in
// the last 64 KiB), or over half the file (the random sample cannot miss
// it: 64 blocks, each a coin toss), makes the file foreign.
func TestOverwrittenPartsMakeItForeign(t *testing.T) {
	for _, c := range []struct {
		name     string
		off, len int64
	}{
		{"first sector", 0, 512},
		{"near the end", 16*mib - 40<<10, 512},
		{"last sector", 16*mib - 512, 512},
		{"half the middle", 4 * mib, 8 * mib},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := newOwned(t, t.TempDir(), 16*mib)
			requireOwned(t, path)
			writeAt(t, path, c.off, bytes.Repeat([]byte{0xa5}, int(c.len)))
			requireForeign(t, path, "its content is no longer ioprobe's", true)
		})
	}
}

// A fill killed before it could cut the file back leaves the file larger
// than its marker says, the rest ioprobe's sectors or preallocated zeros:
// the next Open fills it again. Anything else there is someone's data.
func TestInterruptedFillIsCompleted(t *testing.T) {
	dir := t.TempDir()
	path := newOwned(t, dir, 4*mib)
	require.NoError(t, os.Truncate(path, 6*mib)) // zeros, as fallocate leaves them
	tg, err := Open(path, Options{Write: true})
	require.NoError(t, err)
	require.True(t, tg.Extended)
	require.EqualValues(t, 6*mib, tg.Size)
	require.EqualValues(t, 6*mib, tg.Region)
	require.NoError(t, tg.Close())
	require.EqualValues(t, 6*mib, markedSize(t, path))
	requireOwned(t, path)

	require.NoError(t, os.Truncate(path, 8*mib))
	writeAt(t, path, 6*mib, []byte("appended by someone"))
	requireForeign(t, path, "its size changed from 6291456 to 8388608 bytes since ioprobe filled it, and its content is no longer ioprobe's (byte 6291456)", false)

	// Truncated below what ioprobe filled: foreign too.
	path2 := newOwned(t, t.TempDir(), 4*mib)
	require.NoError(t, os.Truncate(path2, 2*mib))
	requireForeign(t, path2, "its size changed from 4194304 to 2097152 bytes", false)
}

// Files an older ioprobe marked (v1: size only) prove nothing.
func TestOldMarkerIsForeign(t *testing.T) {
	path := newOwned(t, t.TempDir(), mib)
	require.NoError(t, unix.Setxattr(path, markerXattr, []byte("ioprobe.target/v1 size=1048576 sectors=v1"), 0))
	requireForeign(t, path, "it carries the marker of an older ioprobe", false)
}

// A --verify run that writes is the only writer of a file: every other
// writer is refused while it runs, and it is refused while another writes.
// Plain writers share the file; readers are never held up.
func TestVerifyWriterIsAlone(t *testing.T) {
	path := newOwned(t, t.TempDir(), mib)
	plain1, err := Open(path, Options{Write: true})
	require.NoError(t, err)
	plain2, err := Open(path, Options{Write: true})
	require.NoError(t, err, "plain writers share a file")
	_, err = Open(path, Options{Write: true, Exclusive: true})
	requireSafetyError(t, err, "another run is writing to it, and --verify cannot tell that run's writes from lost ones", "")
	require.NoError(t, plain1.Close())
	require.NoError(t, plain2.Close())

	v, err := Open(path, Options{Write: true, Exclusive: true})
	require.NoError(t, err, "alone now")
	_, err = Open(path, Options{Write: true})
	requireSafetyError(t, err, "a run with --verify is writing to it", "")
	require.Error(t, Check(path, Options{Write: true}), "Check sees it too")
	r, err := Open(path, Options{})
	require.NoError(t, err, "reading is never held up")
	require.NoError(t, r.Close())
	require.NoError(t, v.Close())
	requireOwned(t, path)
}
