package test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testloop"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// Suites run their points for 200–300 ms with no ramp-up here, so that the
// whole file stays within a few tens of seconds on two cores; a test that
// needs every point to have done I/O ends each after a count of I/Os
// instead (countedIOs), which a window beside load may not reach.

func TestSuiteCharacterize(t *testing.T) {
	// Its own file; it checks the tables' shape, not their figures (a CPU figure taken beside load is marked ‡).
	besideOthers(t)
	dir := t.TempDir()
	tgt := filepath.Join(dir, "x")
	// 32 I/Os a point: its figures, charts and progress lines are of
	// I/Os done (a 200 ms window of writes beside load once completed none).
	o := ioprobe(t, dir, append([]string{"suite", "characterize", "--target", tgt, "--size", "16MiB"}, countedIOs(32)...)...)
	require.Equal(t, 0, o.code, o.stderr)
	// No terminal: no progress line, but a line a point on stderr.
	require.NotContains(t, o.stderr, "\r")
	require.Len(t, strings.Split(strings.TrimSuffix(o.stderr, "\n"), "\n"), 20, o.stderr)
	// Six tables, each with the report's four columns and five sizes.
	titles := []string{"I/O operations per second", "Throughput (MB/s)", "Mean response time (ms)",
		"CPU utilization (%, summed over CPUs)", "I/O rate efficiency (IOPS per %CPU)", "Throughput efficiency (MB/s per %CPU)"}
	tables := strings.Split(o.stdout, "\nTable ")[1:]
	require.Len(t, tables, 6)
	// A CPU figure measured beside others' load is marked ‡ (on a busy
	// machine), and the footnotes follow the last table.
	cell := regexp.MustCompile(`^\d[\d,]*(\.\d+)?‡?$`)
	for i, tb := range tables {
		tb, _, _ = strings.Cut(strings.TrimSpace(tb), "\n\n")
		lines := strings.Split(tb, "\n")
		require.Contains(t, lines[0], titles[i]+" — "+tgt)
		require.Regexp(t, `^Data Size +Random Write +Random Read +Sequential Write +Sequential Read$`, lines[1])
		require.Len(t, lines, 2+5, "five data sizes")
		for j, size := range []string{"4 KiB", "8 KiB", "16 KiB", "32 KiB", "64 KiB"} {
			rest, ok := strings.CutPrefix(lines[2+j], size+" ")
			require.True(t, ok, "row %d is %s: %q", j, size, lines[2+j])
			f := strings.Fields(rest)
			require.Len(t, f, 4, "a figure for each of the 4 patterns: %q", lines[2+j])
			for _, v := range f {
				require.Regexp(t, cell, v)
			}
		}
	}

	o = ioprobe(t, dir, append([]string{"suite", "characterize", "--target", tgt, "--size", "16MiB", "--output", "json"}, countedIOs(32)...)...)
	require.Equal(t, 0, o.code, o.stderr)
	s := decodeSuite(t, []byte(o.stdout)) // the lines a point are on stderr, not in the JSON
	lines := strings.Split(strings.TrimSuffix(o.stderr, "\n"), "\n")
	require.Len(t, lines, 20, o.stderr)
	for i, l := range lines {
		p := s.Results[i].Point.Name
		require.Regexp(t, `^ioprobe: \[`+strconv.Itoa(i+1)+`/20\] `+regexp.QuoteMeta(p+" on "+tgt)+`: [\d,]+ IOPS, [\d.]+ MB/s, mean [\d.]+ ms, p99 [\d.]+ ms(; suite (\d+h)?(\d+m)?\d+s left)?$`, l)
	}
	require.Equal(t, "characterize", s.Suite)
	require.Len(t, s.Results, 20)
	seen := map[string]bool{}
	for _, r := range s.Results {
		require.Equal(t, result.StatusOK, r.Status, r.Message)
		require.NotNil(t, r.Point)
		require.Equal(t, tgt, r.Point.Target)
		require.Equal(t, r.Point.SizeBytes, r.Workload.BlockSizes[0].Bytes)
		require.Equal(t, 16, r.Workload.QueueDepth)
		require.Equal(t, result.EndedBudget, r.Summary.Ended, r.Point.Name)
		require.EqualValues(t, 32, r.Summary.Ops, r.Point.Name)
		require.Equal(t, r.Summary.Ops, r.Histogram.Read.Count()+r.Histogram.Write.Count())
		seen[r.Point.Pattern+" "+r.Point.Name] = true
		if strings.Contains(r.Point.Pattern, "Write") {
			require.Zero(t, r.Summary.ReadOps, r.Point.Name)
		} else {
			require.Zero(t, r.Summary.WriteOps, r.Point.Name)
		}
	}
	require.Len(t, seen, 20)
	require.Equal(t, "random-write-4k", s.Results[0].Point.Name)
	require.Equal(t, "sequential-read-64k", s.Results[19].Point.Name)
	require.NotEmpty(t, s.Source)

	// The saved file rebuilds the same tables, the HTML and the CSV.
	file := filepath.Join(dir, "char.json")
	require.NoError(t, os.WriteFile(file, []byte(o.stdout), 0o644))
	rep := ioprobe(t, dir, "report", file)
	require.Equal(t, 0, rep.code, rep.stderr)
	require.Len(t, strings.Split(rep.stdout, "\nTable ")[1:], 6)
	rep = ioprobe(t, dir, "report", file, "--output", "html", "--out", filepath.Join(dir, "char.html"))
	require.Equal(t, 0, rep.code, rep.stderr)
	page, err := os.ReadFile(filepath.Join(dir, "char.html"))
	require.NoError(t, err)
	require.Equal(t, 8, strings.Count(string(page), `<svg class="chart"`))
	require.NotContains(t, string(page), `class="empty"`)
	rep = ioprobe(t, dir, "report", file, "--output", "csv")
	require.Equal(t, 0, rep.code, rep.stderr)
	rows, err := csv.NewReader(strings.NewReader(rep.stdout)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 1+20, "a row per run")
}

