package report

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

var htmlOut = flag.String("html-out", "", "also write the fixtures' HTML reports to this directory (to look at them)")

// node is a parsed element.
type node struct {
	name     string
	attr     map[string]string
	children []*node
	text     string
}

func (n *node) walk(f func(n *node)) {
	f(n)
	for _, c := range n.children {
		c.walk(f)
	}
}

func (n *node) all(name, class string) []*node {
	var out []*node
	n.walk(func(c *node) {
		if c.name == name && (class == "" || hasClass(c, class)) {
			out = append(out, c)
		}
	})
	return out
}

func hasClass(n *node, class string) bool {
	for _, c := range strings.Fields(n.attr["class"]) {
		if c == class {
			return true
		}
	}
	return false
}

func (n *node) allText() string {
	var b strings.Builder
	n.walk(func(c *node) { b.WriteString(c.text) })
	return b.String()
}

// parseHTML reads the page as XML: WriteHTML writes well-formed markup, so
// a page that does not parse is a defect too.
func parseHTML(t *testing.T, page []byte) *node {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(page))
	d.Strict = true
	d.Entity = xml.HTMLEntity
	root := &node{name: "#root"}
	stack := []*node{root}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "the page is not well-formed")
		switch tok := tok.(type) {
		case xml.StartElement:
			n := &node{name: tok.Name.Local, attr: map[string]string{}}
			for _, a := range tok.Attr {
				n.attr[a.Name.Local] = a.Value
			}
			top := stack[len(stack)-1]
			top.children = append(top.children, n)
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			top := stack[len(stack)-1]
			top.text += string(tok)
		}
	}
	require.Len(t, stack, 1, "unclosed elements")
	return root
}

// chartProblems lists what is wrong with the page's charts: a chart
// without a title, axis labels, ticks or a legend entry per series, an
// empty chart, or a series with nothing drawn.
func chartProblems(root *node) (charts int, problems []string) {
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	for _, c := range root.all("svg", "chart") {
		charts++
		id := c.attr["id"]
		title := ""
		if ts := c.all("text", "title"); len(ts) == 1 {
			title = strings.TrimSpace(ts[0].allText())
		}
		if title == "" {
			bad("chart %s has no title", id)
		}
		if len(c.all("text", "empty")) > 0 {
			bad("chart %s (%s) is empty", id, title)
			continue
		}
		for _, cls := range []string{"x-label", "y-label"} {
			if l := c.all("text", cls); len(l) != 1 || strings.TrimSpace(l[0].allText()) == "" {
				bad("chart %s (%s) has no %s", id, title, cls)
			}
		}
		if len(c.all("text", "tick")) == 0 {
			bad("chart %s (%s) has no ticks", id, title)
		}
		problems = append(problems, tickOverlaps(c, id, title)...)
		series := c.all("g", "series")
		// A line runs along one dimension: through "1 · 1", "1 · 2",
		// "2 · 1" it would zig-zag between two.
		if len(c.all("path", "line")) > 0 {
			for _, tk := range c.all("text", "tick") {
				if hasClass(tk, "x") && strings.Contains(tk.allText(), " · ") {
					bad("chart %s (%s): a line over the x labels %q, of several dimensions", id, title, tk.allText())
					break
				}
			}
		}
		if len(series) == 0 {
			bad("chart %s (%s) has no series", id, title)
		}
		if n := len(c.all("text", "legend-item")); n != len(series) {
			bad("chart %s (%s): %d legend entries for %d series", id, title, n, len(series))
		}
		for _, s := range series {
			drawn := 0
			for _, bar := range s.all("rect", "bar") {
				if h, err := strconv.ParseFloat(bar.attr["height"], 64); err == nil && h > 0 {
					drawn++
				}
			}
			drawn += len(s.all("circle", "dot"))
			for _, p := range s.all("path", "line") {
				drawn += strings.Count(p.attr["d"], "L")
			}
			if drawn == 0 {
				bad("chart %s (%s): series %q draws nothing", id, title, s.attr["data-series"])
			}
		}
	}
	return charts, problems
}

