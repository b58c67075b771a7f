//go:build linux

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// TestRunStopsAfterBudget: --number-ios and --io-size end the run by
// budget, the hour-long --duration only a cap; bad values are bad input
// and touch nothing.
func TestRunStopsAfterBudget(t *testing.T) {
	dir := t.TempDir()
	tgt := filepath.Join(dir, "t.dat")
	base := []string{"run", "--target", tgt, "--size", "8MiB", "--bs", "4k", "--qd", "2", "--workers", "2", "--ramp", "0s", "--duration", "1h", "--output", "json"}
	for _, c := range []struct {
		flags []string
		ops   uint64
	}{
		{[]string{"--number-ios", "300"}, 2 * 300},
		{[]string{"--io-size", "1MiB"}, 2 * 256},
		{[]string{"--io-size", "1MiB", "--number-ios", "100"}, 2 * 100},
	} {
		code, stdout, stderr := runCLI(t, append(append([]string{}, base...), c.flags...)...)
		require.Zero(t, code, stderr)
		var r result.Result
		require.NoError(t, json.Unmarshal([]byte(stdout), &r))
		require.Equal(t, result.EndedBudget, r.Summary.Ended, c.flags)
		require.Equal(t, c.ops, r.Summary.ReadOps, c.flags)
	}
	for _, c := range []struct{ flag, value, want string }{
		{"--number-ios", "0", "ioprobe: --number-ios 0: must be at least 1\n"},
		{"--io-size", "lots", "--io-size"},
	} {
		other := filepath.Join(dir, "other.dat")
		code, stdout, stderr := runCLI(t, "run", "--target", other, c.flag, c.value)
		require.Equal(t, ExitBadInput, code)
		require.Empty(t, stdout)
		require.Contains(t, stderr, c.want)
		_, err := os.Stat(other)
		require.True(t, os.IsNotExist(err), "nothing touched")
	}
}

// TestNamedSuiteStopsAfterBudget: --number-ios ends every point of a
// named suite as it ends a run (the suite once took the flag and ran each
// point for its whole --duration): each worker's I/Os are the budget (32:
// video-on-demand's 512 KiB reads cover the 16 MiB region once), the
// hour-long --duration only a cap, and --dry-run says so.
func TestNamedSuiteStopsAfterBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a suite") //hygiene:skip -short leaves out the tests that run I/O
	}
	tgt := filepath.Join(t.TempDir(), "t.dat")
	args := []string{"suite", "business", "--target", tgt, "--size", "16MiB", "--qd", "2", "--number-ios", "32", "--ramp", "0s", "--duration", "1h"}
	code, stdout, stderr := runCLI(t, append(args, "--dry-run")...)
	require.Zero(t, code, stderr)
	require.Contains(t, stdout, "each worker stops after 32 I/Os")
	code, stdout, stderr = runCLI(t, append(args, "--output", "json")...)
	require.Zero(t, code, stderr)
	var s result.Suite
	require.NoError(t, json.Unmarshal([]byte(stdout), &s))
	require.Len(t, s.Results, 6)
	for _, r := range s.Results {
		require.Equal(t, result.EndedBudget, r.Summary.Ended, r.Point.Name)
		require.EqualValues(t, 32*max(1, len(r.Groups)), r.Summary.Ops, r.Point.Name)
	}
}
