package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// run --out writes the result to the file and nothing to stdout; an
// --out whose directory is missing is bad input before anything is
// created (a Kubernetes Job's pod, without a shell to redirect, relies
// on it).
func TestRunOut(t *testing.T) {
	dir := t.TempDir()
	tgt := filepath.Join(dir, "p.dat")
	code, stdout, stderr := runCLI(t, "run", "--target", tgt, "--size", "1MiB", "--duration", "50ms", "--ramp", "0s",
		"--output", "json", "--out", filepath.Join(dir, "missing", "r.json"))
	require.Equal(t, ExitBadInput, code, stderr)
	require.Empty(t, stdout)
	require.Contains(t, stderr, "--out")
	require.NoFileExists(t, tgt)

	out := filepath.Join(dir, "r.json")
	code, stdout, stderr = runCLI(t, "run", "--target", tgt, "--size", "1MiB", "--duration", "50ms", "--ramp", "0s",
		"--output", "json", "--out", out)
	require.Equal(t, 0, code, stderr)
	require.Empty(t, stdout)
	require.Contains(t, stderr, "wrote "+out)
	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	_, rs, err := result.Decode(f)
	require.NoError(t, err)
	require.Len(t, rs, 1)
	require.Equal(t, tgt, rs[0].Targets[0].Path) // what it measured, however little 50ms holds
}
