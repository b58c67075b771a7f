package report

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/ioprobe/ioprobe/internal/textsafe"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// WriteText writes the summary of one run that a storage engineer reads
// at a glance, in the spirit of Iometer's results: what ran where, then
// IOPS, throughput, response times, errors, CPU cost and what the kernel
// counted on the devices. Columns are aligned with spaces; no colours.
// A pure-read run has no write column and vice versa.
func WriteText(w io.Writer, r *result.Result) error {
	if r == nil {
		return errors.New("report: nil result")
	}
	ew := newErrWriter(w)
	writeHeader(ew, r)

	ops := opColumns(r)
	data := []*table{perfTable(r, ops)}
	if t := deviceTable(r); t != nil {
		data = append(data, t)
	}
	if result.LatencyIntended.In(&r.Summary) {
		data = append(data, intendedTable(r))
	}
	if len(r.Summary.Lines) > 0 {
		data = append(data, linesTable(r))
	}
	if len(jobsRun(r)) > 0 {
		data = append(data, jobsTable(r))
	}
	if result.LatencySync.In(&r.Summary) {
		data = append(data, flushTable(r))
	}
	data = append(data, errorsTable(r), cpuTable(r))
	if r.Summary.Device != nil {
		data = append(data, kernelTable(r, ops))
	}
	// One width for the label column of every data table, so the
	// sections line up.
	width := 0
	for _, t := range data {
		for _, row := range t.rows {
			if len(row) > 1 {
				width = max(width, len([]rune(row[0])))
			}
		}
	}
	for _, t := range data {
		for _, row := range t.rows {
			if len(row) > 1 {
				row[0] += strings.Repeat(" ", width-len([]rune(row[0])))
			}
		}
		ew.printf("\n")
		if ew.err == nil {
			ew.err = t.write(ew.w, "")
		}
	}
	return ew.err
}

type errWriter struct {
	w   io.Writer
	err error
}

// newErrWriter is how every text output writes: through textsafe's
// writer, so that no control character a document holds reaches the
// terminal raw, whichever path it took.
func newErrWriter(w io.Writer) *errWriter { return &errWriter{w: textsafe.NewWriter(w)} }

// printf writes format, ioprobe's own words, with its string arguments
// escaped: they come from documents (a point's name, a host's address, a
// status message) and must not break or forge the report's lines.
func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = io.WriteString(e.w, textsafe.Sprintf(format, args...))
	}
}

