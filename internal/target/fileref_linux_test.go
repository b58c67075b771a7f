package target

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestDirUnsafe(t *testing.T) {
	const me, other = 1000, 1001
	member := func(gid uint32) bool { return gid == 50 }
	for _, c := range []struct {
		uid, gid, mode uint32
		want           string
	}{
		{me, 50, 0o755, ""},
		{0, 0, 0o755, ""},
		{me, 50, 0o700, ""},
		{0, 0, 0o1777, ""},  // /tmp
		{0, 60, 0o1770, ""}, // sticky, group-writable
		{me, 50, 0o775, ""}, // a group of ours
		{0, 60, 0o775, "is writable by the users of group 60 (mode 0775, not sticky)"},
		{0, 0, 0o777, "is writable by every user (mode 0777, not sticky)"},
		{me, 50, 0o2777, "is writable by every user (mode 2777, not sticky)"},
		{other, 50, 0o755, "belongs to another user (uid 1001)"},
		{other, 50, 0o1777, "belongs to another user (uid 1001)"}, // the owner may rename anything in it
	} {
		st := unix.Stat_t{Uid: c.uid, Gid: c.gid, Mode: unix.S_IFDIR | c.mode}
		require.Equal(t, c.want, dirUnsafe(st, me, member), "%+v", c)
	}
}

// victim is a root-owned file ioprobe must never touch: its bytes, size
// and extended attributes, to compare after.
type victim struct {
	path  string
	data  []byte
	xattr []byte
}

func newVictim(t *testing.T) victim {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o700))
	v := victim{path: filepath.Join(dir, "shadow"), data: bytes.Repeat([]byte("root:secret:19000:0:99999:7:::\n"), 4096)}
	require.NoError(t, os.WriteFile(v.path, v.data, 0o600))
	v.xattr = []byte("keep me")
	require.NoError(t, unix.Setxattr(v.path, "user.victim", v.xattr, 0))
	return v
}

func (v victim) requireIntact(t *testing.T) {
	t.Helper()
	got, err := os.ReadFile(v.path)
	require.NoError(t, err)
	require.True(t, bytes.Equal(v.data, got), "the victim's bytes changed")
	buf := make([]byte, 256)
	n, err := unix.Getxattr(v.path, "user.victim", buf)
	require.NoError(t, err)
	require.Equal(t, v.xattr, buf[:n])
	_, err = unix.Getxattr(v.path, markerXattr, buf)
	require.ErrorIs(t, err, unix.ENODATA, "the victim got ioprobe's marker")
	sz, err := unix.Listxattr(v.path, buf)
	require.NoError(t, err)
	require.Equal(t, "user.victim\x00", string(buf[:sz]), "the victim's xattrs changed")
}

// swap renames the file at path away and puts a symlink to the victim in
// its place, as a user who may rename files in its directory would.
func swap(t *testing.T, path string, v victim) {
	t.Helper()
	require.NoError(t, os.Rename(path, path+".moved"))
	require.NoError(t, os.Symlink(v.path, path))
}

