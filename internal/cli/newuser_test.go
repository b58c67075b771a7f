package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// A mistyped subcommand is bad input: exit 2 and one line on stderr that
// suggests the command meant (it used to exit 1, the I/O-error code).
func TestUnknownCommandIsBadInput(t *testing.T) {
	code, stdout, stderr := runCLI(t, "runn", "--target", "x")
	require.Equal(t, ExitBadInput, code)
	require.Empty(t, stdout)
	require.Equal(t, `ioprobe: unknown command "runn"; did you mean run? (see 'ioprobe --help')`+"\n", stderr)

	code, _, stderr = runCLI(t, "frobnicate")
	require.Equal(t, ExitBadInput, code)
	require.Equal(t, `ioprobe: unknown command "frobnicate" (see 'ioprobe --help')`+"\n", stderr)
}

// --bs takes weights for every size or for none; a mix of both is bad
// input that names the size without one, and nothing is created.
func TestBlockSizesAllWeightsOrNone(t *testing.T) {
	tgt := t.TempDir() + "/t.dat"
	code, _, stderr := runCLI(t, "run", "--target", tgt, "--bs", "4k:70,64k", "--duration", "1s")
	require.Equal(t, ExitBadInput, code)
	require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	require.Contains(t, stderr, `--bs "64k": has no weight while "4k:70" has one`)
	require.NoFileExists(t, tgt)
}

// resultFile writes the report package's fixture (one run of db01) with
// its start moved by shift, and returns its path.
func resultFile(t *testing.T, dir, name string, shift time.Duration) string {
	t.Helper()
	b, err := os.ReadFile("../report/testdata/result_mixed.json")
	require.NoError(t, err)
	var r result.Result
	require.NoError(t, json.Unmarshal(b, &r))
	r.StartedAt = r.StartedAt.Add(shift)
	out, err := json.Marshal(&r)
	require.NoError(t, err)
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, out, 0o644))
	return p
}

// Two runs of one host an hour apart were not concurrent load: report
// --merge says so and does not sum their rates. One run is "1 run".
func TestMergeOfRunsThatDidNotOverlap(t *testing.T) {
	dir := t.TempDir()
	a := resultFile(t, dir, "a.json", 0)
	b := resultFile(t, dir, "b.json", time.Hour)
	code, stdout, stderr := runCLI(t, "report", "--merge", a, b, "--output", "json")
	require.Equal(t, ExitOK, code, stderr)
	require.Contains(t, stderr, "ioprobe: merged 2 results (2 runs from 1 host) into 1\n")
	require.Contains(t, stderr, "did not overlap in time: not concurrent load")
	var m result.Result
	require.NoError(t, json.Unmarshal([]byte(stdout), &m))
	var one result.Result
	b1, err := os.ReadFile(a)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b1, &one))
	require.Equal(t, 2, m.Merged.Periods)
	require.Equal(t, 2*one.Summary.Ops, m.Summary.Ops)
	require.InEpsilon(t, one.Summary.IOPS, m.Summary.IOPS, 1e-3, "the same rate twice, one after the other, is that rate")

	code, stdout, stderr = runCLI(t, "report", "--merge", a, b)
	require.Equal(t, ExitOK, code, stderr)
	require.Contains(t, stdout, "2 runs from 1 host (db01) in 2 periods that did not overlap")

	code, stdout, stderr = runCLI(t, "report", "--merge", a)
	require.Equal(t, ExitOK, code, stderr)
	require.Contains(t, stderr, "ioprobe: merged 1 result (1 run from 1 host) into 1\n")
	require.Contains(t, stdout, "1 run from 1 host (db01)")
	require.NotContains(t, stdout, "1 runs")
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
