package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDryRunTouchesNothing: a good plan is printed and exits 0 without
// creating the target; a plan a target refuses exits 2 and leaves the
// target as it was.
func TestDryRunTouchesNothing(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "new.dat")

	code, out, errs := dryRunCmd(t, "run", "--target", missing, "--bs", "4k:70,64k:30", "--read-pct", "30", "--qd", "4", "--dry-run")
	require.Equal(t, ExitOK, code, errs)
	require.NoFileExists(t, missing)
	require.Contains(t, out, "bs 4KiB:70,64KiB:30, 30% read, 100% random, qd 4, workers 1")
	require.Contains(t, out, "targets: "+missing)
	require.True(t, strings.HasSuffix(out, "plan checked: every point is accepted by its targets\n"), out)

	code, out, errs = dryRunCmd(t, "suite", "characterize", "--target", missing, "--dry-run", "--output", "json")
	require.Equal(t, ExitOK, code, errs)
	require.NoFileExists(t, missing)
	require.Contains(t, out, "suite characterize: 20 point(s)")
	require.Less(t, strings.Index(out, "1. random-write-4k on "+missing), strings.Index(out, "20. sequential-read-64k on "+missing))

	// An existing file ioprobe did not create is read-only: a write plan is
	// refused, exit 2, the file unchanged.
	theirs := filepath.Join(dir, "theirs.dat")
	content := bytes.Repeat([]byte("keep"), 4096)
	require.NoError(t, os.WriteFile(theirs, content, 0o600))
	code, out, errs = dryRunCmd(t, "run", "--target", theirs, "--read-pct", "0", "--dry-run")
	require.Equal(t, ExitBadInput, code, out)
	require.NotContains(t, out, "plan checked")
	require.Contains(t, errs, theirs)
	code, _, errs = dryRunCmd(t, "suite", "characterize", "--target", theirs, "--dry-run")
	require.Equal(t, ExitBadInput, code)
	require.Contains(t, errs, "point random-write-4k on "+theirs)
	got, err := os.ReadFile(theirs)
	require.NoError(t, err)
	require.Equal(t, content, got)

	// Bad input is still bad input.
	code, _, _ = dryRunCmd(t, "run", "--target", missing, "--qd", "0", "--dry-run")
	require.Equal(t, ExitBadInput, code)
	require.NoFileExists(t, missing)
}
