package safefile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestReadBoundsAndTypes(t *testing.T) {
	dir := t.TempDir()
	k := Kind{What: "test file", Max: 10}
	small := filepath.Join(dir, "small")
	require.NoError(t, os.WriteFile(small, []byte("0123456789"), 0o600))
	data, err := k.Read(small)
	require.NoError(t, err)
	require.Equal(t, "0123456789", string(data))

	big := filepath.Join(dir, "big")
	require.NoError(t, os.WriteFile(big, []byte("0123456789x"), 0o600))
	_, err = k.Read(big)
	require.EqualError(t, err, "test file "+big+" is larger than 10 bytes: ioprobe reads at most 10 bytes of a test file")
	require.True(t, IsBadInput(err))

	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	for p, what := range map[string]string{fifo: "a FIFO", dir: "a directory", "/dev/zero": "a character device"} {
		_, err = k.Read(p)
		require.EqualError(t, err, "test file "+p+" is "+what+", not a regular file: ioprobe reads a test file only from a regular file")
	}
	_, err = k.Read(filepath.Join(dir, "none"))
	require.EqualError(t, err, "test file "+filepath.Join(dir, "none")+" cannot be opened: no such file or directory")
}

// lookupDirs names every directory a name is looked up in, through
// symlinks in the middle of a path and at its end.
func TestLookupDirsFollowsEveryLink(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ts := filepath.Join(dir, "..2026_01_01")
	require.NoError(t, os.Mkdir(ts, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ts, "c.yaml"), nil, 0o644))
	require.NoError(t, os.Symlink("..2026_01_01", filepath.Join(dir, "..data")))
	require.NoError(t, os.Symlink("..data/c.yaml", filepath.Join(dir, "c.yaml")))
	other := filepath.Join(dir, "other")
	require.NoError(t, os.Mkdir(other, 0o755))
	require.NoError(t, os.Symlink(filepath.Join(dir, "c.yaml"), filepath.Join(other, "link.yaml")))

	dirs, final, err := lookupDirs(filepath.Join(other, "link.yaml"))
	require.NoError(t, err)
	require.Equal(t, filepath.Join(ts, "c.yaml"), final)
	require.Contains(t, dirs, other)
	require.Contains(t, dirs, dir)
	require.Contains(t, dirs, ts)
	require.Contains(t, dirs, "/")
	require.NoError(t, CheckConfig("config file", filepath.Join(other, "link.yaml")))

	require.NoError(t, os.Chmod(other, 0o777))
	err = CheckConfig("config file", filepath.Join(other, "link.yaml"))
	require.ErrorContains(t, err, "its directory "+other+" is writable by every user (mode 0777, not sticky)")

	loop := filepath.Join(dir, "loop")
	require.NoError(t, os.Symlink("loop", loop))
	_, _, err = lookupDirs(loop)
	require.ErrorContains(t, err, "too many symbolic links")
}

func TestCreateReplacesOnlyARegularFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.json")
	require.NoError(t, os.WriteFile(p, []byte("old"), 0o640))
	o, err := Create(p)
	require.NoError(t, err)
	_, err = o.File().WriteString("new")
	require.NoError(t, err)
	require.NoError(t, o.Commit())
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, "new", string(data))
	fi, err := os.Stat(p)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), fi.Mode().Perm())

	// A symlink that takes the name between Create and Commit: the
	// document is dropped, the link and what it names untouched.
	o, err = Create(p)
	require.NoError(t, err)
	victim := filepath.Join(dir, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep"), 0o600))
	require.NoError(t, os.Remove(p))
	require.NoError(t, os.Symlink(victim, p))
	err = o.Commit()
	require.ErrorContains(t, err, "is a symbolic link (to "+victim+")")
	data, err = os.ReadFile(victim)
	require.NoError(t, err)
	require.Equal(t, "keep", string(data))
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		require.False(t, strings.HasSuffix(e.Name(), ".ioprobe-tmp"), e.Name())
	}

	o, err = Create(filepath.Join(dir, "aborted.json"))
	require.NoError(t, err)
	o.Abort()
	ents, err = os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 2, "out.json and victim only")
}

// TestCheckOutRefusesWhatIsInUse: --out may not be a file the command
// uses: the same file through another name, or a name the run is to
// create. Another name beside them passes.
func TestCheckOutRefusesWhatIsInUse(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	require.NoError(t, os.WriteFile(in, []byte("{}"), 0o600))
	require.NoError(t, os.Symlink(in, filepath.Join(dir, "link.json")))
	uses := []InUse{{What: "an input", Path: filepath.Join(dir, "link.json")}, {What: "a target", Path: filepath.Join(dir, "sub", "..", "new.dat")}}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o700))
	require.EqualError(t, CheckOut(in, uses...), "--out "+in+" is an input ("+filepath.Join(dir, "link.json")+"): writing the output there would replace it; name another file")
	require.ErrorContains(t, CheckOut(filepath.Join(dir, "new.dat"), uses...), "is a target (")
	require.NoError(t, CheckOut(filepath.Join(dir, "out.json"), uses...))
}
