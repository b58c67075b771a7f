package report

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// WriteSuiteText writes a suite the way the reports print their results:
// a header saying what ran where, then for each section the six tables —
// IOPS, MB/s, mean response time, CPU %, IOPS per %CPU, MB/s per %CPU —
// with data sizes down and patterns across, one table per target.
func WriteSuiteText(w io.Writer, s *result.Suite) error {
	if s == nil || len(s.Results) == 0 {
		return errors.New("report: the suite holds no results")
	}
	for i, r := range s.Results {
		if r == nil {
			return fmt.Errorf("report: result %d is nil", i)
		}
	}
	ew := newErrWriter(w)
	writeSuiteHeader(ew, s)
	n := 0
	for _, sec := range pivot(s.Results) {
		ew.printf("\n%s\n", sec.title)
		if sec.caption != "" {
			ew.printf("%s\n", sec.caption)
		}
		for _, id := range result.ViewSuiteTables {
			m := id.Figure()
			for _, g := range sec.grids {
				n++
				title := fmt.Sprintf("Table %d. %s", n, m.Title)
				if side := g.title(sec); side != "" {
					title += " — " + side
				}
				ew.printf("\n%s\n", title)
				if ew.err == nil {
					ew.err = gridTable(sec, g, m).write(ew.w, "")
				}
			}
		}
	}
	writeFootnotes(ew, s.Results)
	writeFleetHosts(ew, s.Results)
	return ew.err
}

// writeFleetHosts prints, for each point of a fleet suite, Iometer's
// view of it: a row per host and the "All hosts" row.
func writeFleetHosts(ew *errWriter, rs []*result.Result) {
	first := true
	for _, r := range rs {
		if len(r.Hosts) == 0 {
			continue
		}
		if first {
			ew.printf("\nEach point on each host\n")
			first = false
		}
		p := result.PointOf(r)
		what := fmt.Sprintf("%d %s", len(r.Hosts), plural(len(r.Hosts), "host", "hosts"))
		if note := partialNote(r); note != "" {
			what += "; " + note
		}
		ew.printf("\n%s (%s)\n", p.Name, what)
		if ew.err == nil {
			ew.err = writeHostsTable(ew.w, r.Hosts, r)
		}
	}
}

// title is the side a grid's title names: its target, or for a turned
// grid with a single target that target (several are its columns).
func (g *grid) title(sec *section) string {
	if sec.turned {
		if len(g.cols) == 1 {
			return g.cols[0]
		}
		return ""
	}
	return g.side
}

// gridTable lays one metric of one grid out as a text table.
func gridTable(sec *section, g *grid, m result.Figure) *table {
	t := &table{}
	if sec.turned {
		t.align = "ll"
		hdr := []string{"Workload", "Data Size"}
		if len(g.cols) == 1 {
			hdr = append(hdr, m.Short) // the side is in the title
		} else {
			hdr = append(hdr, g.cols...)
		}
		t.add(hdr...)
		for i, r := range g.rows {
			cells := []string{r.labels[0], sizeLabel(g.colSize[i])}
			for j := range g.cols {
				cells = append(cells, cell(m, g.cells[i][j]))
			}
			t.add(cells...)
		}
		return t
	}
	t.align = strings.Repeat("l", len(sec.rowDims))
	var hdr []string
	for _, d := range sec.rowDims {
		hdr = append(hdr, d.header)
	}
	t.add(append(hdr, g.cols...)...)
	for i, r := range g.rows {
		cells := append([]string(nil), r.labels...)
		for j := range g.cols {
			cells = append(cells, cell(m, g.cells[i][j]))
		}
		t.add(cells...)
	}
	return t
}

