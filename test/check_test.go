package test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/check"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// TestCheckEtcdFailsOnSlowStorage: every fdatasync of the real binary is
// delayed 20 ms by strace's fault injection, twice etcd's 10 ms threshold,
// so whatever this machine's own latency the p99 cannot be under it: the
// check must measure without error and fail with its documented code 3,
// the numbers in the verdict, and leave no file behind in the directory.
// fio's recipe and etcd itself fail such a disk too: the case where every
// tool agrees. 10 s: at 20 ms an fdatasync, the WAL reaches the 300
// samples a verdict needs; the backend's few dozen commits do not, and
// the WAL's conclusive failure decides. On a loaded machine, where strace
// and the check wait for the CPU, 10 s made 130: then the check runs
// again for twice as long (up to 80 s), until the WAL has its samples.
func TestCheckEtcdFailsOnSlowStorage(t *testing.T) {
	dir := t.TempDir()
	var o outcome
	for d := 10 * time.Second; ; d *= 2 {
		o = underStrace(t, dir, []string{"fdatasync:delay_enter=20000"},
			"check", "etcd", "--target", dir, "--duration", d.String(), "--output", "json")
		if o.code != 2 || !strings.Contains(o.stderr, "INCONCLUSIVE: WAL: only ") || d >= 80*time.Second {
			break
		}
		t.Logf("%v made too few fdatasyncs for a verdict: %s", d, o.stderr)
	}
	require.Equal(t, 3, o.code, "measured fine, fails the threshold: %s", o.stderr)
	require.Contains(t, o.stderr, "check etcd failed: FAIL: WAL: 99th percentile of")
	r := checkDoc(t, o.stdout)
	require.Equal(t, result.StatusOK, r.Status)
	require.NotNil(t, r.Verdict)
	v := *r.Verdict
	require.False(t, v.Pass)
	require.Equal(t, check.Fail, v.Verdict)
	require.Equal(t, "etcd", v.Check)
	require.Equal(t, 0.010, v.Threshold)
	require.GreaterOrEqual(t, v.Measured, 0.020, "every fdatasync took at least the injected 20 ms")
	require.GreaterOrEqual(t, v.Samples, uint64(check.MinSamples))
	require.Len(t, r.Streams, 2)
	wal := r.Streams[0]
	require.Equal(t, v.Samples, wal.Samples)
	require.Equal(t, wal.Samples, wal.Histogram.Count())
	require.GreaterOrEqual(t, wal.Latency.Percentiles["50"], 0.020)
	require.Less(t, wal.WriteLatency.Percentiles["50"], 0.020, "the write is not delayed: only the fdatasync is")
	require.Equal(t, check.Inconclusive, r.Streams[1].Verdict.Verdict)
	require.Empty(t, entries(t, dir), "the check's files are removed")
}

// TestCheckEtcdInconclusive: too few samples for a 99th percentile is no
// verdict, whichever side of the threshold they are on: exit 2, the
// number of samples and the minimum said.
func TestCheckEtcdInconclusive(t *testing.T) {
	dir := t.TempDir()
	o := underStrace(t, dir, []string{"fdatasync:delay_enter=20000"},
		"check", "etcd", "--target", dir, "--duration", "1s", "--backend=false")
	require.Equal(t, 2, o.code, o.stderr)
	require.Regexp(t, `check etcd: INCONCLUSIVE: WAL: only \d+ fdatasyncs; a 99th percentile against etcd's 10 ms needs at least 300`, o.stderr)
	require.Contains(t, o.stdout, "Verdict   wal: INCONCLUSIVE: only ")
	require.NotContains(t, o.stdout, "FAIL")
	require.NotContains(t, o.stdout, "PASS")
	require.Empty(t, entries(t, dir))
}

// TestCheckEtcdInterruptedHasNoVerdict: SIGINT while measuring gives the
// partial figures and no verdict in either output, exit 130, no file
// left.
func TestCheckEtcdInterruptedHasNoVerdict(t *testing.T) {
	for _, output := range []string{"json", "text"} {
		dir := t.TempDir()
		b := startBackground(t, "check", "etcd", "--target", dir, "--duration", "1h", "--output", output)
		require.Eventually(t, func() bool {
			m, _ := filepath.Glob(filepath.Join(dir, "*-backend.db")) // made last, before measuring
			return len(m) == 1
		}, time.Minute, 20*time.Millisecond, "the check never started")
		// Into the measured window: the backend's first commit has grown
		// its file past the four pages made before it.
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			m, err := filepath.Glob(filepath.Join(dir, "*-backend.db"))
			require.NoError(c, err)
			require.Len(c, m, 1)
			st, err := os.Stat(m[0])
			require.NoError(c, err)
			assert.Greater(c, st.Size(), int64(4*check.PageBytes), "the first commit")
		}, time.Minute, 20*time.Millisecond, "the check never committed")
		require.NoError(t, b.cmd.Process.Signal(syscall.SIGINT))
		require.Equal(t, 130, b.exitCode(t), b.errb.String())
		require.Contains(t, b.errb.String(), "no verdict")
		out := b.out.String()
		if output == "json" {
			var raw map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(out), &raw))
			require.NotContains(t, raw, "verdict")
			r := checkDoc(t, out)
			require.Equal(t, result.StatusInterrupted, r.Status)
			require.NotContains(t, out, `"pass"`)
		} else {
			require.Contains(t, out, "Check     etcd: interrupted, no verdict")
			require.NotContains(t, out, "PASS")
			require.NotContains(t, out, "FAIL")
			require.NotContains(t, out, "\nVerdict ")
		}
		require.Empty(t, entries(t, dir))
	}
}

