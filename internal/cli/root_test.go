package cli

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// TestEngineNamesAreTheRegistrys: the names a spec accepts are "auto" and
// the engines the command line registers, no more, no fewer.
func TestEngineNamesAreTheRegistrys(t *testing.T) {
	require.ElementsMatch(t, workload.EngineNames, append([]string{workload.EngineAuto}, newEngines().Names()...))
}

// suite --help gives one default for --qd and --workers: the suite's.
func TestSuiteHelpGivesOneDefault(t *testing.T) {
	code, stdout, stderr := runCLI(t, "suite", "--help")
	require.Equal(t, ExitOK, code, stderr)
	for _, flag := range []string{"--qd", "--workers"} {
		var line string
		for _, l := range strings.Split(stdout, "\n") {
			if strings.Contains(l, flag+" ") {
				line = l
			}
		}
		require.NotEmpty(t, line, flag)
		require.Equal(t, 1, strings.Count(line, "default"), line)
		require.Contains(t, line, "(default: the suite's, ")
	}
}

// compare pairs points by name; when the two sides of a point ran
// different workloads (here the same run at QD 16 and QD 32), it says so.
func TestCompareSaysWhenWorkloadsDiffer(t *testing.T) {
	dir := t.TempDir()
	base := resultFile(t, dir, "base.json", 0)
	b, err := os.ReadFile(base)
	require.NoError(t, err)
	var r result.Result
	require.NoError(t, json.Unmarshal(b, &r))
	r.Workload.QueueDepth = 32
	b, err = json.Marshal(&r)
	require.NoError(t, err)
	other := filepath.Join(dir, "other.json")
	require.NoError(t, os.WriteFile(other, b, 0o644))

	code, stdout, stderr := runCLI(t, "compare", base, other)
	require.Equal(t, ExitOK, code, stderr)
	require.Contains(t, stdout, "ran different workloads on the two sides (QD/workers differ (16/2 and 32/2))")

	code, stdout, stderr = runCLI(t, "compare", base, base)
	require.Equal(t, ExitOK, code, stderr)
	require.NotContains(t, stdout, "different workloads")
}