// The file ioprobe creates is swapped for a symlink to a root-owned file
// while it is being filled (for a read run and a write run), or while an
// ioprobe file is being grown: ioprobe writes only its own file, through
// its descriptor, and fails naming the swap. Its own file, now under
// another name, is emptied. The directory is one only root may write
// (root makes the swap here), so ioprobe's directory rule lets it in.
func TestSwapWhileFillingNeverWritesTheVictim(t *testing.T) {
	for _, c := range []struct {
		name   string
		opts   Options
		extend bool
	}{
		{"read run", Options{Region: 16 * mib}, false},
		{"write run", Options{Region: 16 * mib, Write: true}, false},
		{"growing an ioprobe file", Options{Region: 16 * mib}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := newVictim(t)
			path := filepath.Join(t.TempDir(), "bench.dat")
			from := int64(0)
			if c.extend {
				newOwnedAt(t, path, 4*mib)
				from = 4 * mib
			}
			e := defaultEnv()
			swapped := false
			e.fillHook = func(off int64) error {
				if off >= from+4*mib && !swapped {
					swap(t, path, v)
					swapped = true
				}
				return nil
			}
			_, err := e.open(path, c.opts)
			require.True(t, swapped)
			se := requireSafetyError(t, err, path+" was renamed or replaced while ioprobe worked on it (it is now a symbolic link", "")
			require.Equal(t, []RefusalID{RefuseReplaced}, se.IDs)
			v.requireIntact(t)
			lst, err := os.Lstat(path)
			require.NoError(t, err)
			require.Equal(t, os.ModeSymlink, lst.Mode()&os.ModeType, "the symlink is left alone")
			moved, err := os.Stat(path + ".moved")
			require.NoError(t, err)
			if !c.extend {
				require.Zero(t, moved.Size(), "ioprobe empties its own file when its name is taken")
			} else {
				require.EqualValues(t, 4*mib, moved.Size(), "cut back to what it was, through its descriptor")
			}
		})
	}
}

// newOwnedAt creates an ioprobe file of size bytes at path.
func newOwnedAt(t *testing.T, path string, size int64) {
	t.Helper()
	tg, err := Open(path, Options{Region: size})
	require.NoError(t, err)
	require.NoError(t, tg.Close())
}

// An existing file replaced by a symlink between the lookup and the open
// is not followed (O_NOFOLLOW), for reading or writing.
func TestExistingFileSwappedIsNotFollowed(t *testing.T) {
	for _, write := range []bool{false, true} {
		v := newVictim(t)
		path := filepath.Join(t.TempDir(), "bench.dat")
		newOwnedAt(t, path, 4*mib)
		r, err := lookup(path)
		require.NoError(t, err)
		swap(t, path, v)
		_, err = defaultEnv().openFile(r, Options{Write: write, AllowDestructive: true}, nil)
		require.ErrorIs(t, err, unix.ELOOP)
		require.ErrorContains(t, err, "was replaced by a symbolic link")
		require.True(t, IsBadInput(err))
		v.requireIntact(t)
	}
}

// The write descriptor is opened by name after the checks: a file put in
// the place of the one checked is refused, not written.
func TestReplacedBeforeWritableReopen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bench.dat")
	newOwnedAt(t, path, 4*mib)
	other := filepath.Join(dir, "other.dat")
	require.NoError(t, os.WriteFile(other, bytes.Repeat([]byte{7}, 4*mib), 0o644))
	r, err := lookup(path)
	require.NoError(t, err)
	fd, err := r.openAt(unix.O_RDONLY)
	require.NoError(t, err)
	defer unix.Close(fd)
	require.NoError(t, os.Rename(other, path))
	_, err = r.reopen(fd, unix.O_RDWR)
	requireSafetyError(t, err, "it is now another regular file", "")
	r.close()
}

// A directory that others could swap files in is refused for anything
// ioprobe would write there: creating, extending, writing. Reading an
// existing file there is fine, and so is a sticky directory like /tmp.
func TestSharedDirectoryRefused(t *testing.T) {
	requireRoot(t) // a directory root owns, as the daemon's would be
	dir := t.TempDir()
	owned := filepath.Join(dir, "owned.dat")
	newOwnedAt(t, owned, 2*mib)
	require.NoError(t, os.Chmod(dir, 0o777))
	before := sha256File(t, owned)
	marked := markerOf(t, owned)

	for _, c := range []struct {
		path string
		opts Options
	}{
		{filepath.Join(dir, "new.dat"), Options{Region: mib}},
		{owned, Options{Write: true}},
		{owned, Options{Region: 4 * mib}},
	} {
		for _, check := range []bool{false, true} {
			var err error
			if check {
				err = Check(c.path, c.opts)
			} else {
				_, err = Open(c.path, c.opts)
			}
			se := requireSafetyError(t, err, "its directory "+dir+" is writable by every user (mode 0777, not sticky), who could swap the file ioprobe writes for a link to another", "")
			require.True(t, se.Write)
		}
	}
	requireNoEntry(t, filepath.Join(dir, "new.dat"))
	require.Equal(t, before, sha256File(t, owned))
	require.Equal(t, marked, markerOf(t, owned))
	tg, err := Open(owned, Options{})
	require.NoError(t, err, "reading writes nothing")
	require.NoError(t, tg.Close())

	require.NoError(t, unix.Chmod(dir, 0o1777))
	tg, err = Open(filepath.Join(dir, "new.dat"), Options{Region: mib, Write: true})
	require.NoError(t, err, "sticky: nobody else may rename root's file")
	require.NoError(t, tg.Close())
}

