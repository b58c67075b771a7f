package test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/check"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// TestCheckEtcdFailsOnSlowStorage: every fdatasync of the real binary is
// delayed 20 ms by strace's fault injection, twice etcd's 10 ms threshold,
// so whatever this machine's own latency the p99 cannot be under it: the
// check must measure without error and fail with its documented code 3,
// the numbers in the verdict, and leave no file behind in the directory.
func TestCheckEtcdFailsOnSlowStorage(t *testing.T) {
	dir := t.TempDir()
	o := underStrace(t, dir, []string{"fdatasync:delay_enter=20000"},
		"check", "etcd", "--target", dir, "--duration", "1s", "--output", "json")
	require.Equal(t, 3, o.code, "measured fine, fails the threshold: %s", o.stderr)
	require.Contains(t, o.stderr, "check etcd failed: FAIL: 99th percentile of")
	var doc struct {
		Schema  string          `json:"schema"`
		Verdict check.Verdict   `json:"verdict"`
		Result  json.RawMessage `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(o.stdout), &doc))
	require.Equal(t, "ioprobe.check/v1", doc.Schema)
	v := doc.Verdict
	require.False(t, v.Pass)
	require.Equal(t, "etcd", v.Check)
	require.Equal(t, 0.010, v.Threshold)
	require.GreaterOrEqual(t, v.Measured, 0.020, "every fdatasync took at least the injected 20 ms")
	require.Positive(t, v.Samples)
	r := decodeResult(t, string(doc.Result))
	require.Equal(t, result.StatusOK, r.Status)
	require.Equal(t, v.Samples, r.Summary.Sync.Ops)
	require.Equal(t, 1, r.Workload.Fdatasync)
	require.Equal(t, 1, r.Workload.QueueDepth)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "the check's file is removed")
}

// TestCheckBadInput: no target, an unknown check, a bad duration: one
// line, exit 2, nothing created.
func TestCheckBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"check", "etcd"},
		{"check", "postgres", "--target", dir},
		{"check", "etcd", "--target", dir, "--duration", "0s"},
		{"check", "etcd", "--target", dir, "--output", "csv"},
	} {
		o := ioprobe(t, dir, args...)
		require.Equal(t, 2, o.code, "%v: %s", args, o.stderr)
		require.NotContains(t, o.stderr[:len(o.stderr)-1], "\n", "one line")
	}
	entries, err := filepath.Glob(filepath.Join(dir, "*"))
	require.NoError(t, err)
	require.Empty(t, entries)
}
