package report

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/ioprobe/ioprobe/pkg/result"
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
	ew := &errWriter{w: w}
	writeHeader(ew, r)

	ops := opColumns(r)
	data := []*table{perfTable(r, ops)}
	if r.Summary.IntendedLatency != nil {
		data = append(data, intendedTable(r))
	}
	if len(r.Summary.Lines) > 0 {
		data = append(data, linesTable(r))
	}
	if r.Summary.Sync != nil {
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

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
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
		s := strings.ToUpper(r.Status)
		if r.Message != "" {
			s += ": " + r.Message
		}
		kv.add("Status", s)
	}
	if m := r.Merged; m != nil {
		kv.add("Merged", mergeInfoLine(m))
	}
	kv.add("Host", hostLine(r.Host))
	kv.add("Workload", workloadLine(r.Workload))
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
	if ew.err == nil {
		ew.err = kv.write(ew.w, "")
	}
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
		s += ", rate limit " + count(uint64(wl.RateIOPS)) + " IOPS"
	}
	if wl.Verify {
		s += ", verifying reads"
	}
	if name, n := flushName(wl); n > 0 {
		s += ", " + name + " every " + count(uint64(n)) + " " + plural(n, "write", "writes")
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
	f, e := r.Summary.Sync, r.Summary.ElapsedSeconds
	name, _ := flushName(r.Workload)
	t := &table{}
	rate := 0.0
	if e > 0 {
		rate = float64(f.Ops) / e
	}
	t.add("Flushes ("+name+")", count(f.Ops), "at "+num(rate, 2)+"/s")
	t.add(latencyRow("  latency (ms)", &f.Latency)...)
	return t
}

// intendedTable is the latency from the intended start of a rate-limited
// run's I/Os beside the response time above (their service time): what an
// application issuing at that rate waits, every I/O that came due during a
// stall included.
func intendedTable(r *result.Result) *table {
	t := &table{}
	t.add(latencyRow("Latency from intended start (ms)", r.Summary.IntendedLatency)...)
	return t
}

// latencyRow is a latency summary's row in ms under label: mean, p50,
// p99, p99.9 and max.
func latencyRow(label string, l *result.Latency) []string {
	ms := func(v float64) string { return num(v*1e3, 3) }
	return []string{label, "mean " + ms(l.MeanSeconds), "p50 " + ms(l.Percentiles["50"]), "p99 " + ms(l.Percentiles["99"]),
		"p99.9 " + ms(l.Percentiles["99.9"]), "max " + ms(l.MaxSeconds)}
}

func engineLine(wl result.Workload) string {
	s := wl.Engine
	if s == "" {
		s = "unknown"
	}
	var why []string
	if wl.EngineRequested != "" && wl.EngineRequested != wl.Engine {
		why = append(why, "requested "+wl.EngineRequested)
	}
	if wl.EngineReason != "" {
		why = append(why, wl.EngineReason)
	}
	if len(why) > 0 {
		s += " (" + strings.Join(why, ": ") + ")"
	}
	return s
}