// RemoveIfSame removes only the inode it was given; CreatedFile does the
// same for a file a run created.
func TestRemoveOnlyOwnInode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "check.dat")
	tg, err := Open(path, Options{Region: mib})
	require.NoError(t, err)
	require.True(t, tg.Created)
	c, err := tg.KeepCreated()
	require.NoError(t, err)
	c2, err := tg.KeepCreated()
	require.NoError(t, err)
	require.True(t, c.Same(c2))
	require.NoError(t, tg.Close())

	// A user's file renamed onto the name: left alone.
	user := filepath.Join(dir, "user.db")
	require.NoError(t, os.WriteFile(user, []byte("a user's rows\n"), 0o644))
	require.NoError(t, os.Rename(user, path))
	err = c.Remove()
	require.ErrorIs(t, err, ErrNotSameFile)
	require.ErrorContains(t, err, "check.dat is another regular file")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "a user's rows\n", string(got))

	// A symlink put there: left alone, never followed.
	v := newVictim(t)
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Symlink(v.path, path))
	require.ErrorIs(t, c2.Remove(), ErrNotSameFile)
	v.requireIntact(t)
	_, err = os.Lstat(path)
	require.NoError(t, err)

	// Its own file: removed.
	require.NoError(t, os.Remove(path))
	tg, err = Open(path, Options{Region: mib})
	require.NoError(t, err)
	c, err = tg.KeepCreated()
	require.NoError(t, err)
	require.NoError(t, tg.Close())
	require.NoError(t, c.Remove())
	requireNoEntry(t, path)
	require.NoError(t, c.Remove(), "twice is fine")

	// Not created by this Open: nothing to keep.
	newOwnedAt(t, path, mib)
	tg, err = Open(path, Options{})
	require.NoError(t, err)
	_, err = tg.KeepCreated()
	require.Error(t, err)
	require.NoError(t, tg.Close())

	// The low-level helper, with a name that is gone: not an error.
	dfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY, 0)
	require.NoError(t, err)
	defer unix.Close(dfd)
	fd, err := unix.Open(path, unix.O_PATH, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	require.NoError(t, os.Remove(path))
	require.NoError(t, RemoveIfSame(dfd, "check.dat", fd))
	require.False(t, errors.Is(RemoveIfSame(dfd, "check.dat", fd), ErrNotSameFile))
}

// A path ending in / names a directory: never a file of that name.
func TestTrailingSlashNamesADirectory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.dat")
	newOwnedAt(t, file, mib)
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "missing") + "/", "directory " + filepath.Join(dir, "missing") + " does not exist (a path ending in / names a directory"},
		{file + "/", "is not a directory (a path ending in / names a directory)"},
		{dir + "/", "is a directory; a target is a regular file or a block device"},
	} {
		_, err := Open(c.path, Options{Region: mib, Write: true})
		require.ErrorContains(t, err, c.want)
		require.True(t, IsBadInput(err))
	}
	requireNoEntry(t, filepath.Join(dir, "missing"))
}
