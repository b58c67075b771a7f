package cli

import (
	"testing"
	"time"

	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/stretchr/testify/require"
)

// TestFleetProgressText: the line names each host's state and counts down
// to the common start, then to the planned end; many hosts are counted by
// state in the order a run goes through them.
func TestFleetProgressText(t *testing.T) {
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	p := &fleetProgress{names: []string{"a:9816", "b:9816"}, states: []result.RunState{statePosting, statePosting}}
	require.Equal(t, "fleet: starting: a:9816 posting, b:9816 posting", p.text(start.Add(-5*time.Second)))
	p.startAt, p.end = start, start.Add(time.Minute)
	p.states = []result.RunState{"waiting", "preparing"}
	require.Equal(t, "fleet: start in 3s: a:9816 waiting, b:9816 preparing", p.text(start.Add(-3*time.Second)))
	p.states = []result.RunState{"running", "running"}
	require.Equal(t, "fleet: 45s left: a:9816 running, b:9816 running", p.text(start.Add(15*time.Second)))
	p.states = []result.RunState{"done", "running"}
	require.Equal(t, "fleet: collecting the results: a:9816 done, b:9816 running", p.text(start.Add(time.Minute)))

	p.names = []string{"h1", "h2", "h3", "h4", "h5", "h6"}
	p.states = []result.RunState{"done", "unreachable", "running", "running", "waiting", "odd"}
	require.Equal(t, "fleet: 10s left: 1 waiting, 2 running, 1 done, 1 unreachable, 1 odd", p.text(start.Add(50*time.Second)))
}