func TestSuiteRefusesWritesBeforeRunningAnything(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh.dat")
	foreign := filepath.Join(dir, "precious.dat")
	data := bytes.Repeat([]byte("user data "), 1<<20)[:8<<20]
	require.NoError(t, os.WriteFile(foreign, data, 0o644))
	o := ioprobe(t, dir, "suite", "characterize", "--target", fresh, "--target", foreign, "--size", "8MiB", "--duration", "200ms", "--ramp", "0s")
	require.Equal(t, 2, o.code, o.stderr)
	require.Empty(t, o.stdout)
	lines := strings.Split(strings.TrimSpace(o.stderr), "\n")
	require.Len(t, lines, 1, o.stderr)
	require.Contains(t, lines[0], "point random-write-4k on "+foreign)
	require.Contains(t, lines[0], "--allow-destructive")
	require.Contains(t, lines[0], "--read-only")
	_, err := os.Stat(fresh)
	require.True(t, os.IsNotExist(err), "the first target was created before the refusal")
	got, err := os.ReadFile(foreign)
	require.NoError(t, err)
	require.Equal(t, data, got)

	// The points that only read run.
	o = ioprobe(t, dir, "suite", "characterize", "--target", foreign, "--duration", "200ms", "--ramp", "0s", "--read-only", "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)
	require.Len(t, decodeSuite(t, []byte(o.stdout)).Results, 10)
	got, err = os.ReadFile(foreign)
	require.NoError(t, err)
	require.Equal(t, data, got)
}

func TestSuiteBlockDeviceNeedsAllowDestructive(t *testing.T) {
	besideOthers(t)
	dev := testloop.Device(t, 64<<20)

	o := ioprobe(t, t.TempDir(), "suite", "business", "--target", dev, "--duration", "200ms", "--ramp", "0s")
	require.Equal(t, 2, o.code, o.stderr)
	require.Contains(t, o.stderr, "point file-server on "+dev)
	require.Contains(t, o.stderr, "refusing to write to "+dev)
	require.Contains(t, o.stderr, "(--allow-destructive overrides this)")
	require.Contains(t, o.stderr, "nothing was run")

	o = ioprobe(t, t.TempDir(), "suite", "business", "--target", dev, "--duration", "200ms", "--ramp", "0s", "--allow-destructive", "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)
	s := decodeSuite(t, []byte(o.stdout))
	require.Len(t, s.Results, 6)
	require.Equal(t, "block", s.Results[0].Targets[0].Kind)
}

func TestSuiteBusinessRepeatMergeCompare(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	tgt := filepath.Join(dir, "x")
	// 32 I/Os a point, not a window: the mixed point's reads and the log
	// workload's writes are asserted below.
	o := ioprobe(t, dir, append([]string{"suite", "business", "--target", tgt, "--size", "16MiB", "--qd", "4",
		"--repeat", "2", "--output", "json", "--out", filepath.Join(dir, "a.json")}, countedIOs(32)...)...)
	require.Equal(t, 0, o.code, o.stderr)
	require.Empty(t, o.stdout)
	require.Contains(t, o.stderr, "wrote "+filepath.Join(dir, "a.json"))
	raw, err := os.ReadFile(filepath.Join(dir, "a.json"))
	require.NoError(t, err)
	a := decodeSuite(t, raw)
	require.Len(t, a.Results, 6)
	for _, r := range a.Results {
		require.NotNil(t, r.Spread, r.Point.Name)
		require.Equal(t, 2, r.Spread.Runs)
		require.Len(t, r.Spread.IOPS.Values, 2)
		require.Equal(t, 2, r.Merged.Runs)
		require.Equal(t, 4, r.Workload.QueueDepth)
	}
	mixed := a.Results[5]
	require.Equal(t, "mixed", mixed.Point.Name)
	require.Len(t, mixed.Groups, 5, "all five workloads at once")
	require.Greater(t, mixed.Summary.ReadOps, uint64(0))
	require.Greater(t, mixed.Summary.WriteOps, uint64(0), "the log workload writes")

	// The same suite "from another host": merging adds it up exactly.
	b := decodeSuite(t, raw)
	for _, r := range b.Results {
		r.Host.Hostname = "other-" + r.Host.Hostname
		r.Host.BootID = "other-" + r.Host.BootID
		r.Merged.Hosts = []string{r.Host.Hostname}
		for i := range r.Merged.Of {
			r.Merged.Of[i].Host, r.Merged.Of[i].RunID = r.Host.Hostname, "other-"+r.Merged.Of[i].RunID
		}
	}
	other, err := json.Marshal(b)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.json"), other, 0o644))
	m := ioprobe(t, dir, "report", "--merge", "a.json", "b.json", "--output", "json")
	require.Equal(t, 0, m.code, m.stderr)
	require.Contains(t, m.stderr, "merged 12 results (24 runs from 2 hosts) into 6")
	merged := decodeSuite(t, []byte(m.stdout))
	require.Len(t, merged.Results, 6)
	for i, r := range merged.Results {
		require.Equal(t, 2*a.Results[i].Summary.Ops, r.Summary.Ops)
		require.Equal(t, 2*a.Results[i].Histogram.Read.Count(), r.Histogram.Read.Count())
		require.InEpsilon(t, 2*a.Results[i].Summary.IOPS, r.Summary.IOPS, 1e-9)
		require.Len(t, r.Merged.Hosts, 2)
	}
	txt := ioprobe(t, dir, "report", "--merge", "a.json", "b.json")
	require.Equal(t, 0, txt.code, txt.stderr)
	require.Contains(t, txt.stdout, "Merged    24 runs from 2 hosts")

	c := ioprobe(t, dir, "compare", "a.json", "b.json")
	require.Equal(t, 0, c.code, c.stderr)
	require.Regexp(t, `(?m)^file-server +8 KiB +≈?0% `, c.stdout, "the same figures differ by nothing")
	require.Contains(t, c.stdout, "Summary")
	require.Contains(t, c.stdout, "repeat", "the spread comes from the repeats")
	cj := ioprobe(t, dir, "compare", "a.json", "b.json", "--output", "json")
	require.Equal(t, 0, cj.code, cj.stderr)
	var cmp result.Comparison
	require.NoError(t, json.Unmarshal([]byte(cj.stdout), &cmp))
	require.Len(t, cmp.Points, 6)
}

func TestSuiteCustomCycles(t *testing.T) {
	dir := t.TempDir()
	tgt := filepath.Join(dir, "x")
	o := ioprobe(t, dir, "suite", "custom", "--target", tgt, "--size", "16MiB", "--profile", "oltp", "--cycle", "qd=1..4*2",
		"--duration", "200ms", "--ramp", "0s", "--output", "csv")
	require.Equal(t, 0, o.code, o.stderr)
	rows, err := csv.NewReader(strings.NewReader(o.stdout)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 1+3)
	col := func(name string) int {
		for i, c := range rows[0] {
			if c == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	var names, qds []string
	for _, r := range rows[1:] {
		names = append(names, r[col("point")])
		qds = append(qds, r[col("queue_depth")])
	}
	require.Equal(t, []string{"oltp-qd1", "oltp-qd2", "oltp-qd4"}, names)
	require.Equal(t, []string{"1", "2", "4"}, qds)
	require.Equal(t, "67% Read 100% Random", rows[1][col("point_pattern")])
}

func TestSuiteBadInputExits2(t *testing.T) {
	dir := t.TempDir()
	tgt := filepath.Join(dir, "never.dat")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown suite", []string{"suite", "tpcc"}, "unknown suite (known: characterize"},
		{"no suite", []string{"suite"}, "name one suite"},
		{"bs on a named suite", []string{"suite", "characterize", "--bs", "8k"}, "--bs applies to 'ioprobe suite custom' only"},
		{"bad cycle", []string{"suite", "scaling", "--cycle", "workers=0..4*2"}, "--cycle"},
		{"bad repeat", []string{"suite", "business", "--repeat", "0"}, "--repeat 0"},
		{"bad output", []string{"suite", "business", "--output", "xml"}, "--output xml"},
		{"out in a missing dir", []string{"suite", "business", "--out", filepath.Join(dir, "no/such/x.json")}, "--out"},
		{"bad qd", []string{"suite", "business", "--qd", "0"}, "--qd 0"},
		{"region not a multiple", []string{"suite", "characterize", "--size", "100000k"}, "in suite point"},
		{"target twice", []string{"suite", "business", "--target", "x", "--target", "x"}, "given twice"},
		{"report missing file", []string{"report", filepath.Join(dir, "none.json")}, "no such file"},
		{"report nothing", []string{"report"}, "name at least one"},
		{"compare one file", []string{"compare", "a.json"}, "name two files"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string(nil), c.args...)
			if c.args[0] == "suite" && !contains(args, "--target") {
				args = append(args, "--target", tgt)
			}
			args = append(args, "--duration", "200ms", "--ramp", "0s")
			if c.args[0] != "suite" {
				args = c.args
			}
			o := ioprobe(t, dir, args...)
			require.Equal(t, 2, o.code, "stderr: %s", o.stderr)
			require.Empty(t, o.stdout)
			lines := strings.Split(strings.TrimSpace(o.stderr), "\n")
			require.Len(t, lines, 1, "one clear line: %q", o.stderr)
			require.Contains(t, lines[0], c.want)
			_, err := os.Stat(tgt)
			require.True(t, os.IsNotExist(err), "bad input created the target")
		})
	}
}

func contains(v []string, s string) bool {
	for _, x := range v {
		if x == s {
			return true
		}
	}
	return false
}

func TestSuiteInterruptPrintsPartialResults(t *testing.T) {
	dir := t.TempDir()
	tgt := prepared(t, dir) // so that what it reads is the measurement's
	// How many points are done when it is interrupted depends on the
	// machine; the result is a prefix of the suite whatever their number:
	// every point done is kept as it was, the one under way says it was
	// interrupted, none after it ran.
	out, _ := interruptWhenMeasuring(t, "suite", "scaling", "--target", tgt, "--size", "16MiB", "--duration", "700ms", "--ramp", "0s", "--output", "json")
	s := decodeSuite(t, []byte(out))
	require.NotEmpty(t, s.Results)
	require.Less(t, len(s.Results), 12)
	last := s.Results[len(s.Results)-1]
	require.Equal(t, result.StatusInterrupted, last.Status)
	for _, r := range s.Results[:len(s.Results)-1] {
		require.Equal(t, result.StatusOK, r.Status)
	}
}

// Interrupted with --out, the suite says where its partial results went,
// not "the results above" (nothing is above: they are in the file).
func TestSuiteInterruptSaysWhereThePartialResultsWent(t *testing.T) {
	dir := t.TempDir()
	tgt, out := prepared(t, dir), filepath.Join(dir, "partial.json")
	stdout, stderr := interruptWhenMeasuring(t, "suite", "scaling", "--target", tgt, "--size", "16MiB", "--duration", "1h", "--ramp", "0s", "--output", "json", "--out", out)
	require.Empty(t, stdout)
	require.Contains(t, stderr, "ioprobe: interrupted: the results in "+out+" are partial\n")
	require.NotContains(t, stderr, "above")
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	s := decodeSuite(t, b)
	require.Len(t, s.Results, 1)
	require.Equal(t, result.StatusInterrupted, s.Results[0].Status)
}

// interruptWhenMeasuring runs the binary with args, sends it SIGINT once
// it is measuring, and returns what it wrote after exiting 130.
func interruptWhenMeasuring(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Start())
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.True(c, measuring(c, cmd.Process.Pid)) }, time.Minute, 20*time.Millisecond, "never measured")
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	require.True(t, ok, "want exit status 130, got %v", err)
	require.Equal(t, 130, ee.ExitCode(), errb.String())
	return out.String(), errb.String()
}
