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