// tickOverlaps lists x-axis labels of a chart that would run into each
// other, at the widest average character width the ticks' font draws.
func tickOverlaps(c *node, id, title string) []string {
	var out []string
	lastEnd, lastLabel := math.Inf(-1), ""
	for _, tk := range c.all("text", "tick") {
		if !hasClass(tk, "x") {
			continue
		}
		x, err := strconv.ParseFloat(tk.attr["x"], 64)
		if err != nil {
			out = append(out, fmt.Sprintf("chart %s (%s): x tick without a position", id, title))
			continue
		}
		lines := []string{tk.text}
		if spans := tk.all("tspan", ""); len(spans) > 0 {
			lines = nil
			for _, sp := range spans {
				lines = append(lines, sp.text)
			}
		}
		width := 0
		for _, l := range lines {
			width = max(width, len([]rune(strings.TrimSpace(l))))
		}
		half := float64(width) * tickCharW / 2
		if x-half < lastEnd {
			out = append(out, fmt.Sprintf("chart %s (%s): x labels %q and %q overlap", id, title, lastLabel, strings.Join(lines, " ")))
		}
		lastEnd, lastLabel = x+half, strings.Join(lines, " ")
	}
	return out
}

// parts maps each section's data-section to its data-part list.
func parts(root *node) map[string][]string {
	out := map[string][]string{}
	for _, s := range root.all("section", "suite-section") {
		key := s.attr["data-section"]
		out[key] = []string{}
		for _, p := range s.all("section", "part") {
			out[key] = append(out[key], p.attr["data-part"])
		}
	}
	return out
}

func renderHTML(t *testing.T, name string, s *result.Suite) *node {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, WriteHTML(&b, s))
	if *htmlOut != "" {
		require.NoError(t, os.MkdirAll(*htmlOut, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(*htmlOut, name+".html"), b.Bytes(), 0o644))
	}
	require.NotContains(t, b.String(), "<script", "self-contained: no script")
	page := strings.ReplaceAll(b.String(), `xmlns="http://www.w3.org/2000/svg"`, "")
	require.NotRegexp(t, `https?://|src=|@import|url\(`, page, "self-contained: nothing from the network")
	require.NotContains(t, b.String(), "NaN")
	return parseHTML(t, b.Bytes())
}

func TestHTMLSectionsAndCharts(t *testing.T) {
	cases := []struct {
		name  string
		suite *result.Suite
		want  map[string][]string
		// charts per the fixture, so a chart that silently goes away fails.
		charts int
	}{
		{"characterize", characterizeSuite(), map[string][]string{
			"data-size-access-pattern-esx2-tables-2-5-figures": {"throughput", "response-time", "tables", "efficiency", "over-time", "latency-distribution"},
			"runs": {"runs"},
		}, 1 + 1 + 2 + 2*4 + 4},
		{"two_targets", twoTargetSuite(), map[string][]string{
			"data-size-access-pattern-esx2-tables-2-5-figures": {"throughput", "response-time", "tables", "efficiency", "side-by-side", "over-time", "latency-distribution"},
			"runs": {"runs"},
		}, 2*(1+1+2+2*4+4) + 4*2},
		{"business", businessSuite(), map[string][]string{
			"business-workloads-esg-appendix-figures-8-10-13": {"throughput", "response-time", "tables", "efficiency", "over-time", "latency-distribution"},
			"runs": {"runs"},
		}, 2 + 1 + 2 + 2 + 1},
		{"scaling", scalingSuite(), map[string][]string{
			"aggregate-throughput-over-workers-esx35-figure-5": {"scaling", "tables", "efficiency", "over-time", "latency-distribution"},
			"runs": {"runs"},
		}, 3 + 2 + 2*2 + 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := renderHTML(t, c.name, c.suite)
			require.Equal(t, c.want, parts(root))
			n, problems := chartProblems(root)
			require.Empty(t, problems)
			require.Equal(t, c.charts, n)
			for _, f := range root.all("figure", "") {
				require.Len(t, f.all("figcaption", ""), 1)
			}
			// The IOPS table is there, with the report's numbers.
			tables := root.all("table", "")
			require.NotEmpty(t, tables)
			require.Contains(t, root.allText(), "I/O operations per second")
			rows := root.all("tr", "")
			require.Greater(t, len(rows), len(c.suite.Results), "every run is listed")
		})
	}
}