func writeSuiteHeader(ew *errWriter, s *result.Suite) {
	rs := s.Results
	title := "ioprobe"
	if s.Version != "" {
		title += " " + s.Version
	}
	title += " suite " + s.Suite
	if !s.StartedAt.IsZero() {
		title += ", started " + s.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	ew.printf("%s\n", title)
	kv := &table{align: "ll"}
	if s.Source != "" {
		kv.add("Rebuilds", s.Source)
	}
	kv.add("Points", pointsLine(s))
	for _, kvs := range fleetMeta(s) {
		kv.add(kvs[0], kvs[1])
	}
	fleet := fleetPoints(rs) // fleetMeta named their hosts
	if !fleet {
		var hosts []string
		for _, r := range rs {
			if !slices.Contains(hosts, r.Host.Hostname) {
				hosts = append(hosts, r.Host.Hostname)
			}
		}
		if len(hosts) == 1 {
			kv.add("Host", hostLine(rs[0].Host))
		} else {
			kv.add("Hosts", strings.Join(hosts, ", ")+" (not merged: shown side by side)")
		}
	}
	kv.add("Engine", distinct(rs, func(r *result.Result) string { return engineLine(r.Workload) }))
	kv.add("Time", distinct(rs, func(r *result.Result) string {
		s := "per point: " + seconds(r.Workload.DurationSeconds) + " measured"
		if r.Workload.RampSeconds > 0 {
			return s + " after " + seconds(r.Workload.RampSeconds) + " ramp-up"
		}
		return s + ", no ramp-up"
	}))
	kv.add("Region", distinct(rs, func(r *result.Result) string {
		if r.Workload.RegionBytes > 0 {
			return iec(r.Workload.RegionBytes) + " of each target"
		}
		return "whole target"
	}))
	targets := &table{align: "lllrl"}
	seen := map[string]bool{}
	for _, r := range rs {
		for _, t := range r.Targets {
			if seen[t.Path] {
				continue
			}
			seen[t.Path] = true
			dev := t.Device
			if dev == "" {
				dev = "-"
			}
			targets.add(t.Path, t.Kind, iec(t.SizeBytes), "device "+dev)
		}
	}
	kv.addTable("Targets", targets)
	if m := mergedLine(rs); m != "" && !fleet {
		kv.add("Merged", m)
	}
	if rep := repeatLine(rs); rep != "" {
		kv.add("Repeat", rep)
	}
	if ew.err == nil {
		ew.err = kv.write(ew.w, "")
	}
}

func pointsLine(s *result.Suite) string {
	points := map[string]bool{}
	for _, r := range s.Results {
		points[result.PointOf(r).Key()] = true
	}
	line := fmt.Sprintf("%d %s, %d %s", len(points), plural(len(points), "point", "points"),
		len(s.Results), plural(len(s.Results), "result", "results"))
	if o := s.Options; o != nil && len(o.Cycles) > 0 {
		line += ", cycling " + strings.Join(o.Cycles, " ")
	}
	return line
}

// distinct joins the distinct values of f over rs.
func distinct(rs []*result.Result, f func(r *result.Result) string) string {
	var out []string
	for _, r := range rs {
		if v := f(r); !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return strings.Join(out, "; ")
}

// mergedLine says how many runs and hosts merged results stand for.
func mergedLine(rs []*result.Result) string {
	runs, merged, apart := 0, 0, 0
	var hosts []string
	for _, r := range rs {
		if r.Merged == nil || r.Spread != nil && r.Spread.Source == result.SpreadRepeat && len(r.Merged.Hosts) == 1 {
			continue
		}
		merged++
		runs += r.Merged.Runs
		if r.Merged.Periods > 1 {
			apart++
		}
		for _, h := range r.Merged.Hosts {
			if !slices.Contains(hosts, h) {
				hosts = append(hosts, h)
			}
		}
	}
	if merged == 0 {
		return ""
	}
	slices.Sort(hosts)
	s := fmt.Sprintf("%d %s from %d %s (%s) into %d %s: counts and histograms merged exactly, rates summed over runs that overlapped in time",
		runs, plural(runs, "run", "runs"), len(hosts), plural(len(hosts), "host", "hosts"), strings.Join(hosts, ", "), merged, plural(merged, "result", "results"))
	if apart > 0 {
		s += fmt.Sprintf("; in %d of them the runs did not all overlap: their rates are averaged over time, not summed", apart)
	}
	return s
}

func repeatLine(rs []*result.Result) string {
	n := 0
	for _, r := range rs {
		if r.Spread != nil && r.Spread.Source == result.SpreadRepeat {
			n = max(n, r.Spread.Runs)
		}
	}
	if n < 2 {
		return ""
	}
	return fmt.Sprintf("%d runs per point, merged; IOPS shown ± the run-to-run standard deviation", n)
}

// pointWhere names r's point and side in a note: "random-read-8k on
// /dev/sdb".
func pointWhere(r *result.Result) string {
	p := result.PointOf(r)
	if side := p.Side(); side != "" {
		return p.Name + " on " + side
	}
	return p.Name
}

// othersMark starts a note on a point measured beside other processes'
// load: its CPU figures are the host's, its kernel counts not its own.
const othersMark = "‡"

// othersMeaning says once, under a suite's tables, what a point marked
// othersMark means.
const othersMeaning = "measured beside other processes' load (more than a tenth of the host's CPU or of the device's I/O): its CPU figures are the host's, not ioprobe's alone, and the kernel's counts are not ioprobe's alone"

// othersNote is what others did beside r, when more than a tenth of the
// host's CPU or of the device's I/O, in a line: "others used 1.62 of 2
// CPUs during the window (81.0% of the host's CPU); others did …".
func othersNote(r *result.Result) string {
	cpu, device := result.OthersLoad(r.Host.LogicalCPUs, r.Summary.HostOthers, r.Summary.Device)
	var parts []string
	for _, p := range []string{cpu, device} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "; ")
}

func writeFootnotes(ew *errWriter, rs []*result.Result) {
	busy := false
	var notes []string
	for _, r := range rs {
		where := pointWhere(r)
		if r.Status != "" && r.Status != result.StatusOK {
			msg := string(r.Status)
			if r.Message != "" {
				msg += ": " + r.Message
			}
			notes = append(notes, fmt.Sprintf("* %s: %s", where, msg))
		}
		if note := partialNote(r); note != "" {
			notes = append(notes, fmt.Sprintf("%s %s on %d hosts: %s", partialMark, where, len(r.Hosts), note))
		}
		if n := othersNote(r); n != "" {
			notes = append(notes, othersMark+" "+where+": "+n)
			busy = true
		}
	}
	if busy {
		notes = append(notes, othersMark+" "+othersMeaning)
	}
	for i, n := range notes {
		if i == 0 {
			ew.printf("\n")
		}
		ew.printf("%s\n", n)
	}
}

// fleetMeta is what the header of a fleet suite's report says about
// the fleet: where it ran, the points merged, each failure, each host
// once.
func fleetMeta(s *result.Suite) [][2]string {
	var m [][2]string
	if f := s.Fleet; f != nil {
		line := fmt.Sprintf("target %q on %d %s: every point holds its hosts' runs merged into one result (counts and histograms exactly, rates summed over the hosts' overlapping windows)",
			f.Target, len(f.Hosts), plural(len(f.Hosts), "host", "hosts"))
		if f.Partial {
			line += "; PARTIAL: " + strings.Join(f.FailedHosts, ", ") + " did not complete"
		}
		m = append(m, [2]string{"Fleet", line})
		for _, x := range f.Failures {
			at := x.Point
			if x.Hosts > 0 {
				at += fmt.Sprintf(" on %d %s", x.Hosts, plural(x.Hosts, "host", "hosts"))
			}
			msg := fmt.Sprintf("%s %s at point %s", x.Address, x.State, at)
			if x.Error != "" {
				msg += ": " + x.Error
			}
			m = append(m, [2]string{"Failed", msg + "; the suite stopped there, the points before it are kept"})
		}
	}
	if fleetPoints(s.Results) {
		m = append(m, [2]string{"Hosts", strings.Join(fleetHostNames(s.Results), ", ")})
	}
	return m
}

// fleetPoints says that every result is a fleet point (merged over the
// hosts it carries).
func fleetPoints(rs []*result.Result) bool {
	for _, r := range rs {
		if len(r.Hosts) == 0 {
			return false
		}
	}
	return len(rs) > 0
}

// fleetHostNames names the hosts of fleet points once each, in the order
// of --hosts: by hostname, with the address where hosts share one (one
// machine's network namespaces), by address where none answered.
func fleetHostNames(rs []*result.Result) []string {
	var addrs []string
	name := map[string]string{}
	for _, r := range rs {
		for _, h := range r.Hosts {
			if !slices.Contains(addrs, h.Address) {
				addrs = append(addrs, h.Address)
			}
			if name[h.Address] == "" && h.Identity.Hostname != "" {
				name[h.Address] = h.Identity.Hostname
			}
		}
	}
	shared := map[string]int{}
	for _, a := range addrs {
		if n := name[a]; n != "" {
			shared[n]++
		}
	}
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		switch n := name[a]; {
		case n == "":
			out = append(out, a)
		case shared[n] > 1:
			out = append(out, n+" at "+a)
		default:
			out = append(out, n)
		}
	}
	return out
}
