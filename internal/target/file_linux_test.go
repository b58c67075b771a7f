package target

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/verify"
)

const mib = 1 << 20

// requireRandomContent checks that data is what a benchmark may read:
// no zeros, no two 4 KiB blocks alike, and nothing a compressor can shrink.
func requireRandomContent(t *testing.T, data []byte) {
	t.Helper()
	seen := map[[32]byte]int64{}
	for off := 0; off+4096 <= len(data); off += 4096 {
		blk := data[off : off+4096]
		require.False(t, bytes.Equal(blk, make([]byte, 4096)), "block at %d is zeros", off)
		sum := sha256.Sum256(blk)
		prev, dup := seen[sum]
		require.False(t, dup, "blocks at %d and %d are identical", prev, off)
		seen[sum] = int64(off)
	}
	var z bytes.Buffer
	w, err := flate.NewWriter(&z, flate.BestCompression)
	require.NoError(t, err)
	sample := data[:min(len(data), mib)]
	_, err = w.Write(sample)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.Greater(t, z.Len(), len(sample)*99/100, "the data compresses")
}

func TestNewFileCreatedFilledMarkedReused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "target.dat")
	var progress []int64
	opts := Options{Region: 9 * mib, Align: 4096, MaxBlock: 65536,
		Progress: func(done, total int64) {
			require.Equal(t, int64(9*mib), total)
			progress = append(progress, done)
		}}

	tg, err := Open(path, opts)
	require.NoError(t, err)
	require.True(t, tg.Created)
	require.Equal(t, KindFile, tg.Kind)
	require.Equal(t, int64(9*mib), tg.Size)
	require.Equal(t, int64(9*mib), tg.Region)
	require.False(t, tg.Writable, "a read workload gets a read-only descriptor")
	require.Equal(t, unix.O_RDONLY, openFlags(t, tg.FD)&unix.O_ACCMODE)
	require.NotZero(t, openFlags(t, tg.FD)&unix.O_DIRECT)
	require.NotZero(t, openFlags(t, tg.FD)&unix.O_NOATIME, "reads must not cost an atime update")
	require.Contains(t, []int64{512, 1024, 2048, 4096}, tg.LogicalBlock)
	require.Equal(t, []int64{4 * mib, 8 * mib, 9 * mib}, progress, "filled in 4 MiB chunks")
	require.NotEmpty(t, tg.Device, "a file on /tmp reaches a real block device")
	require.FileExists(t, filepath.Join("/sys/class/block", tg.Device, "stat"))
	require.True(t, tg.Formatted)
	require.NotZero(t, tg.SectorKey)
	key := tg.SectorKey
	require.NoError(t, tg.Close())

	require.EqualValues(t, 9*mib, markedSize(t, path))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Len(t, data, 9*mib)
	requireRandomContent(t, data)
	// Every sector is in --verify's format, for the offset it is at.
	require.Equal(t, verify.OK, verify.Check(data, 0, key).Problem)
	var st unix.Stat_t
	require.NoError(t, unix.Stat(path, &st))
	require.GreaterOrEqual(t, st.Blocks*512, int64(9*mib), "preallocated, not sparse")

	// The second run reuses it as it is, and may write without a flag.
	before := sha256File(t, path)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	progress = nil
	opts.Write = true
	tg, err = Open(path, opts)
	require.NoError(t, err)
	require.False(t, tg.Created)
	require.False(t, tg.Extended)
	require.Equal(t, key, tg.SectorKey, "the same file, the same key")
	require.True(t, tg.Writable)
	require.Equal(t, unix.O_RDWR, openFlags(t, tg.FD)&unix.O_ACCMODE)
	require.Empty(t, progress, "not refilled")
	require.NoError(t, tg.Close())
	fi2, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, fi.ModTime(), fi2.ModTime())
	require.Equal(t, before, sha256File(t, path))

	// A smaller region of the same file is fine too.
	tg, err = Open(path, Options{Region: 4 * mib, Align: 4096})
	require.NoError(t, err)
	require.Equal(t, int64(4*mib), tg.Region)
	require.Equal(t, int64(9*mib), tg.Size)
	require.NoError(t, tg.Close())
}