func TestHTMLBusinessSideBySide(t *testing.T) {
	s := businessSuite()
	for _, r := range businessSuite().Results {
		c := *r
		p := *r.Point
		p.Target = "/dev/sdc"
		c.Point = &p
		c.Summary.IOPS *= 1.13
		s.Results = append(s.Results, &c)
	}
	root := renderHTML(t, "business_two_targets", s)
	require.Contains(t, parts(root)["business-workloads-esg-appendix-figures-8-10-13"], "side-by-side")
	_, problems := chartProblems(root)
	require.Empty(t, problems)
	require.Contains(t, root.allText(), "IOPS relative to sdb", "targets by their short names")
}

// The checks must fail on what they exist to catch.
func TestHTMLChecksCatchDefects(t *testing.T) {
	page := func(c *chart) *node {
		return parseHTML(t, []byte("<html><body>"+c.svg()+"</body></html>"))
	}
	good := func() *chart {
		return &chart{id: "x", title: "t", xLabel: "Data size", yLabel: "Throughput (MB/s)", cats: []string{"4KB", "8KB"},
			series: []series{{name: "a", values: []float64{1, 2}}, {name: "b", values: []float64{3, 4}}}}
	}
	n, problems := chartProblems(page(good()))
	require.Equal(t, 1, n)
	require.Empty(t, problems)

	empty := good()
	empty.series = []series{{name: "a", values: []float64{math.NaN(), math.NaN()}}}
	_, problems = chartProblems(page(empty))
	require.Equal(t, []string{"chart x (t) is empty"}, problems)

	hollow := good()
	hollow.series[1].values = []float64{math.NaN(), math.NaN()}
	_, problems = chartProblems(page(hollow))
	require.Equal(t, []string{`chart x (t): series "b" draws nothing`}, problems)

	zigzag := good()
	zigzag.lines, zigzag.cats = true, []string{"1 · 1", "1 · 2"}
	_, problems = chartProblems(page(zigzag))
	require.Equal(t, []string{`chart x (t): a line over the x labels "1 · 1", of several dimensions`}, problems)

	unlabelled := good()
	unlabelled.yLabel = ""
	_, problems = chartProblems(page(unlabelled))
	require.Equal(t, []string{"chart x (t) has no y-label"}, problems)

	// A missing section shows in parts().
	root := parseHTML(t, []byte(`<html><body><section class="suite-section" data-section="a"><section class="part" data-part="tables"></section></section></body></html>`))
	require.Equal(t, map[string][]string{"a": {"tables"}}, parts(root))
}

func TestWrapLegend(t *testing.T) {
	require.Equal(t, []string{"Random Read, 16", "outstanding"}, wrap("Random Read, 16 outstanding", 22, 2))
	require.Equal(t, []string{"4KB"}, wrap("4KB", 22, 2))
	require.Equal(t, []string{"aaaa bbbb", "cccc dddd…"}, wrap("aaaa bbbb cccc dddd eeee", 9, 2))
}

func TestHTMLPlainRuns(t *testing.T) {
	var rs []*result.Result
	for _, f := range fixtures {
		rs = append(rs, f.result())
	}
	root := renderHTML(t, "runs", &result.Suite{Results: rs})
	p := parts(root)
	require.Contains(t, p, "runs")
	require.NotEmpty(t, p["runs"])
	_, problems := chartProblems(root)
	require.Empty(t, problems)
	require.Contains(t, root.allText(), "Merged")
}