func timeLine(r *result.Result) string {
	s := fmt.Sprintf("%s s measured", num(r.Summary.ElapsedSeconds, 2))
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
	if r.Workload.RampSeconds > 0 && r.Summary.ElapsedSeconds == 0 && r.Status != result.StatusOK && r.Status != "" {
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
	d := time.Duration(v * float64(time.Second))
	if d >= time.Hour {
		return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
	}
	if d >= 10*time.Minute {
		return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
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

// opColumn is one column of the performance table.
type opColumn struct {
	name  string
	ops   uint64
	bytes uint64
	iops  float64
	lat   result.Latency
}

// opColumns is total, read and write for a mixed run, or the one op a
// pure-read or pure-write run did. A run that completed nothing is judged
// by its access specification.
func opColumns(r *result.Result) []opColumn {
	s := r.Summary
	read := opColumn{"read", s.ReadOps, s.ReadBytes, s.ReadIOPS, s.ReadLatency}
	write := opColumn{"write", s.WriteOps, s.WriteBytes, s.WriteIOPS, s.WriteLatency}
	hasRead := s.ReadOps > 0 || (s.WriteOps == 0 && r.Workload.ReadPct > 0)
	hasWrite := s.WriteOps > 0 || (s.ReadOps == 0 && r.Workload.ReadPct < 100)
	switch {
	case hasRead && !hasWrite:
		return []opColumn{read}
	case hasWrite && !hasRead:
		return []opColumn{write}
	}
	return []opColumn{{"total", s.Ops, s.Bytes, s.IOPS, s.Latency}, read, write}
}

func perfTable(r *result.Result, cols []opColumn) *table {
	t := &table{}
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
	s, e := r.Summary, r.Summary.ElapsedSeconds
	rate := func(v float64) float64 {
		if s.Bytes > 0 && s.ThroughputBytesPerSecond > 0 {
			return s.ThroughputBytesPerSecond * v / float64(s.Bytes)
		}
		if e <= 0 {
			return 0
		}
		return v / e
	}
	row("", func(c opColumn) string { return c.name })
	row("IOPS", func(c opColumn) string { return num(c.iops, 2) })
	row("MB/s", func(c opColumn) string { return num(rate(float64(c.bytes))/1e6, 2) })
	row("MiB/s", func(c opColumn) string { return num(rate(float64(c.bytes))/(1<<20), 2) })
	row("I/Os", func(c opColumn) string { return count(c.ops) })
	row("bytes", func(c opColumn) string { return iec(int64(c.bytes)) })

	t.add("Response time (ms)")
	ms := func(v float64) string { return num(v*1e3, 3) }
	row("  mean", func(c opColumn) string { return ms(c.lat.MeanSeconds) })
	row("  min", func(c opColumn) string { return ms(c.lat.MinSeconds) })
	row("  max", func(c opColumn) string { return ms(c.lat.MaxSeconds) })
	row("  stddev", func(c opColumn) string { return ms(c.lat.StddevSeconds) })

	// Percentiles in µs when the typical I/O takes less than a
	// millisecond (flash), in ms otherwise (disks, arrays under load).
	unit, scale, decimals := "ms", 1e3, 3
	if cols[0].lat.Percentiles["50"] < 1e-3 {
		unit, scale, decimals = "µs", 1e6, 1
	}
	t.add("Percentiles (" + unit + ")")
	for _, k := range result.PercentileKeys {
		row("  p"+k, func(c opColumn) string { return num(c.lat.Percentiles[k]*scale, decimals) })
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
	t.add("Errors", count(s.Errors), strings.Join(parts, ", "))
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
		lo, hi := iv[0].IOPS, iv[0].IOPS
		for _, i := range iv {
			lo, hi = min(lo, i.IOPS), max(hi, i.IOPS)
		}
		t.add("Intervals", count(uint64(len(iv))), fmt.Sprintf("IOPS min %s, max %s", num(lo, 2), num(hi, 2)))
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
	c, s, h := r.Summary.CPU, r.Summary, r.Host
	proc := c.ProcessUserSeconds + c.ProcessSystemSeconds
	hostMeasured := c.HostUtilizationPct > 0
	perIO := hostMeasured && s.Ops > 0
	dash := func(ok bool, v string) string {
		if !ok {
			return "-"
		}
		return v
	}
	procPct := 0.0
	if s.ElapsedSeconds > 0 {
		procPct = 100 * proc / s.ElapsedSeconds
	}
	hostNote := "not measured"
	if hostMeasured {
		hostNote = fmt.Sprintf("summed over %d logical CPUs = %s busy cores", h.LogicalCPUs, num(c.HostBusyCores, 2))
	}
	clock := "clock rate unknown"
	if h.ClockHz > 0 {
		clock = fmt.Sprintf("at %s GHz × %d logical CPUs", num(h.ClockHz/1e9, 3), h.LogicalCPUs)
	}
	t.add("CPU")
	t.add("  process CPU", withUnit(num(procPct, 2), "%"), fmt.Sprintf("user %s s + system %s s, summed over CPUs",
		num(c.ProcessUserSeconds, 2), num(c.ProcessSystemSeconds, 2)))
	t.add("  host utilization", withUnit(dash(hostMeasured, num(c.HostUtilizationPct, 2)), "%"), hostNote)
	t.add("  IOPS per %CPU", withUnit(dash(perIO, num(c.IOPSPerCPUPct, 1)), ""), "host")
	t.add("  MB/s per %CPU", withUnit(dash(perIO, num(c.MBPerSecondPerCPUPct, 3)), ""), "host")
	t.add("  CPU per I/O", withUnit(dash(s.Ops > 0, num(c.ProcessCPUSecondsPerIO*1e6, 2)), "µs"), "process")
	t.add("  CPU per I/O", withUnit(dash(perIO, num(c.HostCPUSecondsPerIO*1e6, 2)), "µs"), "host")
	t.add("  cycles per I/O", withUnit(dash(perIO && c.CyclesPerIO > 0, num(c.CyclesPerIO, 0)), ""), "host, "+clock)
	return t
}

func kernelTable(r *result.Result, cols []opColumn) *table {
	d, s := r.Summary.Device, r.Summary
	t := &table{align: "lrlrl"}
	t.add("Kernel counted (" + strings.Join(d.Devices, ", ") + ")")
	share := func(kernel, ours uint64, of string) string {
		if ours == 0 {
			return "(ioprobe: none)"
		}
		return "(" + pct(float64(kernel), float64(ours)) + of + ")"
	}
	did := map[string]bool{}
	for _, c := range cols {
		did[c.name] = true
	}
	// A line for each op ioprobe did, and for one it did not do but the
	// kernel saw: someone else is using the device.
	if did["read"] || d.ReadOps > 0 {
		t.add("  reads", count(d.ReadOps), share(d.ReadOps, s.ReadOps, " of ioprobe's"),
			withUnit(num(float64(d.ReadBytes)/1e6, 2), "MB"), share(d.ReadBytes, s.ReadBytes, ""))
	}
	if did["write"] || d.WriteOps > 0 {
		t.add("  writes", count(d.WriteOps), share(d.WriteOps, s.WriteOps, " of ioprobe's"),
			withUnit(num(float64(d.WriteBytes)/1e6, 2), "MB"), share(d.WriteBytes, s.WriteBytes, ""))
	}
	// Flush requests the block layer completed (kernels 5.5 and later):
	// the proof that ioprobe's flushes reached the device.
	if s.Sync != nil || d.FlushOps > 0 {
		var ours uint64
		if s.Sync != nil {
			ours = s.Sync.Ops
		}
		t.add("  flushes", count(d.FlushOps), share(d.FlushOps, ours, " of ioprobe's"),
			withUnit(num(d.FlushSeconds*1e3, 0), "ms"), "flushing")
	}
	return t
}