func TestMarkedFileExtended(t *testing.T) {
	path := filepath.Join(t.TempDir(), "grow.dat")
	tg, err := Open(path, Options{Region: 4 * mib})
	require.NoError(t, err)
	require.NoError(t, tg.Close())
	old, err := os.ReadFile(path)
	require.NoError(t, err)

	// Check says the bigger region is fine and changes nothing.
	require.NoError(t, Check(path, Options{Region: 6 * mib}))
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.EqualValues(t, 4*mib, st.Size(), "Check extended the file")
	require.EqualValues(t, 4*mib, markedSize(t, path))

	var done []int64
	tg, err = Open(path, Options{Region: 6 * mib, Progress: func(d, total int64) {
		require.Equal(t, int64(2*mib), total, "only the new part is filled")
		done = append(done, d)
	}})
	require.NoError(t, err)
	require.False(t, tg.Created, "extended, not created")
	require.True(t, tg.Extended)
	require.True(t, tg.Formatted, "every read of the grown file can be judged")
	require.Equal(t, int64(6*mib), tg.Size)
	require.Equal(t, []int64{2 * mib}, done)
	require.NoError(t, tg.Close())

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, old, data[:4*mib], "the old part is untouched")
	requireRandomContent(t, data)
	require.EqualValues(t, 6*mib, markedSize(t, path))
	require.Equal(t, verify.OK, verify.Check(data, 0, tg.SectorKey).Problem, "the new part is in the format too")
}

func TestDefaultFileSize(t *testing.T) {
	dir := t.TempDir()
	tg, err := Open(filepath.Join(dir, "d"), Options{DefaultFileSize: 2 * mib, Align: 4096})
	require.NoError(t, err)
	require.Equal(t, int64(2*mib), tg.Size)
	require.Equal(t, int64(2*mib), tg.Region)
	require.NoError(t, tg.Close())
}

func TestForeignFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "theirs.db")
	content := bytes.Repeat([]byte("precious data 0123456789abcdef\n"), mib/31+1)[:mib]
	require.NoError(t, os.WriteFile(path, content, 0o644))
	before := sha256File(t, path)

	_, err := Open(path, Options{Write: true, Align: 4096})
	requireSafetyError(t, err, "it is an existing file that ioprobe did not create", "--allow-destructive")
	require.EqualError(t, err, "refusing to write to "+path+": it is an existing file that ioprobe did not create, and writes would overwrite its contents (--allow-destructive overrides this)")

	_, err = Open(path, Options{Region: 2 * mib, Align: 4096})
	require.ErrorContains(t, err, "region 2MiB is larger than the target's size 1MiB")
	require.True(t, IsBadInput(err))

	tg, err := Open(path, Options{Align: 4096})
	require.NoError(t, err)
	require.False(t, tg.Writable)
	require.False(t, tg.Created)
	require.Equal(t, int64(mib), tg.Region)
	require.NoError(t, tg.Close())

	tg, err = Open(path, Options{Write: true, AllowDestructive: true, Align: 4096})
	require.NoError(t, err)
	require.True(t, tg.Writable)
	require.Equal(t, unix.O_RDWR, openFlags(t, tg.FD)&unix.O_ACCMODE)
	require.NoError(t, tg.Close())

	require.Equal(t, before, sha256File(t, path), "opening never changes the file")
	_, err = unix.Getxattr(path, markerXattr, make([]byte, 64))
	require.ErrorIs(t, err, unix.ENODATA, "a foreign file is never marked")
}

// Rewriting an ioprobe file in place keeps the xattr; its content unmasks it.
func TestStaleMarkerIsForeign(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.dat")
	tg, err := Open(path, Options{Region: mib})
	require.NoError(t, err)
	require.NoError(t, tg.Close())
	require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte{1}, 2*mib), 0o644)) // truncates and rewrites in place
	require.EqualValues(t, mib, markedSize(t, path))

	_, err = Open(path, Options{Write: true})
	requireSafetyError(t, err, "it carries ioprobe's marker, but its size changed from 1048576 to 2097152 bytes since ioprobe last wrote it, so it may now hold other data", "--allow-destructive")
	_, err = Open(path, Options{Region: 4 * mib})
	require.ErrorContains(t, err, "region 4MiB is larger than the target's size 2MiB", "a stale file is never extended")
}

func TestBadInputCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "new.dat")
	tests := []struct {
		name string
		path string
		opts Options
		want string
	}{
		{"no size", p, Options{}, "does not exist, and no size was given to create it with (--size)"},
		{"missing directory", filepath.Join(dir, "nope", "new.dat"), Options{Region: mib}, "cannot create it: directory " + filepath.Join(dir, "nope") + " does not exist"},
		{"alignment", p, Options{Region: mib, Align: 1000}, "alignment 1000B is not a multiple of the logical block size"},
		{"region not a multiple of the alignment", p, Options{Region: mib + 4096, Align: 8192}, "region 1028KiB is not a multiple of the alignment 8KiB"},
		{"region smaller than a transfer", p, Options{Region: 64 << 10, Align: 4096, MaxBlock: mib}, "region 64KiB is smaller than the largest transfer 1MiB"},
		{"negative", p, Options{Region: -4096}, "negative size"},
		{"more than the disk holds", p, Options{Region: 1 << 60, Align: 4096}, "not enough free space in " + dir},
		{"empty path", "", Options{Region: mib}, "empty path"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := Open(tc.path, tc.opts)
			require.Nil(t, tg)
			require.ErrorContains(t, err, tc.want)
			require.True(t, IsBadInput(err), "%v", err)
			ents, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Empty(t, ents)
		})
	}
}

func TestNotAFileOrDevice(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer l.Close()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	dangling := filepath.Join(dir, "dangling")
	require.NoError(t, os.Symlink(filepath.Join(dir, "missing"), dangling))

	tests := []struct {
		path, want string
	}{
		{dir, "is a directory; a target is a regular file or a block device"},
		{"/dev/null", "is a character device"},
		{sock, "is a socket"},
		{fifo, "is a FIFO"},
		{dangling, "is a symlink whose target does not exist"},
	}
	for _, tc := range tests {
		for _, write := range []bool{false, true} {
			_, err := Open(tc.path, Options{Write: write, AllowDestructive: write, Region: mib})
			require.ErrorContains(t, err, tc.want)
			require.True(t, IsBadInput(err))
		}
	}
	requireNoEntry(t, filepath.Join(dir, "missing"))
}

// A symlink as the target is followed once, to read what it names; a
// file is never written through one.
func TestSymlinkResolved(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.dat")
	tg, err := Open(real, Options{Region: mib})
	require.NoError(t, err)
	require.NoError(t, tg.Close())
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink("real.dat", link))
	tg, err = Open(link, Options{})
	require.NoError(t, err, "read through a symlink")
	require.Equal(t, link, tg.Path)
	require.Equal(t, real, tg.Resolved)
	require.False(t, tg.Created)
	require.NoError(t, tg.Close())

	before := sha256File(t, real)
	_, err = Open(link, Options{Write: true})
	requireSafetyError(t, err, "it is a symbolic link to "+real+", and ioprobe never writes a file through a link", "")
	_, err = Open(link, Options{Region: 2 * mib})
	requireSafetyError(t, err, "it is a symbolic link to "+real+", which ioprobe would have to extend to 2097152 bytes", "")
	require.Error(t, Check(link, Options{Write: true}))
	require.Equal(t, before, sha256File(t, real))
	require.EqualValues(t, mib, markedSize(t, real))
}