// TestCheckEtcdNeverRemovesAReplacedFile: a file renamed onto the check's
// WAL segment while it runs is not the check's file: it stays, with its
// content, and the check says so.
func TestCheckEtcdNeverRemovesAReplacedFile(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	b := startBackground(t, "check", "etcd", "--target", dir, "--duration", "2s", "--backend=false", "--output", "json")
	var seg string
	require.Eventually(t, func() bool {
		m, _ := filepath.Glob(filepath.Join(dir, "*.wal"))
		if len(m) == 1 {
			seg = m[0]
		}
		return seg != ""
	}, time.Minute, 10*time.Millisecond, "the check never made its segment")
	victim := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(victim, []byte("a user's file"), 0o600))
	require.NoError(t, os.Rename(victim, seg))
	code := b.exitCode(t)
	require.NotEqual(t, 1, code, b.errb.String())
	require.NotEqual(t, 130, code)
	got, err := os.ReadFile(seg)
	require.NoError(t, err, "the file renamed onto the check's was deleted")
	require.Equal(t, "a user's file", string(got))
	require.Contains(t, b.errb.String(), "ioprobe: left "+seg+": something else took the name of a file the check created")
	r := checkDoc(t, b.out.String())
	require.Equal(t, []string{seg}, r.Left)
	require.Equal(t, []string{filepath.Base(seg)}, entries(t, dir), "its other files are gone")
}

// TestCheckBadInput: no target, a missing directory (with or without a
// trailing slash), a file, an unknown check, bad flags: one line, exit 2,
// nothing created.
func TestCheckBadInput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	missing := filepath.Join(dir, "etcd")
	for _, args := range [][]string{
		{"check", "etcd"},
		{"check", "postgres", "--target", dir},
		{"check", "etcd", "--target", missing},
		{"check", "etcd", "--target", missing + "/"},
		{"check", "etcd", "--target", filepath.Join(missing, "member") + "/"},
		{"check", "etcd", "--target", file},
		{"check", "etcd", "--target", file + "/"},
		{"check", "etcd", "--target", "/dev/null"},
		{"check", "etcd", "--target", dir, "--duration", "0s"},
		{"check", "etcd", "--target", dir, "--output", "csv"},
		{"check", "etcd", "--target", dir, "--repeat", "0"},
		{"check", "etcd", "--target", dir, "--rate-iops", "-1"},
		{"check", "etcd", "--target", dir, "--rate-iops", "NaN"},
		{"check", "etcd", "--target", dir, "--rate-iops", "10", "--duration", "10s"},
		{"check", "etcd", "--target", dir, "--rate", "10", "--duration", "10s"},
		{"check", "etcd", "--target", dir, "--rate", "100", "--rate-iops", "200"},
	} {
		o := ioprobe(t, dir, args...)
		require.Equal(t, 2, o.code, "%v: %s", args, o.stderr)
		require.NotContains(t, o.stderr[:len(o.stderr)-1], "\n", "one line")
		require.Empty(t, o.stdout, "%v", args)
	}
	o := ioprobe(t, dir, "check", "etcd", "--target", missing+"/")
	require.Contains(t, o.stderr, "no such directory")
	o = ioprobe(t, dir, "check", "etcd", "--target", "/dev/shm")
	if _, err := os.Stat("/dev/shm"); err == nil {
		require.Equal(t, 2, o.code)
		require.Contains(t, o.stderr, "fdatasync touches no storage")
	}
	require.Equal(t, []string{"file"}, entries(t, dir), "nothing created")
}

// TestCheckRateIOPSAndItsOldName: the check's rate is --rate-iops, run's
// name for the same idea; --rate, its old name, still works and says so
// once on stderr.
func TestCheckRateIOPSAndItsOldName(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	for _, flag := range []string{"--rate-iops", "--rate"} {
		o := ioprobe(t, dir, "check", "etcd", "--target", dir, "--duration", "3s", "--backend=false", flag, "100", "--output", "json")
		require.Contains(t, []int{0, 2, 3}, o.code, o.stderr)
		r := checkDoc(t, o.stdout)
		require.EqualValues(t, 100, r.Settings.Rate, flag)
		require.LessOrEqual(t, r.Streams[0].Records, uint64(3*100+1), "%s caps the appends", flag)
		old := "ioprobe: --rate is the old name of --rate-iops, which means the same (as run --rate-iops): it still works, for now\n"
		if flag == "--rate" {
			require.Equal(t, 1, strings.Count(o.stderr, old), o.stderr)
		} else {
			require.NotContains(t, o.stderr, "old name", o.stderr)
		}
	}
	h := ioprobe(t, dir, "check", "etcd", "--help")
	require.Contains(t, h.stdout, "--rate-iops")
	require.NotContains(t, h.stdout, "--rate ", "the old name is not offered")
}
