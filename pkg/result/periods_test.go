package result

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Runs of one host one after the other were not concurrent load: their
// rates are not summed. The merged rate is every I/O over the periods'
// measured time, and the merge says how many periods there were. Runs
// that overlap in time add up, as before.
func TestMergeDoesNotSumRunsThatDidNotOverlap(t *testing.T) {
	a := run("h1", 4, latencies(1000, 100_000, 50_000, 1), nil, 10, 20)
	b := run("h1", 4, latencies(3000, 100_000, 50_000, 2), nil, 10, 20)
	b.StartedAt = a.StartedAt.Add(time.Hour) // the next run, an hour later
	m, err := Merge(a, b)
	require.NoError(t, err)
	require.Equal(t, 2, m.Merged.Periods)
	require.EqualValues(t, 4000, m.Summary.Ops, "counts are exact either way")
	require.InDelta(t, 20.0, m.Summary.ElapsedSeconds, 1e-9)
	require.InDelta(t, 4000.0/20, m.Summary.IOPS, 1e-9, "not 100+300 as if at once")
	require.InDelta(t, float64(m.Summary.Bytes)/20/1e6, m.Summary.MBPerSecond, 1e-9)

	// Back to back: b starts when a's ramp-up and measurement are over.
	b.StartedAt = a.StartedAt.Add(time.Duration((a.Workload.RampSeconds + a.Summary.ElapsedSeconds) * float64(time.Second)))
	m, err = Merge(a, b)
	require.NoError(t, err)
	require.Equal(t, 2, m.Merged.Periods)

	// Overlapping (two hosts, or two processes on one): summed.
	b.StartedAt = a.StartedAt.Add(5 * time.Second)
	m, err = Merge(a, b)
	require.NoError(t, err)
	require.Zero(t, m.Merged.Periods)
	require.InDelta(t, 400.0, m.Summary.IOPS, 1e-9)
	require.InDelta(t, 10.0, m.Summary.ElapsedSeconds, 1e-9)

	// Two periods of concurrent load: each adds up, then time-weighted.
	c := run("h2", 4, latencies(1000, 100_000, 50_000, 3), nil, 10, 20)
	d := run("h2", 4, latencies(3000, 100_000, 50_000, 4), nil, 10, 20)
	d.StartedAt = b.StartedAt.Add(time.Hour)
	b.StartedAt = d.StartedAt
	m, err = Merge(a, b, c, d)
	require.NoError(t, err)
	require.Equal(t, 2, m.Merged.Periods)
	require.InDelta(t, (100.0+100+300+300)*10/20, m.Summary.IOPS, 1e-9)
}