func TestTmpfsRefused(t *testing.T) {
	var sfs unix.Statfs_t
	if unix.Statfs("/dev/shm", &sfs) != nil || sfs.Type != unix.TMPFS_MAGIC {
		t.Skip("/dev/shm is not tmpfs here") //hygiene:skip the machine's mounts, not something make test installs
	}
	dir, err := os.MkdirTemp("/dev/shm", "ioprobe-target-test-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	existing := filepath.Join(dir, "existing")
	require.NoError(t, os.WriteFile(existing, make([]byte, mib), 0o644))

	for _, tc := range []struct {
		path string
		opts Options
	}{
		{filepath.Join(dir, "new"), Options{Region: mib}},
		{existing, Options{}},
		{existing, Options{Write: true, AllowDestructive: true}},
	} {
		_, err := Open(tc.path, tc.opts)
		se := requireSafetyError(t, err, "is on tmpfs, which serves direct I/O from memory", "")
		require.False(t, se.Write, "refused for reading too")
		require.Contains(t, err.Error(), "refusing to use "+tc.path)
	}
	requireNoEntry(t, filepath.Join(dir, "new"))
}

// Any failure while filling removes the partial file.
func TestFailedFillRemovesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "partial.dat")
	e := defaultEnv()
	e.fillHook = func(off int64) error {
		if off >= 4*mib {
			return fmt.Errorf("injected EIO: %w", unix.EIO)
		}
		return nil
	}
	_, err := e.open(path, Options{Region: 12 * mib})
	require.ErrorIs(t, err, unix.EIO)
	require.ErrorContains(t, err, "removed the partial file "+path)
	require.False(t, IsBadInput(err), "a failing disk is not bad input")
	requireNoEntry(t, path)
}

// mountSmallExt4 mounts a fresh 16 MiB ext4 read-write and returns the
// mount point.
func mountSmallExt4(t *testing.T) string {
	t.Helper()
	requireRoot(t)
	backing := newBacking(t, 16*mib)
	run(t, requireTool(t, "mkfs.ext4"), "-q", "-F", backing)
	dev := attachLoop(t, backing)
	return mountAt(t, dev, "rw")
}

func TestENOSPC(t *testing.T) {
	dir := mountSmallExt4(t)
	path := filepath.Join(dir, "big.dat")

	// Checked before anything is created.
	_, err := Open(path, Options{Region: 64 * mib})
	require.ErrorContains(t, err, "not enough free space in "+dir+": the file needs 67108864 bytes")
	require.ErrorIs(t, err, unix.ENOSPC)
	require.True(t, IsBadInput(err))
	requireNoEntry(t, path)

	// And when the filesystem runs out anyway (the check skipped), the
	// partial file goes.
	e := defaultEnv()
	e.spaceCheck = false
	_, err = e.open(path, Options{Region: 64 * mib})
	require.ErrorIs(t, err, unix.ENOSPC)
	require.ErrorContains(t, err, "not enough space for 67108864 bytes")
	require.ErrorContains(t, err, "removed the partial file")
	requireNoEntry(t, path)

	// Extending an ioprobe file that does not fit leaves it as it was.
	tg, err := Open(path, Options{Region: 4 * mib})
	require.NoError(t, err)
	require.NoError(t, tg.Close())
	before := sha256File(t, path)
	_, err = e.open(path, Options{Region: 64 * mib})
	require.ErrorIs(t, err, unix.ENOSPC)
	require.ErrorContains(t, err, "cut it back to its previous 4194304 bytes")
	require.Equal(t, before, sha256File(t, path))
	require.EqualValues(t, 4*mib, markedSize(t, path))
	tg, err = Open(path, Options{Write: true})
	require.NoError(t, err, "still ioprobe's")
	require.NoError(t, tg.Close())
}

// Closing Options.Cancel stops a fill between chunks and removes the
// partial file, so a daemon can stop at once without leaving a half-filled
// file that later runs would mistake for data.
func TestCancelledFillRemovesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cancelled.dat")
	cancel := make(chan struct{})
	e := defaultEnv()
	e.fillHook = func(off int64) error {
		if off >= 4*mib {
			close(cancel)
		}
		return nil
	}
	_, err := e.open(path, Options{Region: 16 * mib, Cancel: cancel})
	require.ErrorIs(t, err, ErrCancelled)
	require.ErrorContains(t, err, "removed the partial file "+path)
	requireNoEntry(t, path)
}
