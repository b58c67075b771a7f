//go:build linux

package runner

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testloop"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// TestBudgetEndsTheRun: a run with a stop-after budget ends when every
// worker has issued it, long before its hour-long cap, and the kernel's
// counters of the loop device saw exactly the budget.
func TestBudgetEndsTheRun(t *testing.T) {
	dev := testloop.Device(t, 64<<20)
	s := spec(t, "4k", 100, 100, 4, time.Hour)
	s.RegionBytes = 8 << 20
	s.Workers, s.IOCount, s.Loops = 2, 300, 2
	before := kernelReads(t, dev)
	res, err := Run(context.Background(), plan(Group{Spec: s, Targets: []string{dev}}))
	require.NoError(t, err)
	require.Equal(t, result.StatusOK, res.Status, res.Message)
	require.Equal(t, result.EndedBudget, res.Summary.Ended)
	require.EqualValues(t, 2*300*2, res.Summary.ReadOps)
	require.EqualValues(t, 2*300*2*4096, res.Summary.ReadBytes)
	require.EqualValues(t, 2*300*2, kernelReads(t, dev)-before)
}

// TestBudgetCappedByDuration: a budget the run time cuts short ends by
// duration; a run without a budget says nothing.
func TestBudgetCappedByDuration(t *testing.T) {
	dev := testloop.Device(t, 64<<20)
	s := spec(t, "4k", 100, 100, 1, 300*time.Millisecond)
	s.RateIOPS, s.IOCount, s.Loops = 100, 1_000_000, 1
	res, err := Run(context.Background(), plan(Group{Spec: s, Targets: []string{dev}}))
	require.NoError(t, err)
	require.Equal(t, result.EndedDuration, res.Summary.Ended)
	require.Less(t, res.Summary.Ops, uint64(1_000_000))

	s.IOCount, s.Loops = 0, 0
	res, err = Run(context.Background(), plan(Group{Spec: s, Targets: []string{dev}}))
	require.NoError(t, err)
	require.Empty(t, res.Summary.Ended)
}
