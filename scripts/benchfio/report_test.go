package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// writeRun writes one run's record and output into dir.
func writeRun(t *testing.T, dir, name string, rec record, out string) {
	t.Helper()
	b, err := json.Marshal(rec)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".rec.json"), b, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".json"), []byte(out), 0o644))
}

func TestPairsHoldIoprobeToTheReferences(t *testing.T) {
	dir := t.TempDir()
	ioprobe := func(ops float64) string {
		return fmt.Sprintf(`{"workload":{"engine":"uring"},"summary":{"ops":%g,"iops":%g,"latency":{"mean_seconds":1e-4,"percentiles":{"99":2e-4}}}}`, ops, ops/10)
	}
	// t/io_uring prints one line a second, rounded, and leaves its last
	// second out: the device's count is what a pair compares.
	tiouring := "Added file /dev/zram0 (submitter 0)\nIOPS=300.00K, BW=1171MiB/s, IOS/call=32/31\nIOPS=1.20M, BW=4687MiB/s, IOS/call=32/32\nExiting on timeout\n"
	for round, cpu := range []float64{2, 4, 5} { // ioprobe's CPU seconds: per-round ratios 1.0, 0.5, 0.4
		r := round + 1
		writeRun(t, dir, fmt.Sprintf("2-qd32.%d.ioprobe-uring", r), record{WallSeconds: 10, UserSeconds: cpu / 2, SystemSeconds: cpu / 2, DeviceIOs: 2e6}, ioprobe(2e6))
		writeRun(t, dir, fmt.Sprintf("2-qd32.%d.tiouring-t1", r), record{WallSeconds: 10, UserSeconds: 1, SystemSeconds: 1, DeviceIOs: 2e6}, tiouring)
		writeRun(t, dir, fmt.Sprintf("2-qd32.%d.fio-io_uring", r), record{WallSeconds: 10, UserSeconds: 2, SystemSeconds: 2}, `{"jobs":[{"read":{"total_ios":2000000,"iops":200000,"lat_ns":{"mean":1e5,"percentile":{"99.000000":2e5}}}}]}`)
		writeRun(t, dir, fmt.Sprintf("1-qd1.%d.ioprobe-sync", r), record{WallSeconds: 10, UserSeconds: 1, SystemSeconds: 2}, strings.ReplaceAll(ioprobe(1e6), "uring", "sync"))
		writeRun(t, dir, fmt.Sprintf("1-qd1.%d.bare-loop", r), record{WallSeconds: 10, UserSeconds: 0.5, SystemSeconds: 2.5}, `{"ios":1100000,"seconds":10,"iops":110000,"latency_mean_ns":2500}`)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pairs.txt"), []byte("# A B\n2-qd32 ioprobe-uring tiouring-t1 >=1.0\n2-qd32 ioprobe-uring fio-io_uring <=1.0\n1-qd1 ioprobe-sync bare-loop\n"), 0o644))

	all, err := load(dir)
	require.NoError(t, err)
	pairs, err := readPairs(dir)
	require.NoError(t, err)
	res := pairRatios(all, pairs)
	require.Len(t, res, 3)

	tio := res[0]
	require.Equal(t, 3, tio.rounds)
	require.InDelta(t, 0.5, tio.perCPU, 1e-9, "ratios 1.0, 0.5, 0.4: the median")
	require.InDelta(t, 1e6, tio.bPerCPU, 1e-6, "the device's 2M I/Os over 2 CPU-s, not the printed 1.5M")
	require.InDelta(t, 750e3, tio.bIOPS, 1e-6, "the mean of the per-second lines")
	require.True(t, tio.aDevice && tio.bDevice)

	f := res[1]
	require.False(t, f.bDevice, "fio's own count where the device's was not measured")
	require.InDelta(t, 1.0, f.perCPU, 1e-9, "ratios 2, 1, 0.8 (fio: 2M I/Os over 4 CPU-s)")

	bare := res[2]
	require.InDelta(t, 1e6/3/(1.1e6/3), bare.perCPU, 1e-9)
	require.InDelta(t, 0.1/0.11, bare.iops, 1e-9)

	var out bytes.Buffer
	require.NoError(t, report(&out, dir))
	require.Contains(t, out.String(), "| 2-qd32 | ioprobe-uring | tiouring-t1 | 3 | **0.500** | ≥ 1 **not met** | 1.00 0.50 0.40 | 0.267 | 500000 d | 1000000 d | 200000 | 750000 |")
	require.Contains(t, out.String(), "| 2-qd32 | ioprobe-uring | fio-io_uring | 3 | **1.000** | ≤ 1 met | 2.00 1.00 0.80 |")
	require.Contains(t, out.String(), "| 1-qd1 | ioprobe-sync | bare-loop | 3 | **0.909** |  | 0.91 0.91 0.91 | 0.909 |")
}

// A pair whose sides both have a steady-state window compares the
// window's I/Os per CPU-second, not the whole run's; a bad goal is an
// error naming its line.
func TestPairsUseTheSteadyState(t *testing.T) {
	dir := t.TempDir()
	out := `{"ios":1000000,"seconds":10,"iops":100000,"latency_mean_ns":2500}`
	for r := 1; r <= 3; r++ {
		// Whole runs: 1M I/Os over 4 and 2 CPU-s; windows: 700k over 1.4
		// and 1.75 CPU-s (a's set-up cost 2 CPU-s outside them).
		writeRun(t, dir, fmt.Sprintf("w.%d.bare-a", r), record{WallSeconds: 10, UserSeconds: 2, SystemSeconds: 2, DeviceIOs: 1e6,
			Window: &window{Seconds: 7, CPUSeconds: 1.4, DeviceIOs: 7e5}}, out)
		writeRun(t, dir, fmt.Sprintf("w.%d.barego-b", r), record{WallSeconds: 10, UserSeconds: 1, SystemSeconds: 1, DeviceIOs: 1e6,
			Window: &window{Seconds: 7, CPUSeconds: 1.75, DeviceIOs: 7e5}}, out)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pairs.txt"), []byte("w bare-a barego-b >=1.2\n"), 0o644))
	all, err := load(dir)
	require.NoError(t, err)
	pairs, err := readPairs(dir)
	require.NoError(t, err)
	res := pairRatios(all, pairs)
	require.InDelta(t, 1.25, res[0].perCPU, 1e-9, "500k ÷ 400k I/Os per CPU-s in the windows (the whole runs: 0.5)")
	require.True(t, res[0].aWindow && res[0].bWindow)
	require.Equal(t, "met", res[0].goal.met(res[0].perCPU))

	require.NoError(t, os.WriteFile(filepath.Join(dir, "pairs.txt"), []byte("w bare-a barego-b\nw bare-a barego-b =1\n"), 0o644))
	_, err = readPairs(dir)
	require.ErrorContains(t, err, `pairs.txt:2: goal "=1": want <=X or >=X`)
}

func TestTIOURingOutputIsRecognised(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, "w.1.tiouring-t1", record{WallSeconds: 1, UserSeconds: 1}, "not t/io_uring\n")
	_, err := load(dir)
	require.ErrorContains(t, err, "no IOPS= line")
}
