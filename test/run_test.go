package test

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

func TestRunCreatesFileAndMeasures(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	tgt := filepath.Join(dir, "probe.dat")
	// 2000 reads, not a window: a window can complete none on a loaded
	// machine, and this run's figures need reads.
	o := ioprobe(t, dir, append([]string{"run", "--target", tgt, "--size", "64MiB", "--bs", "4k", "--read-pct", "100",
		"--random-pct", "100", "--qd", "8", "--output", "json"}, countedIOs(2000)...)...)
	require.Equal(t, 0, o.code, o.stderr)
	r := decodeResult(t, o.stdout)
	require.Equal(t, result.StatusOK, r.Status)
	require.EqualValues(t, 2000, r.Summary.ReadOps)
	require.Zero(t, r.Summary.WriteOps)
	require.Equal(t, r.Summary.ReadOps, r.Histogram.Read.Count())
	require.Equal(t, "file", r.Targets[0].Kind)
	require.True(t, r.Targets[0].Direct)
	require.True(t, r.Targets[0].Created)
	require.EqualValues(t, 64<<20, r.Workload.RegionBytes)
	// auto prefers uring and falls back to sync; either way it says why.
	require.Contains(t, []workload.EngineName{workload.EngineURing, workload.EngineSync}, r.Workload.Engine)
	require.Equal(t, workload.EngineAuto, r.Workload.EngineRequested)
	require.NotEmpty(t, r.Workload.EngineReason)
	require.NotEmpty(t, r.Intervals)
	require.Greater(t, r.Summary.Latency.Percentiles["99"], 0.0)
	st, err := os.Stat(tgt)
	require.NoError(t, err)
	require.EqualValues(t, 64<<20, st.Size())

	// Second run reuses the file and says it did not create it.
	o = ioprobe(t, dir, "run", "--target", tgt, "--size", "64MiB", "--duration", "300ms", "--ramp", "0s", "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)
	r = decodeResult(t, o.stdout)
	require.False(t, r.Targets[0].Created)
	// A window is never shorter than asked, however late a loaded machine
	// woke it (and whether or not any I/O completed in it).
	require.GreaterOrEqual(t, r.Summary.ElapsedSeconds, 0.3)
}

func TestRunOutputs(t *testing.T) {
	dir := t.TempDir()
	tgt := filepath.Join(dir, "probe.dat")
	o := ioprobe(t, dir, "run", "--target", tgt, "--size", "16MiB", "--profile", "oltp", "--qd", "4", "--duration", "500ms", "--ramp", "0s")
	require.Equal(t, 0, o.code, o.stderr)
	for _, want := range []string{"oltp", "IOPS", "MB/s", "99.9"} {
		require.Contains(t, o.stdout, want)
	}
	o = ioprobe(t, dir, "run", "--target", tgt, "--size", "16MiB", "--duration", "300ms", "--ramp", "0s", "--output", "csv")
	require.Equal(t, 0, o.code, o.stderr)
	// Parsed, not split at commas: a note's figures have thousands
	// separators ("others did 3,507 of the 3,507 I/Os", beside load).
	rows, err := csv.NewReader(strings.NewReader(o.stdout)).ReadAll()
	require.NoError(t, err, o.stdout)
	require.Len(t, rows, 2, "header and one row")
	require.Len(t, rows[1], len(rows[0]))
	o = ioprobe(t, dir, "profiles")
	require.Equal(t, 0, o.code)
	for _, p := range []string{"oltp", "file-server", "exchange-db", "log", "video-on-demand", "random-read"} {
		require.Contains(t, o.stdout, p)
	}
}

func TestBadInputExits2AndTouchesNothing(t *testing.T) {
	dir := t.TempDir()
	tgt := filepath.Join(dir, "never.dat")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"bad size", []string{"--size", "12zz"}, "--size 12zz"},
		{"bad bs", []string{"--bs", "3000"}, "--bs"},
		{"bad read pct", []string{"--read-pct", "120"}, "--read-pct 120: must be between 0 and 100"},
		{"bad qd", []string{"--qd", "0"}, "--qd 0"},
		{"misaligned size", []string{"--size", "10000k", "--bs", "64k"}, "multiple of the alignment"},
		{"unknown flag", []string{"--nope"}, "unknown flag: --nope"},
		{"unknown profile", []string{"--profile", "tpcc"}, "unknown profile"},
		{"bad engine", []string{"--engine", "aio"}, "--engine aio"},
		{"bad output", []string{"--output", "xml"}, "--output xml"},
		{"bad duration", []string{"--duration", "-1s"}, "--duration"},
		{"missing dir", []string{"--target", filepath.Join(dir, "no/such/dir/x.dat")}, "no/such/dir"},
		{"tmpfs", []string{"--target", "/dev/shm/ioprobe-e2e.dat"}, "tmpfs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"run", "--target", tgt, "--size", "16MiB", "--duration", "1s", "--ramp", "0s"}
			args = append(args, c.args...)
			o := ioprobe(t, dir, args...)
			require.Equal(t, 2, o.code, "stderr: %s", o.stderr)
			require.Empty(t, o.stdout)
			lines := strings.Split(strings.TrimSpace(o.stderr), "\n")
			require.Len(t, lines, 1, "one clear line: %q", o.stderr)
			require.True(t, strings.HasPrefix(lines[0], "ioprobe: "), lines[0])
			require.Contains(t, lines[0], c.want)
			_, err := os.Stat(tgt)
			require.True(t, os.IsNotExist(err), "bad input created the target")
			_, err = os.Stat("/dev/shm/ioprobe-e2e.dat")
			require.True(t, os.IsNotExist(err), "bad input created a file on tmpfs")
		})
	}
}

func TestForeignFileIsReadOnly(t *testing.T) {
	dir := t.TempDir()
	tgt := filepath.Join(dir, "precious.dat")
	data := bytes.Repeat([]byte("user data "), 1<<20)
	require.NoError(t, os.WriteFile(tgt, data[:8<<20], 0o644))
	o := ioprobe(t, dir, "run", "--target", tgt, "--read-pct", "0", "--duration", "300ms", "--ramp", "0s")
	require.Equal(t, 2, o.code, o.stderr)
	require.Contains(t, o.stderr, "--allow-destructive")
	got, err := os.ReadFile(tgt)
	require.NoError(t, err)
	require.Equal(t, data[:8<<20], got, "a refused run changed the file")
	// Reading it is fine.
	o = ioprobe(t, dir, "run", "--target", tgt, "--duration", "300ms", "--ramp", "0s", "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)
	r := decodeResult(t, o.stdout)
	require.False(t, r.Targets[0].Created)
	require.EqualValues(t, 8<<20, r.Workload.RegionBytes)
}

func TestInterruptPrintsPartialResult(t *testing.T) {
	dir := t.TempDir()
	tgt := prepared(t, dir) // so that what it reads is the measurement's
	b := startBackground(t, "run", "--target", tgt, "--size", "16MiB", "--qd", "2", "--duration", "1h", "--ramp", "0s", "--output", "json")
	// Wait until the run is measuring (a sleep "long enough" is not a
	// sign of anything).
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.True(c, measuring(c, b.cmd.Process.Pid)) },
		time.Minute, 20*time.Millisecond, "the run never measured")
	require.NoError(t, b.cmd.Process.Signal(syscall.SIGINT))
	require.Equal(t, 130, b.exitCode(t), b.errb.String())
	r := decodeResult(t, b.out.String())
	require.Equal(t, result.StatusInterrupted, r.Status)
	require.Positive(t, r.Summary.Ops)
	require.Equal(t, r.Summary.Ops, r.Histogram.Read.Count())
}
