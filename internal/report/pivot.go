package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// The reports lay their tables out with data sizes down and workloads
// across (esx2 Tables 2–5). A suite's results are pivoted the same way,
// one section at a time: columns are patterns; rows are the data size and
// any other dimension (outstanding I/Os, workers, targets) that varies
// within a column; a dimension that is fixed per column but differs between
// columns (scaling's 64KB and 8KB) joins the column's label. When nothing
// varies within a column (the business workloads), the table turns:
// patterns down, targets across.

// dim is a dimension a table's rows can vary by.
type dim struct {
	key    string
	header string
	value  func(r *result.Result) int64
	format func(v int64) string
	// caption describes a value that holds for the whole section.
	caption func(v int64) string
}

var dims = []dim{
	{"size", "Data Size", func(r *result.Result) int64 { return result.PointOf(r).SizeBytes }, sizeLabel,
		func(v int64) string { return sizeLabel(v) + " transfers" }},
	{"qd", "QD", func(r *result.Result) int64 { return int64(r.Workload.QueueDepth) }, itoa,
		func(v int64) string { return itoa(v) + " outstanding " + plural(int(v), "I/O", "I/Os") }},
	{"workers", "Workers", func(r *result.Result) int64 { return int64(r.Workload.Workers) }, itoa,
		func(v int64) string { return itoa(v) + " " + plural(int(v), "worker", "workers") }},
	{"targets", "Targets", func(r *result.Result) int64 { return int64(max(result.PointOf(r).Targets, 1)) }, itoa,
		func(v int64) string {
			if v == 1 {
				return ""
			}
			return itoa(v) + " targets at once"
		}},
	// A fleet suite's points: on how many hosts at once (esx35 Figure 5
	// when --cycle hosts=… varies it).
	{"hosts", "Hosts", hostsAtOnce, itoa,
		func(v int64) string {
			if v == 1 {
				return ""
			}
			return itoa(v) + " hosts at once"
		}},
}

// hostsAtOnce is the number of hosts a fleet point ran on (1 for a
// result of one host).
func hostsAtOnce(r *result.Result) int64 {
	if n := len(r.Hosts); n > 0 {
		return int64(n)
	}
	return int64(max(result.PointOf(r).Hosts, 1))
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// sizeLabel writes a data size in binary units ("4 KiB", "512 B"); 0 is a
// mixed run of several sizes.
func sizeLabel(v int64) string {
	if v == 0 {
		return "mixed"
	}
	return workload.ShortSize(v)
}

// section is one section of a suite pivoted for tables and charts.
type section struct {
	title string
	// grids holds one table per side (target), or a single turned table.
	grids []*grid
	// turned says patterns run down and sides across.
	turned bool
	// rowDims are the dimensions rows vary by (none when turned).
	rowDims []dim
	caption string
	results []*result.Result
}

// grid is one table: rows × columns of results (nil where not measured).
type grid struct {
	side    string   // the target (or host:target); "" when there is one
	cols    []string // column labels
	rows    []row
	cells   [][]*result.Result // [row][col]
	colSize []int64            // each column's data size when turned
}

type row struct {
	key    []int64
	labels []string
}

// sides labels each result's target: its path, or host:path when the
// results come from several hosts and were not merged.
// A fleet's merged result is the side "All hosts".
func sideOf(r *result.Result, multiHost bool) string {
	s := result.PointOf(r).Side()
	if multiHost {
		if s == "" {
			return hostSide(r)
		}
		return hostSide(r) + ":" + s
	}
	return s
}

func hostSide(r *result.Result) string {
	if len(r.Hosts) > 0 {
		return AllHosts
	}
	return r.Host.Hostname
}

func multiHost(rs []*result.Result) bool {
	hosts := map[string]bool{}
	for _, r := range rs {
		hosts[hostSide(r)] = true
	}
	return len(hosts) > 1
}

// pivot arranges results into sections, in the order they first appear.
func pivot(rs []*result.Result) []*section {
	mh := multiHost(rs)
	var out []*section
	byTitle := map[string]*section{}
	for _, r := range rs {
		t := result.PointOf(r).Section
		s, ok := byTitle[t]
		if !ok {
			s = &section{title: t}
			byTitle[t] = s
			out = append(out, s)
		}
		s.results = append(s.results, r)
	}
	for _, s := range out {
		s.layout(mh)
	}
	return out
}

func (s *section) layout(mh bool) {
	var patterns, sides []string
	for _, r := range s.results {
		p := result.PointOf(r)
		if !slices.Contains(patterns, p.Pattern) {
			patterns = append(patterns, p.Pattern)
		}
		if side := sideOf(r, mh); !slices.Contains(sides, side) {
			sides = append(sides, side)
		}
	}
	// Which dimensions vary within a column (on one side), which are fixed
	// per column, which hold for the whole section.
	perCol := make([]map[string]map[int64]bool, len(dims))
	whole := make([]map[int64]bool, len(dims))
	for i, d := range dims {
		perCol[i] = map[string]map[int64]bool{}
		whole[i] = map[int64]bool{}
		for _, r := range s.results {
			k := sideOf(r, mh) + "\x00" + result.PointOf(r).Pattern
			if perCol[i][k] == nil {
				perCol[i][k] = map[int64]bool{}
			}
			v := d.value(r)
			perCol[i][k][v] = true
			whole[i][v] = true
		}
	}
	var fixed []string
	foldSize := false
	for i, d := range dims {
		varies := false
		for _, vals := range perCol[i] {
			varies = varies || len(vals) > 1
		}
		switch {
		case varies:
			s.rowDims = append(s.rowDims, d)
		case len(whole[i]) == 1:
			for v := range whole[i] {
				if c := d.caption(v); c != "" {
					fixed = append(fixed, c)
				}
			}
		case d.key == "size":
			foldSize = true
		}
	}
	s.caption = strings.Join(fixed, ", ")
	s.titleByHosts()
	if len(s.rowDims) == 0 {
		s.turned = true
		s.grids = []*grid{turnedGrid(s.results, patterns, sides, mh)}
		return
	}
	for _, side := range sides {
		g := &grid{side: side}
		// Columns in the section's pattern order, those this side ran.
		sizeOf := map[string]int64{}
		for _, r := range s.results {
			if sideOf(r, mh) == side {
				p := result.PointOf(r)
				sizeOf[p.Pattern] = p.SizeBytes
			}
		}
		colOf := map[string]int{}
		for _, pat := range patterns {
			size, ok := sizeOf[pat]
			if !ok {
				continue
			}
			colOf[pat] = len(g.cols)
			label := pat
			if foldSize {
				label = sizeLabel(size) + " " + pat
			}
			g.cols = append(g.cols, label)
		}
		rowOf := map[string]int{}
		for _, r := range s.results {
			if sideOf(r, mh) != side {
				continue
			}
			key := make([]int64, len(s.rowDims))
			labels := make([]string, len(s.rowDims))
			for i, d := range s.rowDims {
				key[i] = d.value(r)
				labels[i] = d.format(key[i])
			}
			ks := fmt.Sprint(key)
			if _, ok := rowOf[ks]; !ok {
				rowOf[ks] = len(g.rows)
				g.rows = append(g.rows, row{key: key, labels: labels})
				g.cells = append(g.cells, make([]*result.Result, len(g.cols)))
			}
			c := &g.cells[rowOf[ks]][colOf[result.PointOf(r).Pattern]]
			if *c == nil {
				*c = r
			}
		}
		g.sortRows()
		s.grids = append(s.grids, g)
	}
}

// sortRows orders rows numerically (sizes, then QD, workers, targets).
func (g *grid) sortRows() {
	idx := make([]int, len(g.rows))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return slices.Compare(g.rows[a].key, g.rows[b].key) })
	rows := make([]row, len(idx))
	cells := make([][]*result.Result, len(idx))
	for j, i := range idx {
		rows[j], cells[j] = g.rows[i], g.cells[i]
	}
	g.rows, g.cells = rows, cells
}