func writeHeader(ew *errWriter, r *result.Result) {
	title := "ioprobe"
	if r.Version != "" {
		title += " " + r.Version
	}
	title += " run"
	if !r.StartedAt.IsZero() {
		title += ", started " + r.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	ew.printf("%s\n", title)

	kv := &table{align: "ll"}
	if r.Status != "" && r.Status != result.StatusOK {
		s := strings.ToUpper(string(r.Status))
		if r.Message != "" {
			s += ": " + r.Message
		}
		kv.add("Status", s)
	}
	if m := r.Merged; m != nil {
		kv.add("Merged", mergeInfoLine(m))
	}
	kv.add("Host", hostLine(r.Host))
	if jobs := jobsRun(r); len(jobs) > 0 {
		kv.addTable("Workload", jobsWorkloadTable(jobs))
	} else {
		kv.add("Workload", workloadLine(r.Workload))
	}
	if len(r.Workload.Lines) > 0 {
		kv.addTable("Lines", specLinesTable(r.Workload.Lines))
	}
	kv.add("Engine", engineLine(r.Workload))
	kv.add("Time", timeLine(r))
	region := "whole target"
	if r.Workload.RegionBytes > 0 {
		region = iec(r.Workload.RegionBytes) + " of each target"
	}
	kv.add("Region", region)
	targets := &table{align: "lllrll"}
	for _, t := range r.Targets {
		dev := t.Device
		if dev == "" {
			dev = "-"
		}
		var notes []string
		if t.Created {
			notes = append(notes, "created by ioprobe")
		}
		if t.Extended {
			notes = append(notes, "extended by ioprobe")
		}
		if !t.Direct {
			notes = append(notes, "NOT O_DIRECT")
		}
		targets.add(t.Path, t.Kind, iec(t.SizeBytes), "LBA "+iec(t.LogicalBlockBytes), "device "+dev, strings.Join(notes, ", "))
	}
	if len(r.Targets) == 0 {
		targets.add("none recorded")
	}
	kv.addTable("Targets", targets)
	storage := &table{align: "l"}
	for _, t := range r.Targets {
		lines := StorageLines(t)
		if len(lines) > 0 && len(r.Targets) > 1 {
			storage.add(t.Path + ":")
		}
		for _, l := range lines {
			storage.add(l)
		}
	}
	if m := r.Merged; m != nil {
		for _, d := range m.StorageDiffers {
			storage.add("differs between the runs merged: " + d)
		}
	}
	if len(storage.rows) > 0 {
		kv.addTable("Storage", storage)
	}
	for _, n := range notesOf(r) {
		kv.add("Note", n)
	}
	if ew.err == nil {
		ew.err = kv.write(ew.w, "")
	}
}

// notesOf is a result's notes, and what others did beside it when that
// was more than a tenth of the host's CPU or of the devices' I/O (a
// merged result recomputes it from its merged figures).
func notesOf(r *result.Result) []string {
	notes := slices.Clone(r.Notes)
	for _, n := range r.OthersNotes() {
		if !slices.Contains(notes, n) {
			notes = append(notes, n)
		}
	}
	return notes
}

func hostLine(h result.Host) string {
	var parts []string
	if h.Kernel != "" {
		parts = append(parts, "Linux "+h.Kernel)
	}
	cpu := fmt.Sprintf("%d logical CPUs", h.LogicalCPUs)
	if h.CPUModel != "" {
		cpu += " (" + h.CPUModel + ")"
	}
	parts = append(parts, cpu)
	if h.ClockHz > 0 {
		parts = append(parts, num(h.ClockHz/1e9, 3)+" GHz")
	}
	name := h.Hostname
	if name == "" {
		name = "unknown host"
	}
	return name + ": " + strings.Join(parts, ", ")
}

func workloadLine(wl result.Workload) string {
	var sizes []string
	total := 0
	for _, b := range wl.BlockSizes {
		total += b.Weight
	}
	for _, b := range wl.BlockSizes {
		s := iec(b.Bytes)
		if len(wl.BlockSizes) > 1 && total > 0 {
			s += " " + num(100*float64(b.Weight)/float64(total), 0) + "%"
		}
		sizes = append(sizes, s)
	}
	if len(sizes) == 0 {
		sizes = []string{"block size not recorded"}
	}
	s := strings.Join(sizes, " + ")
	if wl.Name != "" {
		s = wl.Name + ": " + s
	}
	s += fmt.Sprintf(", %d%% read, %d%% random, QD %d, %d %s", wl.ReadPct, wl.RandomPct, wl.QueueDepth,
		wl.Workers, plural(wl.Workers, "worker", "workers"))
	if wl.AlignBytes > 0 {
		s += ", aligned to " + iec(wl.AlignBytes)
	}
	if wl.RateIOPS > 0 {
		s += ", rate limit " + num(float64(wl.RateIOPS), 0) + " IOPS"
	}
	if wl.RateReadBPS > 0 || wl.RateWriteBPS > 0 {
		rate := func(bps int64) string {
			if bps == 0 {
				return "unlimited"
			}
			return iec(bps) + "/s"
		}
		s += ", rate per direction: reads " + rate(wl.RateReadBPS) + ", writes " + rate(wl.RateWriteBPS)
		if wl.RateProcess != "" {
			s += " (" + wl.RateProcess + ")"
		}
	}
	if wl.Buffered {
		s += ", buffered (page cache, not O_DIRECT"
		if wl.KeepCache {
			s += ", cache kept"
		}
		s += ")"
	}
	if wl.RandomMap {
		s += ", fio's random map"
	}
	if wl.OffsetBytes > 0 || wl.OffsetIncrementBytes > 0 {
		s += ", worker k's region from " + iec(wl.OffsetBytes)
		if wl.OffsetIncrementBytes > 0 {
			s += " + k × " + iec(wl.OffsetIncrementBytes)
		}
	}
	if wl.CloneFiles {
		s += ", each worker its own targets"
	}
	if wl.FilesInTurn > 0 {
		s += ", targets in turn (" + num(float64(wl.FilesInTurn), 0) + " " + plural(wl.FilesInTurn, "I/O", "I/Os") + " each)"
	}
	if wl.RandomDistribution != "" {
		s += ", random offsets " + wl.RandomDistribution
	}
	if wl.RandomGenerator != "" {
		s += ", every block once per pass (" + wl.RandomGenerator + ")"
	}
	if wl.Buffer != nil {
		s += ", fio's buffers (" + wl.Buffer.String() + ")"
	}
	if wl.Verify {
		s += ", verifying reads"
	}
	if name, n := flushName(wl); n > 0 {
		s += ", " + name + " every " + num(float64(n), 0) + " " + plural(n, "write", "writes")
	}
	switch wl.Sync {
	case "dsync":
		s += ", O_DSYNC"
	case "sync":
		s += ", O_SYNC"
	}
	return s
}

// flushName is the workload's flush call and its period (0: none).
func flushName(wl result.Workload) (string, int) {
	if wl.Fdatasync > 0 {
		return "fdatasync", wl.Fdatasync
	}
	return "fsync", wl.Fsync
}

// flushTable is the flushes' line, fio's "sync" section: how many
// completed, how often, and their latency.
func flushTable(r *result.Result) *table {
	s := &r.Summary
	flushes, e := result.Value(result.FigSyncOps, s), result.Value(result.FigElapsed, s)
	name, _ := flushName(r.Workload)
	t := &table{}
	rate := 0.0
	if e > 0 {
		rate = flushes / e
	}
	t.add(result.FigSyncOps.Figure().Short+" ("+name+")", num(float64(flushes), 0), "at "+num(rate, 2)+"/s")
	t.add(latencyRow("  latency ("+result.UnitLatency.Symbol()+")", s, result.LatencySync)...)
	return t
}

// intendedTable is the latency from the intended start of a rate-limited
// run's I/Os beside the response time above (their service time): what an
// application issuing at that rate waits, every I/O that came due during a
// stall included.
func intendedTable(r *result.Result) *table {
	t := &table{}
	k := result.LatencyIntended
	t.add(latencyRow(k.Title()+" ("+result.UnitLatency.Symbol()+")", &r.Summary, k)...)
	return t
}

// deviceTable is the devices' own latency, measured in the kernel, under
// ioprobe's: the service time and how much of ioprobe's mean lies above
// it (the stack: system calls, the block layer's queues, completion), the
// flushes' service time and the queue time when there were any; or why it
// was not measured. Nil without a device section.
func deviceTable(r *result.Result) *table {
	s := &r.Summary
	if s.Device == nil {
		return nil
	}
	svc := result.ViewDeviceLatency[0]
	if !svc.In(s) {
		why := result.ViewDeviceLatencyUnavailable.Figure().Text(s)
		if why == "" {
			return nil
		}
		t := &table{align: "ll"}
		t.add(svc.Title(), "unavailable: "+why)
		return t
	}
	// One cell after the label: the statistics are not columns of a
	// table but a line each.
	t := &table{align: "ll"}
	unit := result.UnitLatency
	for i, k := range result.ViewDeviceLatency {
		n := result.Value(k.Count(), s)
		if i > 0 && n == 0 {
			continue
		}
		row := latencyRow(k.Title()+" ("+unit.Symbol()+")", s, k)
		t.add(row[0], strings.Join(append(row[1:], "("+num(float64(n), 0)+" requests)"), "  "))
		if i == 0 {
			ours, dev := result.Value(result.FigLatencyMean, s), result.Value(k.Figure(result.StatMean), s)
			if ours > 0 && n > 0 {
				t.add("  above the device:", pct(ours-dev, ours)+" of the mean (ioprobe's mean "+num(ours*unit.Scale(), unit.Decimals())+" "+unit.Symbol()+")")
			}
		}
	}
	// What the programs counted without a time, and ioprobe's own reads
	// when they could not be told apart.
	if n := result.Value(result.FigDeviceLatencyUntimed, s); n > 0 {
		t.add("  not timed:", num(n, 0)+" requests (issued before the programs were loaded, or on a queue they did not size)")
	}
	if n := result.Value(result.FigDeviceQueueNoStart, s); n > 0 {
		t.add("  no queue time:", num(n, 0)+" requests (their queue keeps no start time: iostats 0, no scheduler)")
	}
	if why := result.FigDeviceOwnInLatency.Figure().Text(s); why != "" {
		t.add("  own reads:", why)
	}
	return t
}

// latencyRow is the latency summary k's row under label, in ms: the
// statistics of result.ViewLatencyLine.
func latencyRow(label string, s *result.Summary, k result.LatencyKind) []string {
	row := []string{label}
	for _, st := range result.ViewLatencyLine {
		f := k.Figure(st).Figure()
		row = append(row, st.Short()+" "+num(f.Shown(s), f.Unit.Decimals()))
	}
	return row
}

func engineLine(wl result.Workload) string {
	s := string(wl.Engine)
	if s == "" {
		s = "unknown"
	}
	var why []string
	if wl.EngineRequested != "" && wl.EngineRequested != wl.Engine {
		why = append(why, "requested "+string(wl.EngineRequested))
	}
	if wl.EngineReason != "" {
		why = append(why, wl.EngineReason)
	}
	if len(why) > 0 {
		s += " (" + strings.Join(why, ": ") + ")"
	}
	// How the ring submitted: the adaptive rule (the default), or fio's
	// with the sizes other than fio's defaults (each I/O on its own,
	// waiting for one completion).
	switch wl.SubmitMode {
	case workload.SubmitAdaptive:
		s += "; adaptive submission (only I/Os that cannot merge go together)"
	case workload.SubmitFio:
		s += "; fio's submission"
	}
	if wl.SubmitBatch > 1 {
		s += fmt.Sprintf("; up to %d I/Os per submission", wl.SubmitBatch)
	}
	switch {
	case wl.CompletePoll:
		s += "; polls for completions"
	case wl.CompleteMin > 1:
		s += fmt.Sprintf("; with its queue full, waits for %d completions", wl.CompleteMin)
	}
	if wl.CompleteMax > 1 {
		s += fmt.Sprintf("; refills up to %d slots at once", wl.CompleteMax)
	}
	return s
}

func timeLine(r *result.Result) string {
	elapsed := result.Value(result.FigElapsed, &r.Summary)
	s := fmt.Sprintf("%s s measured", num(elapsed, 2))
	switch d := r.Workload.DurationSeconds; {
	case r.Summary.Ended == result.EndedBudget:
		s += " (ended by its stop-after budget)"
	case r.Summary.Ended == result.EndedDuration:
		s += " (the budget cut short at " + seconds(d) + ")"
	case d > 0:
		s += " (of " + seconds(d) + ")"
	}
	// Measurement begins only when the ramp-up is over: a run that stopped
	// with nothing measured stopped during it, not after it.
	if r.Workload.RampSeconds > 0 && elapsed == 0 && r.Status != result.StatusOK && r.Status != "" {
		return "nothing measured: stopped during the " + seconds(r.Workload.RampSeconds) + " ramp-up, before the " + seconds(r.Workload.DurationSeconds) + " run time"
	}
	if r.Workload.RampSeconds > 0 {
		s += ", after " + seconds(r.Workload.RampSeconds) + " ramp-up"
	} else {
		s += ", no ramp-up"
	}
	return s
}

// seconds renders a configured duration: "60 s", "1.5 s", "2 h 0 min".
func seconds(v float64) string {
	// In float: a document's seconds may be past what a time.Duration holds.
	if v >= 3600 {
		return fmt.Sprintf("%.0f h %.0f min", math.Floor(v/3600), math.Floor(math.Mod(v, 3600)/60))
	}
	if v >= 600 {
		return fmt.Sprintf("%.0f min %.0f s", math.Floor(v/60), math.Floor(math.Mod(v, 60)))
	}
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".") + " s"
}

