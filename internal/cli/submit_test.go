//go:build linux

package cli

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/engine/uring"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// TestRunRecordsTheSubmissionMode: a ring submits by the adaptive rule
// unless a --batch-* flag is given, even one that names fio's default
// (--batch-complete-max 0 sets no size): then by fio's rules, and the
// result's workload says which; the sync engine has none.
func TestRunRecordsTheSubmissionMode(t *testing.T) {
	if err := uring.New().Available(); err != nil {
		t.Skipf("io_uring unavailable: %v", err) //hygiene:skip the kernel's io_uring, not something make test installs
	}
	tgt := filepath.Join(t.TempDir(), "t.dat")
	base := []string{"run", "--target", tgt, "--size", "8MiB", "--bs", "4k", "--qd", "4", "--ramp", "0s", "--number-ios", "200", "--output", "json"}
	for _, c := range []struct {
		flags []string
		mode  string
		batch int
	}{
		{[]string{"--engine", "uring"}, workload.SubmitAdaptive, 0},
		{[]string{"--engine", "uring", "--batch-complete-max", "0"}, workload.SubmitFio, 0},
		{[]string{"--engine", "uring", "--batch-submit", "1"}, workload.SubmitFio, 0},
		{[]string{"--engine", "uring", "--batch-submit", "0"}, workload.SubmitFio, 4},
		{[]string{"--engine", "sync"}, "", 0},
	} {
		code, stdout, stderr := runCLI(t, append(append([]string{}, base...), c.flags...)...)
		require.Zero(t, code, stderr)
		var r result.Result
		require.NoError(t, json.Unmarshal([]byte(stdout), &r))
		require.Equal(t, c.mode, r.Workload.SubmitMode, c.flags)
		require.Equal(t, c.batch, r.Workload.SubmitBatch, c.flags)
	}
}