// turnedGrid has patterns down and sides across.
func turnedGrid(rs []*result.Result, patterns, sides []string, mh bool) *grid {
	g := &grid{cols: sides}
	for _, p := range patterns {
		g.rows = append(g.rows, row{labels: []string{p}})
		g.cells = append(g.cells, make([]*result.Result, len(sides)))
		g.colSize = append(g.colSize, math.MinInt64)
	}
	for _, r := range rs {
		p := result.PointOf(r)
		i := slices.Index(patterns, p.Pattern)
		j := slices.Index(sides, sideOf(r, mh))
		if g.cells[i][j] == nil {
			g.cells[i][j] = r
		}
		if g.colSize[i] == math.MinInt64 {
			g.colSize[i] = p.SizeBytes
		}
	}
	return g
}

// cell formats one figure in its shown unit to the reports' precision:
// "-" where nothing was measured, the figure the suite tables show with
// its run-to-run spread with that spread ("12,345 ±1.2%"), "*" after a
// run that did not complete cleanly, and partialMark after a fleet point
// some of whose hosts did not complete.
func cell(f result.Figure, r *result.Result) string {
	if r == nil {
		return "-"
	}
	s := num(f.Shown(&r.Summary), f.Unit.Decimals())
	if f.ID == result.ViewSpreadShown && r.Spread != nil && r.Spread.Runs > 1 {
		if st := r.Spread.Stat(f.ID); st != nil {
			if cv, ok := st.Relative(); ok {
				s += " ±" + num(cv*100, 1) + "%"
			}
		}
	}
	if r.Status != "" && r.Status != result.StatusOK {
		s += "*"
	}
	if _, failed := r.FleetPartial(); len(failed) > 0 {
		s += partialMark
	}
	if hostCPU[f.ID] && r.Summary.HostOthers != nil && r.Summary.HostOthers.CPUFraction > result.OthersThreshold {
		s += othersMark // the host's CPU, others' included: said under the tables
	}
	return s
}

// hostCPU are the figures of the host's CPU, which include what other
// processes used.
var hostCPU = map[result.FigureID]bool{result.FigHostCPUPct: true, result.FigHostBusyCores: true, result.FigIOPSPerCPU: true,
	result.FigMBPerSecPerCPU: true, result.FigHostCPUIO: true, result.FigCyclesPerIO: true}

// titleByHosts retitles a section whose rows are host counts (a fleet
// suite's --cycle hosts=…): esx35 Figure 5 adds virtual machines, a fleet
// adds hosts, and a section named after workers would misname its rows.
func (s *section) titleByHosts() {
	byHosts, byWorkers := false, false
	for _, d := range s.rowDims {
		byHosts = byHosts || d.key == "hosts"
		byWorkers = byWorkers || d.key == "workers"
	}
	switch {
	case !byHosts:
	case s.title == workload.SectionScaling && !byWorkers:
		s.title = SectionHostScaling
	default:
		s.title += ", as hosts are added"
	}
}

// SectionHostScaling titles a fleet suite's scaling section.
const SectionHostScaling = "Aggregate throughput and IOPS as hosts are added (esx35 Figure 5's virtual machines, here hosts)"
