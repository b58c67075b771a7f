package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// A deadline for the measurement (a /probe's budget) cuts the window to
// end by it, and the result says so; the window's figures are its own.
func TestMeasureByCutsTheWindow(t *testing.T) {
	// An existing file and no BPF programs: little to prepare, so that
	// the deadline leaves a window even on a loaded host.
	path := filepath.Join(t.TempDir(), "f.dat")
	require.NoError(t, os.WriteFile(path, make([]byte, 4<<20), 0o644))
	s := spec(t, "4k", 100, 100, 1, time.Hour)
	s.RegionBytes = 4 << 20
	p := plan(Group{Spec: s, Targets: []string{path}})
	p.NoDeviceLatency = true
	p.MeasureBy, p.MinMeasure = time.Now().Add(5*time.Second), 100*time.Millisecond
	res, err := Run(context.Background(), p)
	require.NoError(t, err)
	require.Equal(t, result.StatusOK, res.Status, res.Message)
	require.Less(t, res.Summary.ElapsedSeconds, 5.0, "the window ended by the deadline, not after its hour")
	require.Positive(t, res.Summary.Ops)
	require.Contains(t, res.Notes, noteFor(t, res), "the cut is said")
}

func noteFor(t *testing.T, res *result.Result) string {
	t.Helper()
	for _, n := range res.Notes {
		if len(n) > 12 && n[:12] == "measured for" {
			return n
		}
	}
	t.Fatalf("no note says the window was cut: %q", res.Notes)
	return ""
}

// A deadline that leaves less than MinMeasure when the run could start
// stops it before its first I/O, with a TooLateError.
func TestMeasureByTooLate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.dat")
	s := spec(t, "4k", 100, 100, 1, time.Second)
	s.RegionBytes = 4 << 20
	p := plan(Group{Spec: s, Targets: []string{path}})
	p.MeasureBy, p.MinMeasure = time.Now(), 100*time.Millisecond
	res, err := Run(context.Background(), p)
	require.Nil(t, res)
	var late *TooLateError
	require.ErrorAs(t, err, &late)
	require.Equal(t, 100*time.Millisecond, late.Need)
	require.Zero(t, late.Left)
}
