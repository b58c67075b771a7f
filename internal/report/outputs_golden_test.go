package report

import (
	"bytes"
	"encoding/csv"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Golden files of the outputs the text and compare goldens do not hold:
// the HTML pages, the fleet tables, the suites' CSV. Every figure an
// output shows comes from result's catalogue; these files prove that the
// outputs stay byte for byte what they were when the catalogue changes
// (go test ./internal/report -update rewrites them on purpose).

// fleetSuiteDoc is a fleet suite of three points on 1, 2 and 3 hosts.
func fleetSuiteDoc(t *testing.T) *result.Suite {
	t.Helper()
	all := fleetHosts(t, result.Point{}, 3)
	var rs []*result.Result
	for n := 1; n <= 3; n++ {
		p := result.Point{Suite: "scaling", Name: "random-read-8k", Section: workload.SectionScaling, Pattern: "Random Read",
			SizeBytes: 8192, Target: "/dev/sdb", Index: n - 1, Hosts: n}
		m, _, err := result.MergeFleet(fleetHosts(t, p, n))
		require.NoError(t, err)
		rs = append(rs, m)
	}
	s := suiteDoc("scaling", rs)
	s.Fleet = &result.FleetSuite{Target: "data", Hosts: []string{all[0].Address, all[1].Address, all[2].Address}, FailedHosts: []string{}}
	return s
}

func TestHTMLGolden(t *testing.T) {
	plain := &result.Suite{Schema: result.SuiteSchema}
	for _, f := range fixtures {
		plain.Results = append(plain.Results, f.result())
	}
	for _, c := range []struct {
		name  string
		suite *result.Suite
	}{
		{"characterize", characterizeSuite()},
		{"two_targets", twoTargetSuite()},
		{"business", businessSuite()},
		{"scaling", scalingSuite()},
		{"fleet_scaling", fleetSuiteDoc(t)},
		{"runs", plain},
		{"run", &result.Suite{Schema: result.SuiteSchema, Results: []*result.Result{mixedResult()}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, WriteHTML(&b, c.suite))
			golden(t, "html_"+c.name+".golden", b.Bytes())
		})
	}
}

func TestFleetTextGolden(t *testing.T) {
	hs := fleetHosts(t, result.Point{Name: "oltp", Pattern: "OLTP", SizeBytes: 8192}, 3)
	merged, _, err := result.MergeFleet(hs)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, WriteFleetText(&b, &result.Fleet{Schema: result.FleetSchema, Version: "0.3.0", Target: "data", Hosts: hs, Merged: merged, FailedHosts: []string{}}))
	golden(t, "fleet_run.golden", b.Bytes())

	// A host lost: its row says so, the merged result holds the others.
	hs[1].State, hs[1].Error, hs[1].Result = result.RunUnreachable, "connection refused", nil
	merged, failed, err := result.MergeFleet(hs)
	require.NoError(t, err)
	b.Reset()
	require.NoError(t, WriteFleetText(&b, &result.Fleet{Schema: result.FleetSchema, Version: "0.3.0", Target: "data", Hosts: hs, Merged: merged,
		Partial: true, FailedHosts: failed}))
	golden(t, "fleet_run_partial.golden", b.Bytes())

	b.Reset()
	require.NoError(t, WriteSuiteText(&b, fleetSuiteDoc(t)))
	golden(t, "suite_fleet_scaling.golden", b.Bytes())
}

func TestSuiteCSVGolden(t *testing.T) {
	var b bytes.Buffer
	for i, s := range []*result.Suite{characterizeSuite(), twoTargetSuite(), businessSuite(), scalingSuite(), fleetSuiteDoc(t)} {
		require.NoError(t, WriteCSV(&b, s.Results, i == 0))
	}
	golden(t, "suites.csv", b.Bytes())
}