// mergeInfoLine says what a merged result was made of and, when its runs did
// not all overlap in time, that its rates are not concurrent load.
func mergeInfoLine(m *result.MergeInfo) string {
	s := fmt.Sprintf("%d %s from %d %s (%s)", m.Runs, plural(m.Runs, "run", "runs"), len(m.Hosts), plural(len(m.Hosts), "host", "hosts"), strings.Join(m.Hosts, ", "))
	if m.Periods > 1 {
		s += fmt.Sprintf(" in %d periods that did not overlap: rates add up within a period and are averaged over the periods' time, not summed as concurrent load", m.Periods)
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// opColumn is one column of the performance table: the I/Os it counts.
type opColumn struct {
	name string
	op   result.Op
}

// opColumns is total, read and write for a mixed run, or the one op a
// pure-read or pure-write run did. A run that completed nothing is judged
// by its access specification.
func opColumns(r *result.Result) []opColumn {
	s := &r.Summary
	reads, writes := result.Value(result.FigReadOps, s), result.Value(result.FigWriteOps, s)
	read, write := opColumn{"read", result.OpRead}, opColumn{"write", result.OpWrite}
	hasRead := reads > 0 || (writes == 0 && r.Workload.ReadPct > 0)
	hasWrite := writes > 0 || (reads == 0 && r.Workload.ReadPct < 100)
	switch {
	case hasRead && !hasWrite:
		return []opColumn{read}
	case hasWrite && !hasRead:
		return []opColumn{write}
	}
	return []opColumn{{"total", result.OpAll}, read, write}
}

func perfTable(r *result.Result, cols []opColumn) *table {
	t := &table{}
	s := &r.Summary
	// of is a figure of a column's I/Os.
	of := func(id result.FigureID, c opColumn) float64 { return result.Value(id.Figure().ForOp(c.op), s) }
	row := func(label string, f func(c opColumn) string) {
		cells := []string{label}
		for _, c := range cols {
			cells = append(cells, f(c))
		}
		t.add(cells...)
	}
	// A column's byte rate is its share of the summary's: one result, one
	// figure. For one run that is bytes ÷ elapsed; for runs merged at once
	// (a fleet's hosts, whose windows differ by a few ms) the summary's
	// rate is the hosts' rates summed, which bytes ÷ the longest window
	// would understate.
	bytes, tput, e := result.Value(result.FigBytes, s), result.Value(result.FigThroughput, s), result.Value(result.FigElapsed, s)
	rate := func(v float64) float64 {
		if bytes > 0 && tput > 0 {
			return tput * v / bytes
		}
		if e <= 0 {
			return 0
		}
		return v / e
	}
	iops, mbps, ops, byteCount := result.FigIOPS.Figure(), result.FigMBPerSecond.Figure(), result.FigOps.Figure(), result.FigBytes.Figure()
	row("", func(c opColumn) string { return c.name })
	// The run's own rates to two decimals, finer than the suites' tables.
	row(iops.Short, func(c opColumn) string { return num(of(iops.ID, c), 2) })
	row(mbps.Short, func(c opColumn) string { return num(rate(of(byteCount.ID, c))/1e6, mbps.Unit.Decimals()) })
	row("MiB/s", func(c opColumn) string { return num(rate(of(byteCount.ID, c))/(1<<20), mbps.Unit.Decimals()) })
	row(ops.Short, func(c opColumn) string { return num(of(ops.ID, c), 0) })
	row(byteCount.Short, func(c opColumn) string { return iecf(of(byteCount.ID, c)) })

	lat := func(st result.LatencyStat, c opColumn) float64 { return of(result.LatencyAll.Figure(st), c) }
	unit := result.UnitLatency
	t.add(result.LatencyAll.Title() + " (" + unit.Symbol() + ")")
	for _, st := range result.ViewRunResponseTimes {
		row("  "+st.Short(), func(c opColumn) string { return num(lat(st, c)*unit.Scale(), unit.Decimals()) })
	}

	// Percentiles in µs when the typical I/O takes less than a
	// millisecond (flash), in ms otherwise (disks, arrays under load).
	sym, scale, decimals := unit.Symbol(), unit.Scale(), unit.Decimals()
	if lat(result.StatP50, cols[0]) < 1e-3 {
		sym, scale, decimals = "µs", 1e6, 1
	}
	t.add("Percentiles (" + sym + ")")
	for _, st := range result.ViewRunPercentiles {
		row("  "+st.Short(), func(c opColumn) string { return num(lat(st, c)*scale, decimals) })
	}
	return t
}

func errorsTable(r *result.Result) *table {
	t := &table{align: "lrl"}
	s := r.Summary
	var classes []string
	for class, n := range s.ErrorsByClass {
		if n > 0 {
			classes = append(classes, class)
		}
	}
	sort.Slice(classes, func(i, j int) bool {
		a, b := s.ErrorsByClass[classes[i]], s.ErrorsByClass[classes[j]]
		if a != b {
			return a > b
		}
		return classes[i] < classes[j]
	})
	var parts []string
	for _, c := range classes {
		parts = append(parts, fmt.Sprintf("%s %s", c, count(s.ErrorsByClass[c])))
	}
	errs := result.FigErrors.Figure()
	t.add(errs.Short, num(errs.Of(&s), 0), strings.Join(parts, ", "))
	if v := s.Verify; v != nil {
		t.add("Verified", count(v.ReadsVerified), fmt.Sprintf("reads checked sound; %s not checkable (not written by this run), %s failed",
			count(v.ReadsUnverified), count(v.Failures)))
		for i, f := range v.FailedSectors {
			if i == 10 {
				t.add("", "", fmt.Sprintf("… and %d more sectors (see the JSON)", len(v.FailedSectors)-10))
				break
			}
			t.add("", "", fmt.Sprintf("%s at byte %d: %s", f.Target, f.Offset, f.Problem))
		}
	}
	if iv := r.Intervals; len(iv) > 0 {
		iops := result.FigIOPS.Figure()
		lo, hi := iops.Interval(&iv[0]), iops.Interval(&iv[0])
		for i := range iv {
			lo, hi = min(lo, iops.Interval(&iv[i])), max(hi, iops.Interval(&iv[i]))
		}
		t.add("Intervals", num(float64(len(iv)), 0), fmt.Sprintf("%s min %s, max %s", iops.Short, num(lo, 2), num(hi, 2)))
	}
	return t
}

// withUnit joins a right-aligned figure and its unit, padding the unit so
// that the figures' decimal points line up.
func withUnit(v, unit string) string {
	return v + " " + unit + strings.Repeat(" ", 2-len([]rune(unit)))
}

func cpuTable(r *result.Result) *table {
	t := &table{align: "lrl"}
	s, h := &r.Summary, r.Host
	v := func(id result.FigureID) float64 { return result.Value(id, s) }
	// cell is a figure in its shown unit, "-" when not ok.
	cell := func(ok bool, id result.FigureID, decimals int, unit string) string {
		c := "-"
		if ok {
			c = num(id.Figure().Shown(s), decimals)
		}
		return withUnit(c, unit)
	}
	row := func(id result.FigureID, value, note string) { t.add("  "+id.Figure().Words, value, note) }
	dec := func(id result.FigureID) int { return id.Figure().Unit.Decimals() }
	ops, elapsed := v(result.FigOps), v(result.FigElapsed)
	user, system := v(result.FigProcessUser), v(result.FigProcessSystem)
	hostMeasured := v(result.FigHostCPUPct) > 0
	perIO := hostMeasured && ops > 0
	procPct := 0.0
	if elapsed > 0 {
		procPct = 100 * (user + system) / elapsed
	}
	hostNote := "not measured"
	if hostMeasured {
		hostNote = fmt.Sprintf("summed over %d logical CPUs = %s busy cores", h.LogicalCPUs, num(v(result.FigHostBusyCores), 2))
	}
	clock := "clock rate unknown"
	if h.ClockHz > 0 {
		clock = fmt.Sprintf("at %s GHz × %d logical CPUs", num(h.ClockHz/1e9, 3), h.LogicalCPUs)
	}
	pctSym, perIOSym := result.UnitCPUPercent.Symbol(), result.UnitCPUPerIO.Symbol()
	t.add("CPU")
	t.add("  process CPU", withUnit(num(procPct, 2), pctSym), fmt.Sprintf("user %s s + system %s s, summed over CPUs",
		num(user, 2), num(system, 2)))
	// The run's own CPU share to two decimals, finer than the suites'
	// tables; the efficiencies' unit is in their names.
	row(result.FigHostCPUPct, cell(hostMeasured, result.FigHostCPUPct, 2, pctSym), hostNote)
	row(result.FigIOPSPerCPU, cell(perIO, result.FigIOPSPerCPU, dec(result.FigIOPSPerCPU), ""), "host")
	row(result.FigMBPerSecPerCPU, cell(perIO, result.FigMBPerSecPerCPU, dec(result.FigMBPerSecPerCPU), ""), "host")
	row(result.FigProcessCPUIO, cell(ops > 0, result.FigProcessCPUIO, dec(result.FigProcessCPUIO), perIOSym), "process")
	row(result.FigHostCPUIO, cell(perIO, result.FigHostCPUIO, dec(result.FigHostCPUIO), perIOSym), "host")
	row(result.FigCyclesPerIO, cell(perIO && v(result.FigCyclesPerIO) > 0, result.FigCyclesPerIO, dec(result.FigCyclesPerIO), ""), "host, "+clock)
	if o := s.HostOthers; o != nil {
		// The host figures above count everything the host did: what
		// of it was other processes'.
		// In the host utilization's unit (summed over CPUs).
		note := fmt.Sprintf("other processes: %s of the host's %d CPUs", num(r.OthersCPUs(), 2), h.LogicalCPUs)
		if o.CPUFraction > result.OthersThreshold {
			note += ", in the host figures above (not ioprobe's)"
		}
		t.add("  "+result.FigOthersCPU.Figure().Short, withUnit(num(100*r.OthersCPUs(), 2), pctSym), note)
	}
	return t
}

func kernelTable(r *result.Result, cols []opColumn) *table {
	s := &r.Summary
	t := &table{align: "lrlrl"}
	t.add("Kernel counted (" + strings.Join(s.Device.Devices, ", ") + ")")
	// Runs that shared a machine's devices at the same time each counted
	// every I/O there: the merge took their counts once.
	for _, sh := range s.Device.Shared {
		t.add(fmt.Sprintf("  %s on %s: shared by %d runs at once, counted once", strings.Join(sh.Devices, ", "), strings.Join(sh.Hosts, ", "), sh.Runs))
	}
	share := func(kernel, ours float64, of string) string {
		if ours == 0 {
			return "(ioprobe: none)"
		}
		return "(" + pct(kernel, ours) + of + ")"
	}
	did := map[result.Op]bool{}
	for _, c := range cols {
		did[c.op] = true
	}
	// A line for each count ioprobe made too (each op it did, the flushes
	// when it flushed), and for one it did not make but the kernel did:
	// someone else is using the device.
	for _, row := range result.ViewKernel {
		k, ours := row.Kernel.Figure(), row.Ours.Figure()
		n := k.Of(s)
		mine, made := ours.Value(s)
		if !(made && (k.Op == result.OpAll || did[k.Op])) && n == 0 {
			continue
		}
		amount := row.Amount.Figure()
		var a, aShare string
		switch amount.Unit {
		case result.UnitBytes:
			a, aShare = withUnit(num(amount.Of(s)/1e6, 2), "MB"), share(amount.Of(s), result.Value(row.OursAmount, s), "")
		default:
			a, aShare = withUnit(num(amount.Of(s)*1e3, 0), "ms"), amount.Short
		}
		t.add("  "+k.Short, num(float64(n), 0), share(n, mine, " of ioprobe's"), a, aShare)
	}
	// ioprobe's own reads (the safety checks), taken out of the reads
	// above; a partition's flushes, counted on its whole disk.
	if own := result.Value(result.FigDeviceOwnReadOps, s); own > 0 {
		t.add("  own reads", num(own, 0), "(ioprobe's safety checks: not in the reads above)", withUnit(num(result.Value(result.FigDeviceOwnReadBytes, s)/1e6, 2), "MB"))
	}
	if disks := result.FigDeviceFlushDevices.Figure().Text(s); disks != "" {
		t.add("  flushes counted on the whole disk (" + strings.ReplaceAll(disks, ";", ", ") + "): a flush is the disk's request, whichever partition asked")
	}
	// I/Os the block layer merged into requests it held: requests of
	// other sizes than the I/Os issued.
	for _, id := range result.ViewKernelMerges {
		if f := id.Figure(); f.Of(s) > 0 {
			t.add("  "+f.Short, num(f.Of(s), 0), "(I/Os merged into others)")
		}
	}
	// What the devices served for other processes, when known.
	if o := s.HostOthers; o != nil && o.DeviceOps != nil && o.DeviceBytes != nil {
		t.add("  "+result.FigOthersDeviceOps.Figure().Short, count(*o.DeviceOps), fmt.Sprintf("(%s of the devices' I/O)", pct(s.OthersDeviceShare(), 1)),
			withUnit(num(float64(*o.DeviceBytes)/1e6, 2), "MB"), "(other processes)")
	}
	for _, m := range s.DeviceSizes() {
		t.add("  WARNING: " + sizeWarning(m, s))
	}
	return t
}
