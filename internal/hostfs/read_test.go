package hostfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A file is read up to its bound, and one byte more is an error that
// names the file and the bound; /dev/zero, which never ends, is one.
func TestReadFileBounded(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "attr")
	require.NoError(t, os.WriteFile(p, []byte(strings.Repeat("x", 100)), 0o644))
	b, err := ReadFile(p, 100)
	require.NoError(t, err)
	require.Len(t, b, 100)
	_, err = ReadFile(p, 99)
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl)
	require.EqualError(t, err, p+" is larger than 99 bytes, the most ioprobe reads of it")
	_, err = ReadFile("/dev/zero", LimitAttr)
	require.ErrorAs(t, err, &tl)

	require.NoError(t, os.WriteFile(p, []byte(" 7:3\n"), 0o644))
	s, err := ReadText(p, LimitAttr)
	require.NoError(t, err)
	require.Equal(t, "7:3", s)
}

func TestReadDirNames(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a", "b", "c"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), nil, 0o644))
	}
	names, err := ReadDirNames(dir)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"a", "b", "c"}, names)
	_, err = ReadDirNames(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
}
