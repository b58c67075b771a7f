package target

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/iobuf"
)

// A file ioprobe owns, written with content that is not its sectors (a fio
// job's buffer contents), stops being ioprobe's before the first write:
// its marker says why. The process that wrote it takes it back while it
// is as that process left it; another process (here: the memory of it
// cleared) needs --allow-destructive, and so does this one once something
// else touched the file.
func TestForeignContentForsakesTheFile(t *testing.T) {
	path := newOwned(t, t.TempDir(), 4*mib)
	tg, err := Open(path, Options{Write: true, ForeignContent: true})
	require.NoError(t, err)
	require.True(t, tg.Writable)
	require.Equal(t, forsakenMarker, markerOf(t, path), "replaced before the first write")
	// What the run writes: no ioprobe sector at all.
	mem, err := iobuf.New(1, 4096, 0)
	require.NoError(t, err)
	defer mem.Close()
	buf := mem.Slot(0, 4096)
	clear(buf)
	_, err = unix.Pwrite(tg.FD, buf, 0)
	require.NoError(t, err)
	require.NoError(t, tg.Close())

	// This process, the file as it left it: writable again, with or
	// without foreign content, and still not marked ioprobe's.
	for _, foreign := range []bool{true, false} {
		tg, err = Open(path, Options{Write: true, ForeignContent: foreign})
		require.NoError(t, err, "foreign %v", foreign)
		require.False(t, tg.Formatted)
		require.Zero(t, tg.SectorKey)
		require.NoError(t, tg.Close())
		require.Equal(t, forsakenMarker, markerOf(t, path))
	}

	// Another process does not know it.
	left.Lock()
	saved := left.files
	left.files = nil
	left.Unlock()
	requireForeign(t, path, "a fio job's buffer contents", false)
	left.Lock()
	left.files = saved
	left.Unlock()
	tg, err = Open(path, Options{Write: true, AllowDestructive: true})
	require.NoError(t, err)
	require.NoError(t, tg.Close())

	// Something else wrote it: this process does not take it back.
	require.NoError(t, unix.Utimes(path, []unix.Timeval{{Sec: 1}, {Sec: 1}}))
	requireForeign(t, path, "a fio job's buffer contents", false)
}

// A file this Open creates for a run with foreign content is filled as
// ever, then given up before the run writes it.
func TestForeignContentOnANewFile(t *testing.T) {
	path := t.TempDir() + "/new.dat"
	tg, err := Open(path, Options{Write: true, ForeignContent: true, Region: 2 * mib})
	require.NoError(t, err)
	require.True(t, tg.Created)
	require.Equal(t, forsakenMarker, markerOf(t, path))
	require.NoError(t, tg.Close())
}