func TestCompareBusinessGolden(t *testing.T) {
	base, other := businessSuite(), businessSuite()
	for _, r := range other.Results {
		r.Summary.IOPS *= 1.1
		r.Summary.CPU.HostCPUSecondsPerIO *= 0.95
	}
	c, err := result.Compare(base.Results, other.Results)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, WriteCompareText(&b, c, CompareSide{"a.json", base.Results}, CompareSide{"b.json", other.Results}))
	golden(t, "compare_business.golden", b.Bytes())
}

// partialFleetSuiteDoc is fleetSuiteDoc whose 3-host point lost its
// second host (one machine's second network namespace) mid-run.
func partialFleetSuiteDoc(t *testing.T) *result.Suite {
	t.Helper()
	s := fleetSuiteDoc(t)
	last := s.Results[2]
	hs := append([]result.FleetHost(nil), last.Hosts...)
	hs[1].State, hs[1].Error, hs[1].Result = result.RunUnreachable, "connection refused", nil
	m, failed, err := result.MergeFleet(hs)
	require.NoError(t, err)
	m.Point = last.Point
	s.Results[2] = m
	s.Fleet.Partial, s.Fleet.FailedHosts = true, failed
	return s
}

// TestPartialFleetPointIsMarked: a point that lost a host holds fewer
// hosts than its row says; text, CSV and HTML mark it and say which hosts
// it holds.
func TestPartialFleetPointIsMarked(t *testing.T) {
	s := partialFleetSuiteDoc(t)
	note := "partial: holds 2 of 3 hosts (node1 at 10.0.0.1:9100, node2); node1 at 10.0.0.2:9100 unreachable"

	var b bytes.Buffer
	require.NoError(t, WriteSuiteText(&b, s))
	golden(t, "suite_fleet_partial.golden", b.Bytes())
	out := b.String()
	require.Regexp(t, `(?m)^3 +[0-9,.]+`+partialMark+`$`, out, "the 3-host row's cell is marked")
	require.NotRegexp(t, `(?m)^[12] +[0-9,.]+`+partialMark+`$`, out, "the complete points are not")
	require.Contains(t, out, "\n"+partialMark+" random-read-8k on /dev/sdb on 3 hosts: "+note+"\n")
	require.Contains(t, out, "\nrandom-read-8k (3 hosts; "+note+")\n")
	// The State column holds a word; the host's error follows the table.
	require.Regexp(t, `(?m)^node1 +10\.0\.0\.2:9100 +unreachable +- `, out)
	require.Contains(t, out, "\n\nnode1 at 10.0.0.2:9100 unreachable: connection refused\n")

	var c bytes.Buffer
	require.NoError(t, WriteCSV(&c, s.Results, true))
	rows, err := csv.NewReader(&c).ReadAll()
	require.NoError(t, err)
	col := func(row []string, name string) string { return row[slices.Index(rows[0], name)] }
	require.Equal(t, "", col(rows[1], "fleet_failed_hosts"))
	require.Equal(t, "10.0.0.1:9100", col(rows[1], "fleet_hosts"))
	require.Equal(t, "10.0.0.1:9100;10.0.0.3:9100", col(rows[3], "fleet_hosts"))
	require.Equal(t, "10.0.0.2:9100", col(rows[3], "fleet_failed_hosts"))

	var h bytes.Buffer
	require.NoError(t, WriteHTML(&h, s))
	golden(t, "html_fleet_partial.golden", h.Bytes())
	page := h.String()
	require.Contains(t, page, "<td>ok "+partialMark+"</td>", "the table of every run marks it")
	require.Contains(t, page, `<p class="note">`+partialMark+" random-read-8k on /dev/sdb on 3 hosts: "+note+"</p>", "and says it below")
	require.Contains(t, page, `<p class="note">random-read-8k on /dev/sdb: node1 at 10.0.0.2:9100 unreachable: connection refused</p>`, "with the host's error")
	require.Contains(t, page, partialMark+" random-read-8k on 3 hosts: "+note+".", "under the tables")
}
