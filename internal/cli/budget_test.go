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
