package report

import (
	"strings"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// singleRun says that a report holds one run of its own (`ioprobe run`,
// or runs merged into one), not points of a suite: its page draws what
// one run has, not the suites' charts of one bar per figure.
func singleRun(rs []*result.Result) bool {
	return len(rs) == 1 && rs[0].Point == nil
}

// runPage lays out the page of one run: its header as the text report's,
// its notes, the text report's tables (figures, response times, CPU,
// what the kernel counted), the latency distribution of its reads and
// writes from the histograms, and its course over the interval
// snapshots.
func (p *page) runPage(r *result.Result) {
	p.Title = "ioprobe report: run"
	if n := r.Workload.Name; n != "" {
		p.Title += " " + n
	}
	p.Meta = runMeta(r)
	p.Notes = notesOf(r)

	sec := &htmlSection{ID: "s1", Key: "run", Title: "Results"}
	figures := &htmlPart{Key: "figures", Title: "I/O rate, throughput and response time"}
	ops := opColumns(r)
	figures.Tables = append(figures.Tables, htmlOf(perfTable(r, ops), "", true))
	if t := deviceTable(r); t != nil {
		figures.Tables = append(figures.Tables, htmlOf(t, "The devices' own latency (measured in the kernel)", false))
	}
	if result.LatencyIntended.In(&r.Summary) {
		figures.Tables = append(figures.Tables, htmlOf(intendedTable(r), "From each I/O's intended start (rate-limited)", false))
	}
	if result.LatencySync.In(&r.Summary) {
		figures.Tables = append(figures.Tables, htmlOf(flushTable(r), "Flushes", false))
	}
	if len(r.Summary.Lines) > 0 {
		figures.Tables = append(figures.Tables, htmlOf(linesTable(r), "Each line of the access specification", true))
	}
	if len(jobsRun(r)) > 0 {
		figures.Tables = append(figures.Tables, htmlOf(jobsTable(r), "Each job", true))
	}
	costs := &htmlPart{Key: "cpu", Title: "Errors, CPU and what the kernel counted"}
	costs.Tables = append(costs.Tables, htmlOf(errorsTable(r), "Errors", false), htmlOf(cpuTable(r), "", false))
	if r.Summary.Device != nil {
		costs.Tables = append(costs.Tables, htmlOf(kernelTable(r, ops), "", false))
	}

	lat := &htmlPart{Key: "latency-distribution", Title: "Latency distribution",
		Intro: "The run's response-time distribution from its histogram: the value below which that share of its I/Os completed."}
	var names []string
	var hs []*result.Histogram
	h := r.Histogram
	if h.Read != nil && h.Write != nil && h.Read.Count() > 0 && h.Write.Count() > 0 {
		names, hs = append(names, "all I/Os", "reads", "writes"), append(hs, h.Combined(), h.Read, h.Write)
	} else if c := h.Combined(); c.Count() > 0 {
		names, hs = append(names, ops[0].name+"s"), append(hs, c)
	}
	if len(hs) > 0 {
		lat.Figures = append(lat.Figures, p.figure(latencyChartOf("Latency distribution", names, hs), "Response time at each percentile."))
	} else {
		lat.Intro = "Nothing completed: no distribution to draw."
	}

	course := &htmlPart{Key: "over-time", Title: "Over time",
		Intro: "The run's interval snapshots (one a second unless --interval says otherwise): a steady line is a steady state; a slope or a sawtooth is what its mean hides."}
	p.overTimeFigures(course, "", []string{"run"}, []*result.Result{r})
	if len(course.Figures) == 0 {
		course.Intro = "Too few interval snapshots to draw a course over time (--interval sets their period)."
	}
	sec.Parts = []*htmlPart{figures, lat, course, costs}
	for _, part := range sec.Parts {
		part.Wide = true
	}
	p.Sections = append(p.Sections, sec)
}

// runMeta is the header of a run's page: the text report's.
func runMeta(r *result.Result) [][2]string {
	m := [][2]string{}
	if !r.StartedAt.IsZero() {
		m = append(m, [2]string{"Started", r.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC")})
	}
	if r.Status != "" && r.Status != result.StatusOK {
		s := strings.ToUpper(string(r.Status))
		if r.Message != "" {
			s += ": " + r.Message
		}
		m = append(m, [2]string{"Status", s})
	}
	if mi := r.Merged; mi != nil {
		m = append(m, [2]string{"Merged", mergeInfoLine(mi)})
	}
	m = append(m, [2]string{"Host", hostLine(r.Host)}, [2]string{"Workload", workloadLine(r.Workload)},
		[2]string{"Engine", engineLine(r.Workload)}, [2]string{"Time", timeLine(r)})
	region := "whole target"
	if r.Workload.RegionBytes > 0 {
		region = iec(r.Workload.RegionBytes) + " of each target"
	}
	m = append(m, [2]string{"Region", region})
	var targets []string
	for _, t := range r.Targets {
		s := t.Path + " (" + t.Kind + ", " + iec(t.SizeBytes)
		if t.Device != "" {
			s += ", device " + t.Device
		}
		if t.Created {
			s += ", created by ioprobe"
		}
		if t.Extended {
			s += ", extended by ioprobe"
		}
		if !t.Direct {
			s += ", NOT O_DIRECT"
		}
		targets = append(targets, s+")")
	}
	if len(targets) > 0 {
		m = append(m, [2]string{"Targets", strings.Join(targets, "; ")})
	}
	return m
}

// htmlOf is a text table as an HTML table: its first row the head when
// head says so, a row of one cell a heading across the table, cells
// aligned right where the text table aligns them so.
func htmlOf(t *table, caption string, head bool) htmlTable {
	ht := htmlTable{Caption: caption}
	width := 0
	for _, r := range t.rows {
		width = max(width, len(r))
	}
	for i, r := range t.rows {
		switch {
		case i == 0 && head:
			ht.Head = append([]string(nil), r...)
			for len(ht.Head) < width {
				ht.Head = append(ht.Head, "")
			}
		case len(r) == 1 && strings.HasPrefix(strings.TrimSpace(r[0]), "WARNING:"):
			// A sentence, under the table rather than across it.
			ht.Notes = append(ht.Notes, strings.TrimSpace(r[0]))
		case i == 0 && len(r) == 1 && ht.Caption == "":
			ht.Caption = r[0] // the text table's title
		case len(r) == 1:
			ht.Rows = append(ht.Rows, []htmlCell{{Text: strings.TrimSpace(r[0]), Span: width}})
		default:
			var cells []htmlCell
			for j, c := range r {
				left := j == 0 || (j < len(t.align) && t.align[j] == 'l')
				cells = append(cells, htmlCell{Text: strings.TrimSpace(c), Num: !left, Wrap: left && j > 0})
			}
			ht.Rows = append(ht.Rows, cells)
		}
	}
	return ht
}