func TestCategoryLabelsNeverOverlap(t *testing.T) {
	for _, n := range []int{1, 3, 6, 12, 24, 60} {
		c := &chart{id: "c", title: "labels", xLabel: "Workload", yLabel: "IOPS"}
		s := series{name: "a"}
		for i := range n {
			c.cats = append(c.cats, fmt.Sprintf("Random Read, 32 outstanding, %d workers", i+1))
			s.values = append(s.values, float64(i+1))
		}
		c.series = []series{s}
		root := parseHTML(t, []byte(c.svg()))
		_, problems := chartProblems(root)
		require.Empty(t, problems, "%d categories", n)
		ticks := root.all("text", "tick")
		labelled := 0
		for _, tk := range ticks {
			if hasClass(tk, "x") {
				labelled++
				if spans := tk.all("tspan", ""); strings.Contains(spans[len(spans)-1].text, "…") {
					// A cut label keeps its whole text for the reader.
					require.Len(t, tk.all("title", ""), 1)
				}
			}
		}
		require.GreaterOrEqual(t, labelled, min(n, 6), "%d categories: too few labelled", n)
	}
}

func TestOverTimeTicksNeverOverlap(t *testing.T) {
	r := &result.Result{}
	for i := range 3600 {
		r.Intervals = append(r.Intervals, result.Interval{TSeconds: float64(i + 1), IOPS: 1000, LatencyMeanSeconds: 1e-3, LatencyP99Seconds: 2e-3})
	}
	c := overTimeChart("over time", true, []string{"run"}, []*result.Result{r})
	c.id = "c"
	root := parseHTML(t, []byte(c.svg()))
	_, problems := chartProblems(root)
	require.Empty(t, problems)
	require.Len(t, root.all("g", "series"), 2, "one run: its mean and p99")
}

// fleetWorkersSuiteDoc is a fleet suite that cycled workers (1, 2) and
// hosts (1 to 3): esx35 Figure 5 over machines at two worker counts.
func fleetWorkersSuiteDoc(t *testing.T) *result.Suite {
	t.Helper()
	var rs []*result.Result
	for _, w := range []int{1, 2} {
		for n := 1; n <= 3; n++ {
			p := result.Point{Suite: "scaling", Name: fmt.Sprintf("random-read-8k-w%d", w), Section: workload.SectionScaling, Pattern: "Random Read",
				SizeBytes: 8192, Target: "/dev/sdb", Index: w - 1, Hosts: n}
			hs := fleetHosts(t, p, n)
			for _, h := range hs {
				h.Result.Workload.Workers = w
				h.Result.Summary.IOPS *= float64(w)
			}
			m, _, err := result.MergeFleet(hs)
			require.NoError(t, err)
			rs = append(rs, m)
		}
	}
	return suiteDoc("scaling", rs)
}

// A fleet suite over hosts at several worker counts draws hosts along x
// and a line per worker count (not one line zig-zagging over "Workers ·
// Hosts"); the tables keep both dimensions down their rows.
func TestFleetScalingChartLinePerWorkerCount(t *testing.T) {
	root := renderHTML(t, "fleet_scaling_workers", fleetWorkersSuiteDoc(t))
	_, problems := chartProblems(root)
	require.Empty(t, problems)
	var found bool
	for _, c := range root.all("svg", "chart") {
		title := c.all("text", "title")[0].allText()
		if !strings.HasPrefix(title, "Figure 1. Aggregate throughput") {
			continue
		}
		found = true
		require.Contains(t, title, ": Random Read — All hosts")
		require.Equal(t, "Hosts at once", c.all("text", "x-label")[0].allText())
		var ticks, legend []string
		for _, tk := range c.all("text", "tick") {
			if hasClass(tk, "x") {
				ticks = append(ticks, tk.allText())
			}
		}
		for _, l := range c.all("text", "legend-item") {
			legend = append(legend, l.allText())
		}
		require.Equal(t, []string{"1", "2", "3"}, ticks)
		require.Equal(t, []string{"1 worker", "2 workers"}, legend)
	}
	require.True(t, found, "the aggregate throughput chart")
	require.Contains(t, root.allText(), "one chart per pattern, one line per number of workers")
}
