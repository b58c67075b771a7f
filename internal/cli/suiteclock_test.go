package cli

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/suiterun"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

func TestSuiteClockEstimatesTimeLeft(t *testing.T) {
	// Six points (the business suite's) of 1s ramp-up + 2s, twice each.
	units := make([]suiterun.Unit, 6)
	for i := range units {
		units[i].Point.Specs = []workload.Spec{{Duration: 2 * time.Second, Ramp: time.Second}}
	}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newSuiteClock(units, 2)
	c.now = func() time.Time { return now }
	c.begin("file-server on /t run 1/2", 3*time.Second)
	require.Equal(t, "[1/12 file-server on /t run 1/2, suite 36s left] ", c.prefix())
	now = now.Add(2 * time.Second)
	require.Equal(t, "[1/12 file-server on /t run 1/2, suite 34s left] ", c.prefix())
	now = now.Add(5 * time.Second) // a run that overruns its plan (filling a file) counts as done
	require.Equal(t, "[1/12 file-server on /t run 1/2, suite 33s left] ", c.prefix())
	c.begin("file-server on /t run 2/2", 3*time.Second)
	require.Equal(t, "[2/12 file-server on /t run 2/2, suite 33s left] ", c.prefix())
}
