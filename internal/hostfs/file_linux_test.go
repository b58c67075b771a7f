package hostfs

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// FileInfo says what the kernel says of a file, in this process and
// through the helper alike: size, allocated blocks, extents, the
// filesystem's type and block size; a FIFO does not hold the call.
func TestFileInfo(t *testing.T) {
	dir := t.TempDir()
	var sfs unix.Statfs_t
	require.NoError(t, unix.Statfs(dir, &sfs))
	written := filepath.Join(dir, "written")
	require.NoError(t, os.WriteFile(written, make([]byte, 3*4096), 0o600))
	f, err := os.Open(written)
	require.NoError(t, err)
	require.NoError(t, f.Sync()) // delayed allocation: blocks and extents once written back
	f.Close()
	sparse := filepath.Join(dir, "sparse")
	require.NoError(t, os.WriteFile(sparse, nil, 0o600))
	require.NoError(t, os.Truncate(sparse, 1<<20))
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))

	check := func(t *testing.T, h *Host) {
		fi, err := h.FileInfo(context.Background(), written, written)
		require.NoError(t, err)
		var st unix.Stat_t
		require.NoError(t, unix.Stat(written, &st))
		require.Equal(t, st.Ino, fi.Ino)
		require.Equal(t, st.Dev, fi.Dev)
		require.EqualValues(t, 3*4096, fi.Size)
		require.Equal(t, st.Blocks, fi.Blocks)
		require.EqualValues(t, sfs.Type, fi.FSType)
		require.EqualValues(t, sfs.Bsize, fi.FSBlock)
		ms, err := h.Mounts()
		require.NoError(t, err)
		m, ok := ms.ByID(fi.MountID)
		require.True(t, ok, "mount id %d is in the mount table", fi.MountID)
		require.Equal(t, DevNumOf(st.Dev), m.DevNum, "the mount the file is on")
		if sfs.Type == unix.EXT4_SUPER_MAGIC || sfs.Type == unix.XFS_SUPER_MAGIC {
			require.GreaterOrEqual(t, fi.Extents, int64(1), "a written file on ext4 or xfs has an extent")
			require.GreaterOrEqual(t, fi.Blocks*512, fi.Size)
		}
		fi, err = h.FileInfo(context.Background(), sparse, sparse)
		require.NoError(t, err)
		require.EqualValues(t, 1<<20, fi.Size)
		require.Zero(t, fi.Blocks, "a hole has no blocks")
		if sfs.Type == unix.EXT4_SUPER_MAGIC || sfs.Type == unix.XFS_SUPER_MAGIC {
			require.Zero(t, fi.Extents)
		}
		fi, err = h.FileInfo(context.Background(), fifo, fifo)
		require.NoError(t, err, "a FIFO is opened without waiting for a writer")
		require.EqualValues(t, unix.S_IFIFO, fi.Mode&unix.S_IFMT)
		require.EqualValues(t, -1, fi.Extents)
		_, err = h.FileInfo(context.Background(), written+".gone", written+".gone")
		require.ErrorIs(t, err, os.ErrNotExist)
	}
	t.Run("here", func(t *testing.T) { check(t, &Host{Calls: NewCalls(8), Deadline: time.Minute}) })
	t.Run("helper", func(t *testing.T) {
		useTestHelper(t)
		check(t, &Host{Calls: NewCalls(8), Deadline: time.Minute})
	})
}
