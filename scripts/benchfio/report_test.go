package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAnalysePairsTheBestCandidatesRoundByRound(t *testing.T) {
	all, err := load("testdata/run")
	require.NoError(t, err)
	require.Len(t, all, 10)
	res := analyse(all)
	require.Len(t, res, 2)

	qd1 := res[0]
	require.Equal(t, "1-qd1", qd1.name)
	require.Equal(t, "ioprobe-sync", qd1.ioprobe.name)
	require.Equal(t, "fio-psync", qd1.fio.name)
	require.Equal(t, 3, qd1.rounds)
	// Per-round ratios 1.2, 1.0, 1.1 (I/Os per CPU-s and IOPS), latency
	// 0.857, 1.0, 0.9: the medians.
	require.InDelta(t, 1.1, qd1.perCPU, 1e-9)
	require.InDelta(t, 1.1, qd1.perHost, 1e-9)
	require.InDelta(t, 1.1, qd1.iops, 1e-9)
	require.InDelta(t, 0.9, qd1.mean, 1e-9)
	require.InDelta(t, 1.0, qd1.p99, 1e-9)
	// Candidate medians: fio's I/Os per CPU-s were 0.833M, 1M, 1M.
	require.InDelta(t, 1e6, qd1.candidates[0].perCPU, 1e-3)
	require.InDelta(t, 3.0e-6, qd1.candidates[0].mean, 1e-12)

	qd32 := res[1]
	require.Equal(t, "ioprobe-sync", qd32.ioprobe.name, "1M I/Os per CPU-s beats uring's 0.88M")
	require.Equal(t, "fio-psync32jobs", qd32.fio.name, "1M beats io_uring's 0.6M")
	require.Equal(t, 1, qd32.rounds)
	require.InDelta(t, 1.0, qd32.perCPU, 1e-9)
	require.InDelta(t, 9.0, qd32.p99, 1e-9)
}

func TestReportPrintsTheTables(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, report(&out, "testdata/run"))
	require.Contains(t, out.String(), "| 1-qd1 | ioprobe-sync | fio-psync | 3 | 1.10 | 1.10 | 1.10 | 0.90 | 1.00 | 0.00 / 0.00 |")
	require.Contains(t, out.String(), "| fio-psync32jobs **(best)** | 1 | 500000 |")
}

func TestLoadRefusesAnEngineOtherThanTheCandidate(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"1-qd1.1.ioprobe-sync.rec.json", "1-qd1.1.ioprobe-sync.json"} {
		b, err := os.ReadFile(filepath.Join("testdata/run", f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), bytes.ReplaceAll(b, []byte(`"engine":"sync"`), []byte(`"engine":"uring"`)), 0o644))
	}
	_, err := load(dir)
	require.ErrorContains(t, err, `candidate ioprobe-sync ran engine "uring"`)
}

func TestMeasureRecordsTheChildsCPU(t *testing.T) {
	dir := t.TempDir()
	rec, out := filepath.Join(dir, "r.rec.json"), filepath.Join(dir, "r.json")
	// A shell that burns CPU in a child process: wait4's rusage counts
	// the children the measured process waited for, as fio's jobs are.
	require.NoError(t, run([]string{"measure", rec, out, "--", "sh", "-c", `sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'; echo '{"ok":1}'`}))
	var r record
	require.NoError(t, readJSON(rec, &r))
	require.Zero(t, r.ExitCode)
	require.Greater(t, r.UserSeconds+r.SystemSeconds, 0.05)
	require.Greater(t, r.HostBusySeconds, 0.0)
	require.GreaterOrEqual(t, r.HostTotalSeconds, r.HostBusySeconds)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, "{\"ok\":1}\n", string(b))

	require.ErrorContains(t, run([]string{"measure", rec, out, "--", "sh", "-c", "exit 3"}), "exited with status 3")
}

func TestOthersIsTheRestOfTheHostsBusyCPU(t *testing.T) {
	s := sample{rec: record{WallSeconds: 10, UserSeconds: 1, SystemSeconds: 9, HostBusySeconds: 15}}
	require.InDelta(t, 0.5, s.others(), 1e-9)
	s.rec.HostBusySeconds = 9.5 // tick rounding: never negative
	require.Zero(t, s.others())
}
