package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// TestFleetTextAllHostsRowIsTheMergedResult: the "All hosts" row and the
// merged summary below it show the one merged result's figures, every
// column, though bytes ÷ the longest window would say otherwise.
func TestFleetTextAllHostsRowIsTheMergedResult(t *testing.T) {
	hs := fleetHosts(t, result.Point{Name: "oltp", Pattern: "OLTP", SizeBytes: 8192}, 3)
	merged, failed, err := result.MergeFleet(hs)
	require.NoError(t, err)
	require.Empty(t, failed)
	s := merged.Summary
	require.NotEqual(t, num(float64(s.Bytes)/s.ElapsedSeconds/1e6, 2), num(s.MBPerSecond, 2),
		"the fixture's windows differ enough for bytes over the longest one to differ from the summed rate")

	var b bytes.Buffer
	require.NoError(t, WriteFleetText(&b, &result.Fleet{Schema: result.FleetSchema, Target: "data", Hosts: hs, Merged: merged, FailedHosts: []string{}}))
	out := b.String()
	q := regexp.QuoteMeta
	row := `(?m)^All hosts +3/3 done +- +` + strings.Join([]string{
		q(num(s.IOPS, 0)), q(num(s.MBPerSecond, 2)), q(num(s.Latency.MeanSeconds*1e3, 3)),
		q(num(s.Latency.Percentiles["99"]*1e3, 3)), q(num(s.Latency.MaxSeconds*1e3, 3)),
		q(num(s.CPU.HostUtilizationPct, 1)), q(count(s.Ops)), q(count(s.Errors)),
	}, " +") + `$`
	require.Regexp(t, row, out)

	_, summary, ok := strings.Cut(out, "\n"+AllHosts+":\n")
	require.True(t, ok, out)
	require.Regexp(t, `(?m)^IOPS +`+q(num(s.IOPS, 2))+` `, summary)
	require.Regexp(t, `(?m)^MB/s +`+q(num(s.MBPerSecond, 2))+` `, summary, "the summary's MB/s is the row's")
	require.Regexp(t, `(?m)^MiB/s +`+q(num(s.ThroughputBytesPerSecond/(1<<20), 2))+` `, summary)
	require.Regexp(t, `(?m)^I/Os +`+q(count(s.Ops))+` `, summary)

	// One host alone: its MB/s is its bytes over its own window.
	var one bytes.Buffer
	require.NoError(t, WriteText(&one, hs[0].Result))
	r0 := hs[0].Result.Summary
	require.Regexp(t, `(?m)^MB/s +`+q(num(float64(r0.Bytes)/r0.ElapsedSeconds/1e6, 2))+` `, one.String())
}

// TestFleetSuiteTextNamesItsHosts: a fleet suite's report says its points
// are merged fleet points, names each host once (by address where two
// share a hostname) and titles the scaling section by hosts.
func TestFleetSuiteTextNamesItsHosts(t *testing.T) {
	all := fleetHosts(t, result.Point{}, 3)
	var rs []*result.Result
	for n := 1; n <= 3; n++ {
		p := result.Point{Suite: "scaling", Name: "random-read-8k", Section: workload.SectionScaling, Pattern: "Random Read",
			SizeBytes: 8192, Target: "/dev/sdb", Index: n - 1, Hosts: n}
		hs := fleetHosts(t, p, n)
		m, _, err := result.MergeFleet(hs)
		require.NoError(t, err)
		rs = append(rs, m)
	}
	addrs := []string{all[0].Address, all[1].Address, all[2].Address}
	s := suiteDoc("scaling", rs)
	s.Fleet = &result.FleetSuite{Target: "data", Hosts: addrs, FailedHosts: []string{}}

	var b bytes.Buffer
	require.NoError(t, WriteSuiteText(&b, s))
	out := b.String()
	require.NotContains(t, out, "not merged")
	require.Regexp(t, `(?m)^Fleet +target "data" on 3 hosts: every point holds its hosts' runs merged into one result`, out)
	require.Regexp(t, `(?m)^Hosts +node1 at 10\.0\.0\.1:9100, node1 at 10\.0\.0\.2:9100, node2$`, out)
	require.NotContains(t, out, "over workers")
	require.Contains(t, out, "\n"+SectionHostScaling+"\n")
	require.Regexp(t, `(?m)^Hosts +Random Read\n1 +[0-9,]+\n2 +[0-9,]+\n3 +[0-9,]+$`, out)

	var h bytes.Buffer
	require.NoError(t, WriteHTML(&h, s))
	require.NotContains(t, h.String(), "over workers")
	require.Contains(t, h.String(), "node1 at 10.0.0.1:9100, node1 at 10.0.0.2:9100, node2")
	require.Contains(t, h.String(), "as hosts are added")
}
