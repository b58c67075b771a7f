package target

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testdeps"
)

// TestSecondOpinion: what util-linux finds and ioprobe's probes miss is
// added (here the probes are left out on purpose: nil), what both find is
// not repeated, and a read error stays the error.
func TestSecondOpinion(t *testing.T) {
	testdeps.Need(t, testdeps.Tool("wipefs"), testdeps.Tool("blkid"), testdeps.Tool("mkswap"))
	img := filepath.Join(t.TempDir(), "img")
	require.NoError(t, os.WriteFile(img, make([]byte, 1<<20), 0o600))
	out, err := exec.Command("mkswap", img).CombinedOutput()
	require.NoError(t, err, "%s", out)

	sigs, err := secondOpinion(context.Background(), img, nil, nil)
	require.NoError(t, err)
	require.Len(t, sigs, 1)
	require.Equal(t, "swap", sigs[0].Type)
	require.Equal(t, int64(4086), sigs[0].Offset)

	mine := scanFile(t, img)
	require.NotEmpty(t, mine)
	both, err := secondOpinion(context.Background(), img, mine, nil)
	require.NoError(t, err)
	require.Equal(t, mine, both, "nothing util-linux finds is missing from ioprobe's own probes")

	eio := errors.New("input/output error")
	_, err = secondOpinion(context.Background(), img, nil, eio)
	require.ErrorIs(t, err, eio)

	_, err = secondOpinion(context.Background(), filepath.Join(t.TempDir(), "gone"), nil, nil)
	require.ErrorContains(t, err, "second opinion", "a tool that fails refuses; it does not pass for 'nothing found'")
}

func scanFile(t *testing.T, path string) []Signature {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	sigs, err := scanSignatures(st.Size(), 512, 512, func(off int64, n int) ([]byte, error) {
		p := make([]byte, n)
		_, err := f.ReadAt(p, off)
		return p, err
	})
	require.NoError(t, err)
	return sigs
}
