package report

import (
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ioprobe/ioprobe/internal/textsafe"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// WriteHTML writes one self-contained HTML page (no script, no network:
// inline CSS and SVG) with the reports' figures drawn from the results:
// for each section of the suite, throughput and response time by data
// size per pattern, the IOPS and CPU tables, IOPS and MB/s per %CPU,
// aggregate throughput and latency against workers or targets, targets
// side by side, and each run's latency distribution from its histogram;
// then a table of every run.
//
// Every section and part carries data-section / data-part attributes and
// every chart is an <svg class="chart"> whose drawn values are
// rect.bar, path.line and circle.dot elements, so tests can check that
// nothing is missing or empty.
func WriteHTML(w io.Writer, s *result.Suite) error {
	if s == nil || len(s.Results) == 0 {
		return errors.New("report: nothing to draw")
	}
	for i, r := range s.Results {
		if r == nil {
			return fmt.Errorf("report: result %d is nil", i)
		}
	}
	p := &page{Title: pageTitle(s)}
	rs := expandHosts(s.Results)
	if singleRun(rs) {
		p.runPage(rs[0])
	} else {
		p.Meta = pageMeta(s)
		secs := pivot(rs)
		shortenSides(secs)
		for i, sec := range secs {
			hs := p.section(i, sec)
			p.Sections = append(p.Sections, hs)
		}
		p.Runs = runsTable(rs)
	}
	if st := storageSection(rs); st != nil {
		p.Sections = append(p.Sections, st)
	}
	// Number the figures in reading order, then draw them.
	n := 0
	for _, sec := range p.Sections {
		for _, part := range sec.Parts {
			for i := range part.Figures {
				n++
				f := &part.Figures[i]
				f.chart.id = fmt.Sprintf("fig%d", n)
				f.chart.title = fmt.Sprintf("Figure %d. %s", n, f.chart.title)
				f.ID = f.chart.id
				f.SVG = template.HTML(f.chart.svg())
			}
		}
	}
	p.Footer = "ioprobe"
	if s.Version != "" {
		p.Footer += " " + s.Version
	}
	p.Footer += " — MB is 10^6 bytes; CPU % is summed over the host's logical CPUs, as in the reports."
	// html/template escapes markup, not control characters or bidi
	// overrides (a hostname's ESC reaches a terminal that shows the file,
	// a U+202E reorders the page's text): those are escaped as in every
	// text output.
	return pageTemplate.Execute(textsafe.NewWriter(w), p)
}

type page struct {
	Title string
	Meta  [][2]string
	// Notes follow the header: what a single run's result notes.
	Notes    []string
	Sections []*htmlSection
	// Runs is the table of every run (none on a single run's page,
	// whose tables hold its figures).
	Runs   htmlTable
	Footer string
}

type htmlSection struct {
	ID, Key, Title, Caption string
	Parts                   []*htmlPart
}

type htmlPart struct {
	Key, Title, Intro string
	Wide              bool // takes a whole row (tables, several figures)
	Figures           []htmlFigure
	Tables            []htmlTable
}

type htmlFigure struct {
	ID      string
	SVG     template.HTML
	Caption string
	chart   *chart
}

type htmlTable struct {
	Caption string
	Head    []string
	Rows    [][]htmlCell
	// Notes follow the table: what its short cells mark ("†", "failed").
	Notes []string
}

type htmlCell struct {
	Text string
	Num  bool
	// Span, when set, makes the cell a heading across that many columns.
	Span int
	// Wrap lets a cell of words wrap on a narrow screen.
	Wrap bool
}

// shortenSides names targets in titles and legends by their base name
// when that is unambiguous (/data/ssd/probe.dat → probe.dat, /dev/sdb →
// sdb); the page's header lists the full paths.
func shortenSides(secs []*section) {
	full := map[string]bool{}
	for _, sec := range secs {
		for _, g := range sec.grids {
			if sec.turned {
				for _, c := range g.cols {
					full[c] = true
				}
			} else {
				full[g.side] = true
			}
		}
	}
	short := map[string]string{}
	taken := map[string]int{}
	base := func(side string) string {
		host, path, ok := strings.Cut(side, ":")
		if !ok {
			return filepath.Base(side)
		}
		return host + ":" + filepath.Base(path)
	}
	for side := range full {
		if side != "" {
			taken[base(side)]++
		}
	}
	for side := range full {
		short[side] = side
		if side != "" && taken[base(side)] == 1 {
			short[side] = base(side)
		}
	}
	for _, sec := range secs {
		for _, g := range sec.grids {
			g.side = short[g.side]
			if sec.turned {
				for i := range g.cols {
					g.cols[i] = short[g.cols[i]]
				}
			}
		}
	}
}

func pageTitle(s *result.Suite) string {
	if s.Suite != "" {
		return "ioprobe report: suite " + s.Suite
	}
	return "ioprobe report"
}

func pageMeta(s *result.Suite) [][2]string {
	rs := s.Results
	var m [][2]string
	add := func(k, v string) {
		if v != "" {
			m = append(m, [2]string{k, v})
		}
	}
	add("Rebuilds", s.Source)
	if !s.StartedAt.IsZero() {
		add("Started", s.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	add("Points", pointsLine(s))
	if fm := fleetMeta(s); len(fm) > 0 {
		m = append(m, fm...)
	} else {
		add("Hosts", distinct(rs, func(r *result.Result) string { return hostLine(r.Host) }))
	}
	var targets []string
	for _, r := range rs {
		for _, x := range r.Targets {
			if t := x.Path + " (" + x.Kind + ")"; indexOf(targets, t) < 0 {
				targets = append(targets, t)
			}
		}
	}
	add("Targets", strings.Join(targets, ", "))
	add("Engine", distinct(rs, func(r *result.Result) string { return engineLine(r.Workload) }))
	add("Time", distinct(rs, func(r *result.Result) string {
		if r.Workload.RampSeconds == 0 {
			return seconds(r.Workload.DurationSeconds) + " measured per point, no ramp-up"
		}
		return seconds(r.Workload.DurationSeconds) + " measured per point after " + seconds(r.Workload.RampSeconds) + " ramp-up"
	}))
	add("Merged", mergedLine(rs))
	add("Repeat", repeatLine(rs))
	return m
}

func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	out := b.String()
	if len(out) > 48 {
		out = out[:48]
	}
	return strings.Trim(out, "-")
}

// figure wraps a chart; WriteHTML numbers and draws it once the page is
// laid out.
func (p *page) figure(c *chart, caption string) htmlFigure {
	return htmlFigure{Caption: caption, chart: c}
}

// figures wraps charts of one caption.
func (p *page) figures(cs []*chart, caption string) []htmlFigure {
	var out []htmlFigure
	for _, c := range cs {
		out = append(out, p.figure(c, caption))
	}
	return out
}

// xLabel names the dimension rows vary by.
func xLabel(ds []dim) string {
	var parts []string
	for _, d := range ds {
		switch d.key {
		case "size":
			parts = append(parts, "Data size")
		case "qd":
			parts = append(parts, "Outstanding I/Os per worker per target")
		case "workers":
			parts = append(parts, "Workers")
		case "targets":
			parts = append(parts, "Targets at once")
		case "hosts":
			parts = append(parts, "Hosts at once")
		}
	}
	return strings.Join(parts, " · ")
}

func rowLabel(r row) string { return strings.Join(r.labels, " · ") }

// rowLegend names a row in a legend, with its units: "4 KiB", "QD 4",
// "8 workers", "2 targets".
func rowLegend(ds []dim, r row) string {
	var parts []string
	for i, d := range ds {
		v := r.key[i]
		switch d.key {
		case "size":
			parts = append(parts, sizeLabel(v))
		case "qd":
			parts = append(parts, "QD "+itoa(v))
		case "workers":
			parts = append(parts, itoa(v)+" "+plural(int(v), "worker", "workers"))
		case "targets":
			parts = append(parts, itoa(v)+" "+plural(int(v), "target", "targets"))
		case "hosts":
			parts = append(parts, itoa(v)+" "+plural(int(v), "host", "hosts"))
		}
	}
	return strings.Join(parts, ", ")
}

// fig is a figure's catalogue entry.
func fig(id result.FigureID) result.Figure { return id.Figure() }

// value is a figure of r in its shown unit, NaN where nothing was measured.
func value(m result.Figure, r *result.Result) float64 {
	if r == nil {
		return math.NaN()
	}
	return m.Shown(&r.Summary)
}

// byRow charts one metric of a grid: rows along x, a series per column.
func byRow(sec *section, g *grid, m result.Figure, what string) *chart {
	c := &chart{title: what, xLabel: xLabel(sec.rowDims), yLabel: m.Axis, unit: m.Unit.Symbol(), decimals: m.Unit.Decimals(),
		lines: sec.rowDims[0].key != "size"}
	if g.side != "" {
		c.title += " — " + g.side
	}
	for _, r := range g.rows {
		c.cats = append(c.cats, rowLabel(r))
	}
	for j, col := range g.cols {
		s := series{name: col}
		for i := range g.rows {
			s.values = append(s.values, value(m, g.cells[i][j]))
		}
		c.series = append(c.series, s)
	}
	return c
}

// lineAxis is the row dimension a line chart runs along when rows vary
// by several (-1: they vary by one, or the chart has bars): hosts, as
// esx35 Figure 5 adds machines, else the first. A line through the rows
// in order ("1 · 1", "1 · 2", "2 · 1") would zig-zag between two
// dimensions; each value of the others is a line of its own instead.
func lineAxis(sec *section) int {
	if len(sec.rowDims) < 2 || sec.rowDims[0].key == "size" {
		return -1
	}
	for i, d := range sec.rowDims {
		if d.key == "hosts" {
			return i
		}
	}
	return 0
}

// perLine says what a scaling chart's lines stand for: a pattern each,
// or where rows vary by several dimensions a value of the others each
// ("one line per number of workers").
func perLine(sec *section) string {
	ax := lineAxis(sec)
	if ax < 0 {
		return "one line per pattern"
	}
	var names []string
	for i, d := range sec.rowDims {
		if i != ax {
			names = append(names, strings.ToLower(xLabel([]dim{d})))
		}
	}
	return "one chart per pattern, one line per number of " + strings.Join(names, " and ")
}

// rowCharts charts one metric of a grid: byRow, or where rows vary by
// several dimensions (a fleet suite's workers and hosts) a chart per
// column with lineAxis along x and a line per value of the others.
func rowCharts(sec *section, g *grid, m result.Figure, what string) []*chart {
	ax := lineAxis(sec)
	if ax < 0 {
		return []*chart{byRow(sec, g, m, what)}
	}
	axis := sec.rowDims[ax]
	others := append(append([]dim(nil), sec.rowDims[:ax]...), sec.rowDims[ax+1:]...)
	split := func(r row) (int64, []int64) {
		return r.key[ax], append(append([]int64(nil), r.key[:ax]...), r.key[ax+1:]...)
	}
	var xs []int64
	var lines [][]int64
	for _, r := range g.rows { // sorted: lines come in order of their values
		x, o := split(r)
		if !slices.Contains(xs, x) {
			xs = append(xs, x)
		}
		if !containsKey(lines, o) {
			lines = append(lines, o)
		}
	}
	slices.Sort(xs)
	var out []*chart
	for j, col := range g.cols {
		c := &chart{title: what + ": " + col, xLabel: xLabel([]dim{axis}), yLabel: m.Axis, unit: m.Unit.Symbol(), decimals: m.Unit.Decimals(), lines: true}
		if g.side != "" {
			c.title += " — " + g.side
		}
		for _, x := range xs {
			c.cats = append(c.cats, axis.format(x))
		}
		for _, o := range lines {
			s := series{name: rowLegend(others, row{key: o}), values: make([]float64, len(xs))}
			for k := range s.values {
				s.values[k] = math.NaN()
			}
			for i, r := range g.rows {
				if x, ro := split(r); equalKey(ro, o) {
					s.values[slices.Index(xs, x)] = value(m, g.cells[i][j])
				}
			}
			c.series = append(c.series, s)
		}
		if c.hasData() {
			out = append(out, c)
		}
	}
	return out
}

// sideBySide charts one pattern of every grid: rows along x, a series per
// target (esx35 Figures 1–4 draw protocols this way).
func sideBySide(sec *section, col string, m result.Figure, what string) *chart {
	// Over rows of several dimensions, bars: a line would zig-zag.
	c := &chart{title: what + ": " + col, xLabel: xLabel(sec.rowDims), yLabel: m.Axis, unit: m.Unit.Symbol(), decimals: m.Unit.Decimals(),
		lines: sec.rowDims[0].key != "size" && len(sec.rowDims) == 1}
	var keys [][]int64
	for _, g := range sec.grids {
		for _, r := range g.rows {
			if !containsKey(keys, r.key) {
				keys = append(keys, r.key)
				c.cats = append(c.cats, rowLabel(r))
			}
		}
	}
	for _, g := range sec.grids {
		j := indexOf(g.cols, col)
		s := series{name: g.side}
		for _, k := range keys {
			v := math.NaN()
			for i, r := range g.rows {
				if j >= 0 && equalKey(r.key, k) {
					v = value(m, g.cells[i][j])
				}
			}
			s.values = append(s.values, v)
		}
		c.series = append(c.series, s)
	}
	return c
}

// latencyChart draws the latency distribution of each result as a
// percentile curve (HdrHistogram's "nines" axis), on a log scale.
func latencyChart(title string, names []string, rs []*result.Result) *chart {
	hs := make([]*result.Histogram, len(rs))
	for i, r := range rs {
		hs[i] = r.Histogram.Combined()
	}
	return latencyChartOf(title, names, hs)
}

// latencyChartOf draws each histogram of hs as a percentile curve.
func latencyChartOf(title string, names []string, hs []*result.Histogram) *chart {
	c := &chart{title: title, xLabel: "Percentile (log scale of 1 − p)", yLabel: "Response time (ms, log scale)", lines: true, logY: true,
		unit: "ms", decimals: 3}
	maxNines := 0.0
	for i := range hs {
		if n := hs[i].Count(); n > 0 {
			maxNines = math.Max(maxNines, math.Min(math.Floor(math.Log10(float64(n))), 5))
		}
	}
	maxNines = math.Max(maxNines, 1)
	for x := 0.0; x <= maxNines+1e-9; x += 0.05 {
		c.x = append(c.x, x)
	}
	labels := []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%"}
	for n := 0; n <= int(maxNines); n++ {
		c.xTicks = append(c.xTicks, tick{float64(n), labels[n]})
	}
	for i, h := range hs {
		s := series{name: names[i]}
		for _, x := range c.x {
			q := 1 - math.Pow(10, -x)
			v := math.NaN()
			// Beyond 1/count the histogram has nothing to say.
			if h.Count() > 0 && (1-q)*float64(h.Count()) >= 1-1e-9 {
				v = h.Quantile(q) / 1e6
			}
			s.values = append(s.values, v)
		}
		c.series = append(c.series, s)
	}
	return c
}

const overTimeIntro = "Each run's interval snapshots (one a second unless --interval says otherwise): a steady line is a steady state; a slope or a sawtooth is what the run's mean hides."

// minIntervals is how many interval snapshots a run needs before its
// course over time is drawn: with fewer, a line says nothing a bar does not.
const minIntervals = 3

// overTimeChart draws one figure of each run's interval snapshots against
// the time since measurement started: a flat line is a steady state; a
// slope or a sawtooth is what a mean hides (a cache filling, an SSD
// collecting garbage, a throttled volume). With one run, latency is drawn
// as its mean and p99 together; with several, each run's p99.
func overTimeChart(title string, latency bool, names []string, rs []*result.Result) *chart {
	c := &chart{title: title, xLabel: "Time since the start of measurement (s)", lines: true, xUnit: " s"}
	rate, meanF, p99F := fig(result.FigIOPS), fig(result.FigLatencyMean), fig(result.FigLatencyP99)
	if latency {
		c.yLabel, c.unit, c.decimals = result.LatencyAll.Title()+" ("+meanF.Unit.Symbol()+")", meanF.Unit.Symbol(), meanF.Unit.Decimals()
	} else {
		c.yLabel, c.unit = rate.Title, rate.Unit.Symbol()
	}
	end := 0.0
	for i, r := range rs {
		var xs []float64
		iops, mean, p99 := series{name: names[i]}, series{name: names[i] + " " + meanF.Stat.Short()}, series{name: names[i] + " " + p99F.Stat.Short()}
		for j := range r.Intervals {
			iv := &r.Intervals[j]
			xs = append(xs, iv.TSeconds)
			end = math.Max(end, iv.TSeconds)
			n := rate.Interval(iv)
			iops.values = append(iops.values, n)
			mean.values = append(mean.values, ms(meanF.Interval(iv), n))
			p99.values = append(p99.values, ms(p99F.Interval(iv), n))
		}
		iops.x, mean.x, p99.x = xs, xs, xs
		switch {
		case !latency:
			c.series = append(c.series, iops)
		case len(rs) == 1:
			c.series = append(c.series, mean, p99)
		default:
			p99.name = names[i]
			c.series = append(c.series, p99)
		}
	}
	if latency && len(rs) > 1 {
		c.title += " (p99)"
	}
	step := niceStep(end / 6)
	for v := 0.0; v <= end+step/2; v += step {
		c.xTicks = append(c.xTicks, tick{v, axisNumber(v, step)})
	}
	return c
}

// ms converts an interval's latency to milliseconds; an interval in
// which nothing completed has no latency to draw.
func ms(seconds, iops float64) float64 {
	if iops <= 0 {
		return math.NaN()
	}
	return seconds * 1e3
}

// overTimeFigures adds the course over time of the runs that have enough
// interval snapshots: their I/O rate and their response time.
func (p *page) overTimeFigures(part *htmlPart, what string, names []string, rs []*result.Result) {
	var keep []string
	var kept []*result.Result
	for i, r := range rs {
		if r != nil && len(r.Intervals) >= minIntervals {
			keep, kept = append(keep, names[i]), append(kept, r)
		}
	}
	if len(kept) == 0 {
		return
	}
	part.Figures = append(part.Figures,
		p.figure(overTimeChart("I/O rate over time"+what, false, keep, kept), "I/O operations per second in each interval of the measured run."),
		p.figure(overTimeChart("Response time over time"+what, true, keep, kept), "Response time in each interval (ms): completions in that interval only."))
}

func (p *page) section(i int, sec *section) *htmlSection {
	hs := &htmlSection{ID: fmt.Sprintf("s%d", i+1), Key: slug(sec.title), Title: sec.title, Caption: sec.caption}
	if hs.Title == "" {
		hs.Title = "Results"
	}
	if sec.turned {
		p.turnedParts(hs, sec)
		return hs
	}
	scaling := sec.rowDims[0].key != "size"
	var tput, resp, eff, tables, scale, sides, lat, course htmlPart
	tput = htmlPart{Key: "throughput", Title: "Throughput by data size per pattern"}
	resp = htmlPart{Key: "response-time", Title: "Response time by data size"}
	eff = htmlPart{Key: "efficiency", Title: "CPU efficiency: IOPS per %CPU and MB/s per %CPU"}
	tables = htmlPart{Key: "tables", Title: "IOPS and CPU tables", Intro: tablesIntro(sec.results)}
	against := xLabel(sec.rowDims)
	if ax := lineAxis(sec); ax >= 0 {
		against = xLabel(sec.rowDims[ax : ax+1])
	}
	scale = htmlPart{Key: "scaling", Title: "Aggregate throughput and latency against " + strings.ToLower(against)}
	lat = htmlPart{Key: "latency-distribution", Title: "Latency distribution of each run",
		Intro: "Each curve is one run's response-time distribution from its histogram: the value below which that share of its I/Os completed."}
	sides = htmlPart{Key: "side-by-side", Title: "Targets side by side"}
	course = htmlPart{Key: "over-time", Title: "Over time", Intro: overTimeIntro}
	for _, g := range sec.grids {
		if scaling {
			scale.Figures = append(scale.Figures,
				p.figures(rowCharts(sec, g, fig(result.FigMBPerSecond), "Aggregate throughput"), "Throughput (MB/s, 10^6 bytes) against "+strings.ToLower(against)+", "+perLine(sec)+".")...)
			scale.Figures = append(scale.Figures,
				p.figures(rowCharts(sec, g, fig(result.FigIOPS), "Aggregate I/O rate"), "I/O operations per second, all workers and targets together.")...)
			scale.Figures = append(scale.Figures,
				p.figures(rowCharts(sec, g, fig(result.FigLatencyMean), "Mean response time"), "Mean response time of every I/O (ms).")...)
		} else {
			tput.Figures = append(tput.Figures, p.figure(byRow(sec, g, fig(result.FigMBPerSecond), "Throughput by data size"), "Throughput (MB/s, 10^6 bytes) for each data size, one bar per pattern."))
			resp.Figures = append(resp.Figures, p.figure(byRow(sec, g, fig(result.FigLatencyMean), "Mean response time by data size"), "Mean response time (ms) for each data size."))
		}
		eff.Figures = append(eff.Figures,
			p.figures(rowCharts(sec, g, fig(result.FigIOPSPerCPU), "I/O rate efficiency"), "I/O operations per second per percent of host CPU (summed over CPUs).")...)
		eff.Figures = append(eff.Figures,
			p.figures(rowCharts(sec, g, fig(result.FigMBPerSecPerCPU), "Throughput efficiency"), "MB/s per percent of host CPU (summed over CPUs).")...)
		for _, id := range result.ViewHTMLTables {
			tables.Tables = append(tables.Tables, gridHTML(sec, g, fig(id)))
		}
		for j, col := range g.cols {
			var names []string
			var rs []*result.Result
			for i, r := range g.rows {
				if c := g.cells[i][j]; c != nil && result.Value(result.FigOps, &c.Summary) > 0 {
					names = append(names, rowLegend(sec.rowDims, r))
					rs = append(rs, c)
				}
			}
			if len(rs) == 0 {
				continue // nothing completed: no distribution to draw
			}
			what := ": " + col
			if g.side != "" {
				what += " — " + g.side
			}
			lat.Figures = append(lat.Figures, p.figure(latencyChart("Latency distribution"+what, names, rs), "Response time at each percentile, one curve per run."))
			p.overTimeFigures(&course, what, names, rs)
		}
	}
	if len(sec.grids) > 1 {
		var cols []string
		for _, g := range sec.grids {
			for _, c := range g.cols {
				if indexOf(cols, c) < 0 {
					cols = append(cols, c)
				}
			}
		}
		for _, col := range cols {
			sides.Figures = append(sides.Figures,
				p.figure(sideBySide(sec, col, fig(result.FigMBPerSecond), "Throughput"), "Throughput (MB/s) of each target, "+col+"."),
				p.figure(sideBySide(sec, col, fig(result.FigLatencyMean), "Mean response time"), "Mean response time (ms) of each target, "+col+"."))
		}
	}
	for _, part := range []*htmlPart{&tput, &resp, &scale, &tables, &eff, &sides, &course, &lat} {
		if len(part.Figures)+len(part.Tables) > 0 {
			hs.Parts = append(hs.Parts, part)
		}
	}
	markWide(hs.Parts)
	return hs
}

// turnedParts draws a section whose workloads each ran once per target
// (the business workloads): bars per workload, a bar per target.
func (p *page) turnedParts(hs *htmlSection, sec *section) {
	g := sec.grids[0]
	bars := func(m result.Figure, what string) *chart {
		c := &chart{title: what, xLabel: "Workload", yLabel: m.Axis, unit: m.Unit.Symbol(), decimals: m.Unit.Decimals()}
		if len(g.cols) == 1 {
			c.title += " — " + g.cols[0]
		}
		for _, r := range g.rows {
			c.cats = append(c.cats, r.labels[0])
		}
		for j, side := range g.cols {
			s := series{name: side}
			if side == "" {
				s.name = m.Short
			}
			for i := range g.rows {
				s.values = append(s.values, value(m, g.cells[i][j]))
			}
			c.series = append(c.series, s)
		}
		return c
	}
	tput := &htmlPart{Key: "throughput", Title: "Throughput per workload"}
	tput.Figures = append(tput.Figures,
		p.figure(bars(fig(result.FigIOPS), "I/O rate per workload"), "I/O operations per second of each workload."),
		p.figure(bars(fig(result.FigMBPerSecond), "Throughput per workload"), "Throughput (MB/s, 10^6 bytes) of each workload."))
	resp := &htmlPart{Key: "response-time", Title: "Response time per workload"}
	resp.Figures = append(resp.Figures, p.figure(bars(fig(result.FigLatencyMean), "Mean response time per workload"), "Mean response time (ms) of each workload."))
	tables := &htmlPart{Key: "tables", Title: "IOPS and CPU tables", Intro: tablesIntro(sec.results)}
	for _, id := range result.ViewHTMLTables {
		tables.Tables = append(tables.Tables, gridHTML(sec, g, fig(id)))
	}
	eff := &htmlPart{Key: "efficiency", Title: "CPU efficiency: IOPS per %CPU and MB/s per %CPU"}
	eff.Figures = append(eff.Figures,
		p.figure(bars(fig(result.FigIOPSPerCPU), "I/O rate efficiency"), "I/O operations per second per percent of host CPU."),
		p.figure(bars(fig(result.FigMBPerSecPerCPU), "Throughput efficiency"), "MB/s per percent of host CPU."))
	hs.Parts = append(hs.Parts, tput, resp, tables, eff)
	if len(g.cols) > 1 {
		rel := &htmlPart{Key: "side-by-side", Title: "Targets side by side: relative difference",
			Intro: "As the esg report draws it: each target's IOPS relative to " + g.cols[0] + ", (other − base) ÷ base."}
		iops := fig(result.FigIOPS)
		c := &chart{title: iops.Short + " relative to " + g.cols[0], xLabel: "Workload", yLabel: "Difference in " + iops.Short + " (%)", unit: "%", decimals: 1, zeroLine: true}
		for _, r := range g.rows {
			c.cats = append(c.cats, r.labels[0])
		}
		for j := 1; j < len(g.cols); j++ {
			s := series{name: g.cols[j]}
			for i := range g.rows {
				b, o := g.cells[i][0], g.cells[i][j]
				v := math.NaN()
				if b != nil && o != nil && iops.Of(&b.Summary) > 0 {
					v = (iops.Of(&o.Summary) - iops.Of(&b.Summary)) / iops.Of(&b.Summary) * 100
				}
				s.values = append(s.values, v)
			}
			c.series = append(c.series, s)
		}
		// Only workloads measured on the first target and another compare.
		if c.hasData() {
			rel.Figures = append(rel.Figures, p.figure(c, "Positive: more IOPS than "+g.cols[0]+"."))
			hs.Parts = append(hs.Parts, rel)
		}
	}
	lat := &htmlPart{Key: "latency-distribution", Title: "Latency distribution of each run",
		Intro: "Each curve is one run's response-time distribution from its histogram: the value below which that share of its I/Os completed."}
	course := &htmlPart{Key: "over-time", Title: "Over time", Intro: overTimeIntro}
	for j, side := range g.cols {
		var names []string
		var rs []*result.Result
		for i, r := range g.rows {
			if c := g.cells[i][j]; c != nil && result.Value(result.FigOps, &c.Summary) > 0 {
				names = append(names, r.labels[0])
				rs = append(rs, c)
			}
		}
		if len(rs) == 0 {
			continue // nothing completed: no distribution to draw
		}
		what := ""
		if side != "" {
			what = " — " + side
		}
		lat.Figures = append(lat.Figures, p.figure(latencyChart("Latency distribution"+what, names, rs), "Response time at each percentile, one curve per workload."))
		p.overTimeFigures(course, what, names, rs)
	}
	if len(course.Figures) > 0 {
		hs.Parts = append(hs.Parts, course)
	}
	if len(lat.Figures) > 0 {
		hs.Parts = append(hs.Parts, lat)
	}
	markWide(hs.Parts)
}

// tablesIntro says above a section's tables what their marks stand for:
// partial fleet points, and CPU figures measured beside others' load.
func tablesIntro(rs []*result.Result) string {
	intro := partialIntro(rs)
	for _, r := range rs {
		if othersNote(r) != "" {
			if intro != "" {
				intro += " "
			}
			return intro + othersMark + " " + othersMeaning + " (how much: under the table of every run)."
		}
	}
	return intro
}

// partialIntro says, under the tables, which of rs are partial fleet
// points (their cells end in partialMark) and which hosts they hold.
func partialIntro(rs []*result.Result) string {
	var notes []string
	for _, r := range rs {
		if note := partialNote(r); note != "" {
			notes = append(notes, partialMark+" "+result.PointOf(r).Name+fmt.Sprintf(" on %d hosts: ", len(r.Hosts))+note+".")
		}
	}
	return strings.Join(notes, " ")
}

// markWide gives parts with tables or several figures a row of their own;
// single figures sit side by side.
func markWide(parts []*htmlPart) {
	for _, p := range parts {
		p.Wide = len(p.Tables) > 0 || len(p.Figures) > 1
	}
}

// gridHTML is one of the reports' tables.
func gridHTML(sec *section, g *grid, m result.Figure) htmlTable {
	t := gridTable(sec, g, m)
	ht := htmlTable{Caption: m.Title}
	if side := g.title(sec); side != "" {
		ht.Caption += " — " + side
	}
	labels := len(sec.rowDims)
	if sec.turned {
		labels = 2
	}
	for i, r := range t.rows {
		if i == 0 {
			ht.Head = r
			continue
		}
		var cells []htmlCell
		for j, c := range r {
			cells = append(cells, htmlCell{Text: c, Num: j >= labels})
		}
		ht.Rows = append(ht.Rows, cells)
	}
	return ht
}

// runsTable lists every result: the figures of result.ViewRunsColumns.
func runsTable(rs []*result.Result) htmlTable {
	t := htmlTable{Head: []string{"Point", "Target", "Host", "Status", "Runs"}}
	for _, id := range result.ViewRunsColumns {
		t.Head = append(t.Head, fig(id).Head)
	}
	for _, r := range rs {
		p := result.PointOf(r)
		n := 1
		if r.Merged != nil {
			n = r.Merged.Runs
		}
		status := string(r.Status)
		if status == "" {
			status = "-"
		}
		if note := partialNote(r); note != "" {
			status += " " + partialMark
		}
		row := []htmlCell{{Text: p.Name}, {Text: p.Side()}, {Text: r.Host.Hostname}, {Text: status}, {Text: num(float64(n), 0), Num: true}}
		for _, id := range result.ViewRunsColumns {
			f := fig(id)
			c := htmlCell{Text: num(f.Shown(&r.Summary), f.Unit.Decimals()), Num: true}
			if id == result.ViewSpreadShown {
				c.Text = cell(f, r)
			}
			row = append(row, c)
		}
		t.Rows = append(t.Rows, row)
	}
	t.Notes = runNotes(rs)
	return t
}

// runNotes say below the table of every run what its Status column
// only marks: a run's message, which hosts a partial fleet point holds,
// and each host's error.
func runNotes(rs []*result.Result) []string {
	busy := false
	var notes []string
	for _, r := range rs {
		where := pointWhere(r)
		if r.Status != "" && r.Status != result.StatusOK && r.Message != "" {
			notes = append(notes, where+": "+string(r.Status)+": "+r.Message)
		}
		if note := partialNote(r); note != "" {
			notes = append(notes, partialMark+" "+where+fmt.Sprintf(" on %d hosts: ", len(r.Hosts))+note)
		}
		for _, e := range hostErrors(r.Hosts) {
			notes = append(notes, where+": "+e)
		}
		if n := othersNote(r); n != "" {
			notes = append(notes, othersMark+" "+where+": "+n)
			busy = true
		}
	}
	if busy {
		notes = append(notes, othersMark+" "+othersMeaning)
	}
	return notes
}

func indexOf(v []string, s string) int {
	for i, x := range v {
		if x == s {
			return i
		}
	}
	return -1
}

func equalKey(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func containsKey(keys [][]int64, k []int64) bool {
	for _, x := range keys {
		if equalKey(x, k) {
			return true
		}
	}
	return false
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<title>{{.Title}}</title>
<style>
*, *::before, *::after { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: #1a1a1a; margin: 0 auto; max-width: 1560px; padding: 16px 28px; overflow-wrap: break-word; }
h1 { font-size: 24px; margin: 8px 0 12px; overflow-wrap: anywhere; }
h2 { font-size: 20px; margin: 36px 0 4px; padding-top: 12px; border-top: 2px solid #0072B2; }
h3 { font-size: 16px; margin: 22px 0 6px; color: #333; }
p.caption, p.intro, p.note { color: #444; margin: 4px 0 10px; }
div.notes { border-left: 4px solid #D55E00; background: #fdf3ea; padding: 6px 12px; margin: 14px 0; }
div.notes p.note { color: #222; margin: 4px 0; }
div.tbl { display: inline-block; vertical-align: top; max-width: 100%; margin: 8px 24px 16px 0; }
div.scroll { max-width: 100%; overflow-x: auto; }
table { border-collapse: collapse; }
p.tcaption { font-weight: 600; margin: 0; padding: 4px 0; }
th, td { padding: 3px 8px; border-bottom: 1px solid #ddd; text-align: left; white-space: nowrap; }
th { background: #f2f5f8; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.sub { font-weight: 600; background: #fafbfc; }
td.wrap { white-space: normal; min-width: 12em; }
table.meta { margin: 8px 0 16px; }
table.meta th { background: none; font-weight: 600; border: none; padding: 1px 12px 1px 0; vertical-align: top; }
table.meta td { border: none; padding: 1px 0; white-space: normal; overflow-wrap: anywhere; }
nav ul { margin: 6px 0; padding-left: 20px; }
.parts { display: flex; flex-wrap: wrap; column-gap: 20px; }
.part { flex: 1 1 560px; min-width: 0; max-width: 100%; }
.part:not(.wide) { max-width: 762px; }
.part.wide { flex-basis: 100%; }
.figures { display: flex; flex-wrap: wrap; gap: 12px 20px; }
figure { margin: 0; flex: 1 1 560px; min-width: 0; max-width: 762px; }
figcaption { color: #555; font-size: 12.5px; max-width: 740px; margin-top: 2px; }
svg.chart { display: block; background: #fff; border: 1px solid #e3e3e3; max-width: 100%; height: auto; }
svg .title { font-size: 14px; font-weight: 600; }
svg .tick { font-size: 11px; fill: #333; }
svg .tick.y { text-anchor: end; }
svg .tick.x { text-anchor: middle; }
svg .x-label, svg .y-label { font-size: 12px; fill: #222; text-anchor: middle; }
svg .legend-item { font-size: 12px; fill: #222; }
svg .grid { stroke: #e8e8e8; stroke-width: 1; }
svg .axis { stroke: #444; stroke-width: 1; }
svg .line { fill: none; stroke-width: 2.2; }
svg .empty { font-size: 16px; fill: #b00; text-anchor: middle; }
footer { margin: 40px 0 12px; color: #666; font-size: 12px; }
@media (max-width: 640px) {
  body { padding: 10px 12px; }
  h1 { font-size: 20px; }
  h2 { font-size: 18px; margin-top: 28px; }
  th, td { padding: 3px 6px; }
  div.tbl { margin-right: 0; }
  table.meta th { padding-right: 8px; }
}
@media print { h2 { break-before: page; } figure { break-inside: avoid; } div.scroll { overflow: visible; } }
</style>
</head>
<body>
<header>
<h1>{{.Title}}</h1>
<table class="meta">{{range .Meta}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>{{end}}</table>
{{if .Notes}}<div class="notes">{{range .Notes}}<p class="note">{{.}}</p>{{end}}</div>
{{end}}{{if or (gt (len .Sections) 1) .Runs.Rows}}<nav><ul>{{range .Sections}}<li><a href="#{{.ID}}">{{.Title}}</a></li>{{end}}{{if .Runs.Rows}}<li><a href="#runs">Every run</a></li>{{end}}</ul></nav>
{{end}}</header>
{{range .Sections}}
<section class="suite-section" id="{{.ID}}" data-section="{{.Key}}">
<h2>{{.Title}}</h2>
{{if .Caption}}<p class="caption">{{.Caption}}</p>{{end}}
<div class="parts">
{{range .Parts}}<section class="part{{if .Wide}} wide{{end}}" data-part="{{.Key}}">
<h3>{{.Title}}</h3>
{{if .Intro}}<p class="intro">{{.Intro}}</p>{{end}}
{{if .Tables}}<div class="tables">{{range .Tables}}{{template "table" .}}{{end}}</div>{{end}}
{{if .Figures}}<div class="figures">{{range .Figures}}<figure id="{{.ID}}-figure">{{.SVG}}<figcaption>{{.Caption}}</figcaption></figure>{{end}}</div>{{end}}
</section>
{{end}}</div>
</section>
{{end}}{{if .Runs.Rows}}
<section class="suite-section" id="runs" data-section="runs">
<h2>Every run</h2>
<section class="part wide" data-part="runs">
{{template "table" .Runs}}
</section>
</section>
{{end}}<footer>{{.Footer}}</footer>
</body>
</html>
{{define "table"}}<div class="tbl">{{if .Caption}}<p class="tcaption">{{.Caption}}</p>{{end}}<div class="scroll"><table>{{if .Head}}<thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead>{{end}}<tbody>{{range .Rows}}<tr>{{range .}}{{if .Span}}<td class="sub" colspan="{{.Span}}">{{.Text}}</td>{{else}}<td{{if .Num}} class="num"{{else if .Wrap}} class="wrap"{{end}}>{{.Text}}</td>{{end}}{{end}}</tr>{{end}}</tbody></table></div>{{range .Notes}}
<p class="note">{{.}}</p>{{end}}</div>{{end}}`))
