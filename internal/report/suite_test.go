package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

func TestWriteSuiteTextGolden(t *testing.T) {
	for _, f := range suiteFixtures {
		t.Run(f.name, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, WriteSuiteText(&b, f.suite()))
			golden(t, "suite_"+f.name+".golden", b.Bytes())
			require.NotContains(t, b.String(), "NaN")
			require.NotContains(t, b.String(), "Inf")
		})
	}
}

func TestSuiteTablesHaveTheReportsLayout(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteSuiteText(&b, characterizeSuite()))
	out := b.String()
	// Six tables, in the reports' order.
	for i, title := range []string{"I/O operations per second", "Throughput (MB/s)", "Mean response time (ms)",
		"CPU utilization (%, summed over CPUs)", "I/O rate efficiency (IOPS per %CPU)", "Throughput efficiency (MB/s per %CPU)"} {
		require.Contains(t, out, "Table "+string(rune('1'+i))+". "+title+" — /dev/sdb\n")
	}
	// esx2 Table 2, row for row.
	require.Regexp(t, `(?m)^Data Size +Random Write +Random Read +Sequential Write +Sequential Read$`, out)
	require.Regexp(t, `(?m)^4 KiB +817 +1,424 +9,377 +4,759$`, out)
	require.Regexp(t, `(?m)^64 KiB +340 +690 +1,878 +2,878$`, out)
	// esx2 Table 4.
	require.Regexp(t, `(?m)^8 KiB +9\.8 +19\.5 +82\.3 +106\.3$`, out)
	require.Contains(t, out, "16 outstanding I/Os, 1 worker")

	b.Reset()
	require.NoError(t, WriteSuiteText(&b, twoTargetSuite()))
	out = b.String()
	require.Contains(t, out, "Table 1. I/O operations per second — /dev/sdb\n")
	require.Contains(t, out, "Table 2. I/O operations per second — /dev/sdc\n")
	require.Regexp(t, `(?m)^8 KiB +731 +1,358 +9,058 +13,264$`, out, "esx2 Table 3 (BusLogic)")

	b.Reset()
	require.NoError(t, WriteSuiteText(&b, businessSuite()))
	out = b.String()
	require.Regexp(t, `(?m)^Workload +Data Size +IOPS$`, out, "nothing varies within a workload: the table turns")
	require.Regexp(t, `(?m)^File Server +8 KiB +3,100 ±3\.0%$`, out)
	require.Regexp(t, `(?m)^Mixed +mixed +4,200\*$`, out)
	require.Contains(t, out, "* mixed on /dev/sdb: interrupted: interrupted before the run time was over")
	require.Contains(t, out, "Repeat    3 runs per point, merged; IOPS shown ± the run-to-run standard deviation")

	b.Reset()
	require.NoError(t, WriteSuiteText(&b, scalingSuite()))
	out = b.String()
	require.Regexp(t, `(?m)^Workers +64 KiB Sequential Read +8 KiB Random Read$`, out, "sizes fixed per column join the label")
	lines := strings.Split(out, "\n")
	var workers []string
	for i, l := range lines {
		if strings.HasPrefix(l, "Workers ") && strings.HasPrefix(lines[i-1], "Table 1.") {
			for _, r := range lines[i+1 : i+7] {
				workers = append(workers, strings.Fields(r)[0])
			}
		}
	}
	require.Equal(t, []string{"1", "2", "4", "8", "16", "32"}, workers, "numeric order")
}

func TestSuiteTextWithCyclingHasRowsPerValue(t *testing.T) {
	s := characterizeSuite()
	// Cycle qd over two values: the rows become size × QD.
	var rs []*result.Result
	for _, r := range s.Results {
		for _, qd := range []int{4, 32} {
			c := *r
			w := c.Workload
			w.QueueDepth = qd
			c.Workload = w
			p := *r.Point
			p.Name += "-qd" + string(rune('0'+qd/4))
			c.Point = &p
			rs = append(rs, &c)
		}
	}
	var b bytes.Buffer
	require.NoError(t, WriteSuiteText(&b, suiteDoc("characterize", rs)))
	out := b.String()
	require.Regexp(t, `(?m)^Data Size +QD +Random Write`, out)
	require.Regexp(t, `(?m)^4 KiB +4 +817 `, out)
	require.Regexp(t, `(?m)^4 KiB +32 +817 `, out)
	require.NotContains(t, out, "outstanding I/Os,")
}

func TestWriteSuiteTextErrors(t *testing.T) {
	require.Error(t, WriteSuiteText(&bytes.Buffer{}, nil))
	require.Error(t, WriteSuiteText(&bytes.Buffer{}, &result.Suite{}))
}

func TestSuiteTextTargetsAtOnceAreRows(t *testing.T) {
	var rs []*result.Result
	for i, n := range []int{1, 2, 4} {
		p := result.Point{Suite: "peak-iops", Name: "targets-8k-qd16-t" + string(rune('0'+n)), Section: "Scaling over targets",
			Pattern: "Random Read, 16 outstanding", SizeBytes: 8192, Targets: n, Index: i}
		rs = append(rs, measured(esxHost, p, wl(p.Name, 8192, 100, 100, 16, 1), 1000*float64(n), 5, i))
	}
	var b bytes.Buffer
	require.NoError(t, WriteSuiteText(&b, suiteDoc("peak-iops", rs)))
	out := b.String()
	require.Contains(t, out, "Table 1. I/O operations per second\n", "no side: all targets at once")
	require.Regexp(t, `(?m)^Targets +Random Read, 16 outstanding$`, out)
	require.Regexp(t, `(?m)^4 +4,000$`, out)
}

// TestSizesAreLabelledInBinaryUnits: every output that labels a data
// size labels 4096 bytes "4 KiB", never "4KB", which ioprobe's command
// line reads as 4000 bytes (a label must read back as the size that ran).
func TestSizesAreLabelledInBinaryUnits(t *testing.T) {
	var text, html, cmp bytes.Buffer
	require.NoError(t, WriteSuiteText(&text, characterizeSuite()))
	require.NoError(t, WriteHTML(&html, characterizeSuite()))
	base := characterizeResults("/dev/sdb", lsiIOPS, lsiCPU)
	c, err := result.Compare(base, characterizeResults("/dev/sdc", busIOPS, busCPU))
	require.NoError(t, err)
	require.NoError(t, WriteCompareText(&cmp, c, CompareSide{"a.json", base}, CompareSide{"b.json", base}))
	decimal := regexp.MustCompile(`\b\d+ ?KB\b`) // MB stays: MB/s is 10^6 bytes a second
	for name, out := range map[string]string{"suite text": text.String(), "html": html.String(), "compare": cmp.String()} {
		require.True(t, strings.Contains(out, "4 KiB") && strings.Contains(out, "64 KiB"), "%s labels 4096 bytes 4 KiB", name)
		require.Empty(t, decimal.FindAllString(out, -1), "%s labels a binary size in decimal units", name)
	}
}
