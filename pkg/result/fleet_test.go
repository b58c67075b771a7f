package result

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMergeFleetNamesWhoIsMissing: the hosts that measured are merged
// exactly; a host that did not complete is listed and named in the
// message even when it left a partial result; the document reads back as
// its merged result with its hosts.
func TestMergeFleetNamesWhoIsMissing(t *testing.T) {
	a := run("a", 4, latencies(500, 100_000, 50_000, 1), nil, 10, 50)
	b := run("b", 4, latencies(300, 200_000, 50_000, 2), nil, 10, 50)
	hosts := []FleetHost{
		{Address: "10.0.0.1:9816", Identity: a.Host, State: RunDone, Result: a},
		{Address: "10.0.0.2:9816", State: RunUnreachable, Error: "lost"},
		{Address: "10.0.0.3:9816", Identity: b.Host, State: RunStopped, Result: b},
	}
	m, failed, err := MergeFleet(hosts)
	require.NoError(t, err)
	require.Equal(t, []string{"10.0.0.2:9816", "10.0.0.3:9816"}, failed)
	require.Equal(t, a.Summary.Ops+b.Summary.Ops, m.Summary.Ops)
	require.Equal(t, 2, m.Merged.Runs)
	require.Equal(t, hosts, m.Hosts)
	require.Contains(t, m.Message, "partial: 2 of 3 hosts did not complete (10.0.0.2:9816, 10.0.0.3:9816)")

	f := Fleet{Schema: FleetSchema, Target: "data", Hosts: hosts, Partial: true, FailedHosts: failed}
	mm := *m
	mm.Hosts = nil
	f.Merged = &mm
	data, err := json.Marshal(f)
	require.NoError(t, err)
	suite, rs, err := Decode(bytes.NewReader(data))
	require.NoError(t, err)
	require.Empty(t, suite)
	require.Len(t, rs, 1)
	require.Equal(t, m.Summary.Ops, rs[0].Summary.Ops)
	require.Len(t, rs[0].Hosts, 3)
	require.Equal(t, "10.0.0.2:9816", rs[0].Hosts[1].Name(), "a host that never answered is named by its address")

	none, failed, err := MergeFleet(hosts[1:2])
	require.NoError(t, err)
	require.Nil(t, none)
	require.Equal(t, []string{"10.0.0.2:9816"}, failed)
}

// TestMergeFleetExcludesWhatCannotBeMerged: a host whose result has
// another workload than most hosts', or a run another host's result
// holds too, is made a failed host with the reason; the others are
// merged. Its place in the list does not matter.
func TestMergeFleetExcludesWhatCannotBeMerged(t *testing.T) {
	a := run("a", 4, latencies(500, 100_000, 50_000, 1), nil, 10, 50)
	b := run("b", 4, latencies(300, 200_000, 50_000, 2), nil, 10, 50)
	a.RunID, b.RunID = "run-a", "run-b"
	odd := run("odd", 4, latencies(300, 200_000, 50_000, 3), nil, 10, 50)
	odd.RunID, odd.Workload.QueueDepth = "run-odd", 32
	replay := *a
	replay.Host.Hostname = "replay"
	hosts := []FleetHost{
		{Address: "odd:9816", State: RunDone, Result: odd},
		{Address: "a:9816", State: RunDone, Result: a},
		{Address: "replay:9816", State: RunDone, Result: &replay},
		{Address: "b:9816", State: RunDone, Result: b},
	}
	m, failed, err := MergeFleet(hosts)
	require.NoError(t, err)
	require.Equal(t, []string{"odd:9816", "replay:9816"}, failed)
	require.Equal(t, a.Summary.Ops+b.Summary.Ops, m.Summary.Ops)
	require.Equal(t, 2, m.Merged.Runs)
	require.Nil(t, hosts[0].Result)
	require.Equal(t, RunFailed, hosts[0].State)
	require.Contains(t, hosts[0].Error, "its result cannot be merged with the other hosts': cannot merge oltp (a) with oltp (odd): QD/workers differ (16/1 and 32/1)")
	require.Contains(t, hosts[2].Error, "its result holds run run-a, which a's result holds too: a run is counted once")
	require.Contains(t, m.Message, "partial: 2 of 4 hosts did not complete (odd:9816, replay:9816)")
}
