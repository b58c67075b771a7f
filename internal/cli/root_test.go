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
