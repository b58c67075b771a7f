package result

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The catalogue of summary figures. Every figure of a result's summary
// has one entry, and everything about it is there: its labels, its unit,
// which way is better, its value from a summary, how runs merge it, its
// JSON path and its CSV column and place. Outputs (the text and HTML
// tables, the suites' pivot tables, compare, spread, the fleet tables,
// the exporter's last-run gauges and /probe) name the figures they show
// by FigureID, in views.go, and take the rest from here: none of them
// reads a figure's field or names its label itself.
//
// Adding a figure: its field in Summary (result.go), its entry at the end
// of buildCatalogue (its CSV column then comes last), the code that
// measures it, and its ID in the views that should show it.

// MergeRule says how Merge and MergeRepeats combine a summary figure.
type MergeRule string

// Merge rules.
const (
	// MergeSum: a count, summed exactly.
	MergeSum MergeRule = "sum"
	// MergeHistogram: recomputed from the merged latency histograms (op
	// counts, latency summaries).
	MergeHistogram MergeRule = "histogram"
	// MergeRate: summed over runs made at once; for repeats, the merged
	// count ÷ the total time (Summary.SetRates).
	MergeRate MergeRule = "rate"
	// MergeElapsed: the longest of runs made at once; for repeats, the total.
	MergeElapsed MergeRule = "elapsed"
	// MergeCPU: DeriveCPU over each host's time-weighted CPU, summed over
	// hosts (a host's CPU counted once however many runs it made).
	MergeCPU MergeRule = "cpu"
	// MergeUnion: the union (device names; error counts per class summed).
	MergeUnion MergeRule = "union"
	// MergeDropped: not carried into a merged result (verify: its failed
	// sectors name one host's targets).
	MergeDropped MergeRule = "dropped"
	// MergeDevice: the kernel's device counts, summed over machines and
	// devices; runs that measured the same devices on one machine at the
	// same time counted once (the largest of their counts: the kernel
	// counted every I/O there once for all of them).
	MergeDevice MergeRule = "device"
	// MergeLines: per access specification line, counts summed line by
	// line, the mean latency weighted by ops, IOPS the merged run's IOPS
	// in proportion to the line's ops.
	MergeLines MergeRule = "lines"
	// MergeJobs: per job of a point run at once (and per clone), counts
	// and histograms added job by job, rates and CPU the merged run's in
	// proportion to the job's I/Os.
	MergeJobs MergeRule = "jobs"
	// MergeOthers: what other processes did (HostOthers): their CPU
	// each machine's time-weighted, once per machine, over the machines'
	// CPUs; their I/O summed; absent unless every run has it.
	MergeOthers MergeRule = "others"
)

// FigureID names a summary figure: its JSON path under "summary", "."
// between levels ("iops", "cpu.cycles_per_io", "latency.percentiles.99.9").
type FigureID string

// Path is the figure's JSON path under "summary".
func (id FigureID) Path() string { return string(id) }

// Figure returns the figure's catalogue entry. Every FigureID constant and
// every LatencyKind × LatencyStat has one (TestCatalogueIsComplete); an ID
// made up elsewhere is a programming error, and it panics.
func (id FigureID) Figure() Figure {
	i, ok := catalogue.index[id]
	if !ok {
		panic(fmt.Sprintf("result: no figure %q in the catalogue", string(id)))
	}
	return catalogue.figures[i]
}

// Figures of the summary that outputs name by ID. The latency figures of
// every kind are LatencyKind.Figure(stat); the total latency's have
// constants too.
const (
	FigEnded         FigureID = "ended"
	FigOps           FigureID = "ops"
	FigReadOps       FigureID = "read_ops"
	FigWriteOps      FigureID = "write_ops"
	FigBytes         FigureID = "bytes"
	FigReadBytes     FigureID = "read_bytes"
	FigWriteBytes    FigureID = "write_bytes"
	FigErrors        FigureID = "errors"
	FigErrorsByClass FigureID = "errors_by_class"
	FigElapsed       FigureID = "elapsed_seconds"
	FigIOPS          FigureID = "iops"
	FigReadIOPS      FigureID = "read_iops"
	FigWriteIOPS     FigureID = "write_iops"
	FigThroughput    FigureID = "throughput_bytes_per_second"
	FigMBPerSecond   FigureID = "mb_per_second"

	FigLatencyMean    FigureID = "latency.mean_seconds"
	FigLatencyMin     FigureID = "latency.min_seconds"
	FigLatencyMax     FigureID = "latency.max_seconds"
	FigLatencyStddev  FigureID = "latency.stddev_seconds"
	FigLatencyP50     FigureID = "latency.percentiles.50"
	FigLatencyP90     FigureID = "latency.percentiles.90"
	FigLatencyP99     FigureID = "latency.percentiles.99"
	FigLatencyP99_9   FigureID = "latency.percentiles.99.9"
	FigLatencyP99_99  FigureID = "latency.percentiles.99.99"
	FigSyncOps        FigureID = "sync.ops"
	FigProcessUser    FigureID = "cpu.process_user_seconds"
	FigProcessSystem  FigureID = "cpu.process_system_seconds"
	FigProcessCPUIO   FigureID = "cpu.process_cpu_seconds_per_io"
	FigHostBusyCores  FigureID = "cpu.host_busy_cores"
	FigHostCPUPct     FigureID = "cpu.host_utilization_pct"
	FigHostCPUIO      FigureID = "cpu.host_cpu_seconds_per_io"
	FigCyclesPerIO    FigureID = "cpu.cycles_per_io"
	FigIOPSPerCPU     FigureID = "cpu.iops_per_cpu_pct"
	FigMBPerSecPerCPU FigureID = "cpu.mb_per_second_per_cpu_pct"

	FigDeviceDevices      FigureID = "device.devices"
	FigDeviceReadOps      FigureID = "device.read_ops"
	FigDeviceWriteOps     FigureID = "device.write_ops"
	FigDeviceReadBytes    FigureID = "device.read_bytes"
	FigDeviceWriteBytes   FigureID = "device.write_bytes"
	FigDeviceFlushOps     FigureID = "device.flush_ops"
	FigDeviceFlushSeconds FigureID = "device.flush_seconds"
	FigDeviceReadMerges   FigureID = "device.read_merges"
	FigDeviceWriteMerges  FigureID = "device.write_merges"
	FigVerify             FigureID = "verify"
	FigLines              FigureID = "lines"
	FigDeviceShared       FigureID = "device.shared"

	FigDeviceLatencyCount      FigureID = "device.latency.count"
	FigDeviceLatencyReadCount  FigureID = "device.latency.read.count"
	FigDeviceLatencyReadBytes  FigureID = "device.latency.read.bytes"
	FigDeviceLatencyWriteCount FigureID = "device.latency.write.count"
	FigDeviceLatencyWriteBytes FigureID = "device.latency.write.bytes"
	FigDeviceLatencyFlushCount FigureID = "device.latency.flush.count"
	FigDeviceLatencyDiscards   FigureID = "device.latency.discards"
	FigDeviceQueueCount        FigureID = "device.queue_latency.count"
	FigDeviceQueueReadCount    FigureID = "device.queue_latency.read.count"
	FigDeviceQueueWriteCount   FigureID = "device.queue_latency.write.count"
	FigDeviceLatencyWhyNot     FigureID = "device.latency_unavailable"
	FigJobs                    FigureID = "jobs"

	FigOthersCPU            FigureID = "host_others.cpu_fraction"
	FigOthersDeviceOps      FigureID = "host_others.device_ops"
	FigOthersDeviceBytes    FigureID = "host_others.device_bytes"
	FigDeviceFlushDevices   FigureID = "device.flush_devices"
	FigDeviceOwnReadOps     FigureID = "device.own_read_ops"
	FigDeviceOwnReadBytes   FigureID = "device.own_read_bytes"
	FigDeviceOwnInLatency   FigureID = "device.own_in_latency"
	FigDeviceLatencyUntimed FigureID = "device.latency.untimed"
	FigDeviceQueueNoStart   FigureID = "device.queue_latency.no_start"
)

// Unit is a figure's unit: its base unit in the JSON and CSV, and how
// outputs show it (a display unit, its symbol and the reports' decimals).
type Unit uint8

// Units.
const (
	UnitCount          Unit = iota + 1 // operations, errors
	UnitBytes                          // bytes
	UnitSeconds                        // a time (the window, CPU time): s
	UnitLatency                        // a latency in seconds, shown in ms
	UnitIOPS                           // operations per second
	UnitBytesPerSecond                 // bytes per second
	UnitMBPerSecond                    // 10^6 bytes per second
	UnitCPUPercent                     // CPU %, summed over the CPUs (can exceed 100)
	UnitCores                          // busy CPUs
	UnitCPUPerIO                       // CPU seconds per I/O, shown in µs
	UnitCycles                         // CPU cycles per I/O
	UnitIOPSPerCPU                     // IOPS per %CPU
	UnitMBPerCPU                       // MB/s per %CPU
	UnitText                           // not a number: a reason, a list, a section
	UnitFraction                       // a share of a whole, 0 to 1
	unitEnd
)

type unitInfo struct {
	symbol   string  // after a shown value: "ms", "%"
	scale    float64 // base unit × scale = the shown value
	decimals int     // the reports' precision of a shown value
}

var units = [...]unitInfo{
	UnitCount:          {"", 1, 0},
	UnitBytes:          {"B", 1, 0},
	UnitSeconds:        {"s", 1, 2},
	UnitLatency:        {"ms", 1e3, 3},
	UnitIOPS:           {"IOPS", 1, 0},
	UnitBytesPerSecond: {"B/s", 1, 0},
	UnitMBPerSecond:    {"MB/s", 1, 2},
	UnitCPUPercent:     {"%", 1, 1},
	UnitCores:          {"cores", 1, 2},
	UnitCPUPerIO:       {"µs", 1e6, 2},
	UnitCycles:         {"", 1, 0},
	UnitIOPSPerCPU:     {"IOPS/%CPU", 1, 1},
	UnitMBPerCPU:       {"MB/s/%CPU", 1, 3},
	UnitText:           {"", 1, 0},
	UnitFraction:       {"", 1, 3},
}

// Symbol follows a shown value ("ms", "%", "IOPS"); "" for a count.
func (u Unit) Symbol() string { return units[u].symbol }

// Scale converts the base unit to the shown one (1e3: seconds shown in ms).
func (u Unit) Scale() float64 { return units[u].scale }

// Decimals is the reports' precision of a shown value.
func (u Unit) Decimals() int { return units[u].decimals }

// Better says which way a figure improves.
type Better uint8

// Directions.
const (
	HigherIsBetter Better = iota + 1
	LowerIsBetter
	NeitherIsBetter // a count, a time, a list: neither way is better
)

// Op says which I/Os a figure counts.
type Op uint8

// Ops.
const (
	OpAll   Op = iota + 1 // reads and writes (a total), or figures that are not per op
	OpRead                // reads only
	OpWrite               // writes only
)

// CSVBlock says where a figure's CSV column goes. The CSV only grows at
// its end (spreadsheets and scripts index its columns), and figures and
// the other columns (report's layout) were added in turns, so the blocks
// follow each other as they came: the summary's first columns; after the
// suite, spread, merge and durable-write columns, CSVSecond; after the
// fleet columns, CSVThird; after the storage columns (what was measured:
// the stack, the disk's settings), CSVLast, where every figure added from
// now on goes, in the catalogue's order. Columns other than figures added
// later start a block of their own before a new CSVLast.
type CSVBlock uint8

// CSV blocks.
const (
	CSVNone   CSVBlock = iota + 1 // no column (a figure of one host's run: why it ended, the verified sectors)
	CSVFirst                      // after the workload and target columns
	CSVSecond                     // after the durable-write workload columns
	CSVThird                      // after the fleet columns
	CSVLast                       // at the end, after the storage columns, in the catalogue's order
)

// Metric is how the exporter publishes a figure: ioprobe_run_<Name> for
// the last completed run of a job, ioprobe_probe_<Name> for /probe.
type Metric struct {
	Name      string
	RunHelp   string // HELP of ioprobe_run_<Name>
	ProbeHelp string // HELP of ioprobe_probe_<Name>
}

// Figure is one summary figure's catalogue entry.
type Figure struct {
	ID FigureID
	// Title is the figure as a table's or chart's title, with its shown
	// unit where it has one: "Mean response time (ms)".
	Title string
	// Short is the figure as a column or legend: "Mean response time".
	Short string
	// Head is a compact column header with the shown unit: "Mean ms".
	Head string
	// Words is the figure in a sentence: "mean latency", "host utilization".
	Words string
	// Axis labels a chart's value axis.
	Axis   string
	Unit   Unit
	Better Better
	Merge  MergeRule
	// Column is the CSV column ("" for CSVNone), Block where it goes.
	Column string
	Block  CSVBlock
	// Op is which I/Os it counts; Read and Write, on a total, name the
	// same figure of reads and of writes.
	Op          Op
	Read, Write FigureID
	// Latency and Stat place a latency figure: the latency summary and
	// the statistic of it (0 for other figures).
	Latency LatencyKind
	Stat    LatencyStat
	// Metric is how the exporter publishes it (a zero Name: it does not).
	Metric Metric
	// Interval reads the figure from an interval snapshot (nil: intervals
	// do not carry it).
	Interval func(iv *Interval) float64

	value func(s *Summary) (float64, bool)
	text  func(s *Summary) string
}

// Value is the figure in its base unit, and false when the summary does
// not hold it (a section the run did not have; a figure that is not a
// number).
func (f Figure) Value(s *Summary) (float64, bool) {
	if f.value == nil {
		return 0, false
	}
	return f.value(s)
}

// Of is Value, 0 when absent.
func (f Figure) Of(s *Summary) float64 {
	v, _ := f.Value(s)
	return v
}

// Shown is the figure in its shown unit (latency in ms, CPU per I/O in
// µs), 0 when absent.
func (f Figure) Shown(s *Summary) float64 { return f.Of(s) * f.Unit.Scale() }

// Text is the figure as exact decimal text (the shortest digits that read
// back to the same float64), lists joined with ";", "" when absent.
func (f Figure) Text(s *Summary) string {
	if f.text == nil {
		return ""
	}
	return f.text(s)
}

// ForOp is the same figure of op's I/Os: FigIOPS for OpRead is
// FigReadIOPS. A figure without the split is itself for OpAll.
func (f Figure) ForOp(op Op) FigureID {
	switch {
	case op == OpRead && f.Read != "":
		return f.Read
	case op == OpWrite && f.Write != "":
		return f.Write
	case op == OpAll:
		return f.ID
	}
	panic(fmt.Sprintf("result: figure %q has no %v split", string(f.ID), op))
}

// Float formats v as Figure.Text does.
func Float(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Figures is the catalogue, in CSV order within each CSVBlock.
func Figures() []Figure { return append([]Figure(nil), catalogue.figures...) }

// Value is id's figure of s, in its base unit, 0 when absent.
func Value(id FigureID, s *Summary) float64 { return id.Figure().Of(s) }

type catalogueT struct {
	figures []Figure
	index   map[FigureID]int
}

var catalogue = newCatalogue(buildCatalogue())

func newCatalogue(fs []Figure) catalogueT {
	c := catalogueT{figures: fs, index: make(map[FigureID]int, len(fs))}
	for i, f := range fs {
		c.index[f.ID] = i
	}
	return c
}

// column is the CSV name of a JSON path: levels joined with "_", a
// percentile "p" + its key with "." written "_" and "_seconds".
func column(name string) string {
	if pre, k, ok := strings.Cut(name, ".percentiles."); ok {
		return strings.ReplaceAll(pre, ".", "_") + "_p" + strings.ReplaceAll(k, ".", "_") + "_seconds"
	}
	return strings.ReplaceAll(name, ".", "_")
}

// fig is a figure's entry; head, words and axis are filled in by finish
// where they are left empty.
type fig = Figure

// finish fills the derived attributes: the CSV column from the path, a
// compact header from the short name and the unit's symbol, the words and
// the axis from the short name and the title.
func finish(f Figure) Figure {
	if f.Column == "" && f.Block != CSVNone {
		f.Column = column(string(f.ID))
	}
	if f.Head == "" {
		f.Head = f.Short
		if sym := f.Unit.Symbol(); sym != "" && f.Unit != UnitBytes && !strings.Contains(f.Short, sym) {
			f.Head += " " + sym
		}
	}
	if f.Words == "" {
		f.Words = f.Short
	}
	if f.Axis == "" {
		f.Axis = f.Title
	}
	if f.Op == 0 {
		f.Op = OpAll
	}
	return f
}

// reader is how the catalogue reads a figure: as a number and as exact
// text.
type reader struct {
	value func(s *Summary) (float64, bool)
	text  func(s *Summary) string
}

func u64(get func(s *Summary) uint64) reader {
	return reader{func(s *Summary) (float64, bool) { return float64(get(s)), true },
		func(s *Summary) string { return strconv.FormatUint(get(s), 10) }}
}

func f64(get func(s *Summary) float64) reader {
	return reader{func(s *Summary) (float64, bool) { return get(s), true },
		func(s *Summary) string { return Float(get(s)) }}
}

// dev reads a kernel count, absent without the device section.
func dev(get func(d *DeviceStats) float64, exact func(d *DeviceStats) string) reader {
	return reader{func(s *Summary) (float64, bool) {
		if s.Device == nil {
			return 0, false
		}
		return get(s.Device), true
	}, func(s *Summary) string {
		if s.Device == nil {
			return ""
		}
		return exact(s.Device)
	}}
}

func devU64(get func(d *DeviceStats) uint64) reader {
	return dev(func(d *DeviceStats) float64 { return float64(get(d)) }, func(d *DeviceStats) string { return strconv.FormatUint(get(d), 10) })
}

func with(f Figure, r reader) Figure {
	f.value, f.text = r.value, r.text
	return finish(f)
}

func textOnly(f Figure, text func(s *Summary) string) Figure {
	f.Unit, f.Better, f.text = UnitText, NeitherIsBetter, text
	return finish(f)
}

// buildCatalogue lists every summary figure. The order is the CSV's within
// each block: a figure added later goes at the end, with Block CSVLast.
func buildCatalogue() []Figure {
	out := []Figure{
		// Why one host's run ended says nothing about a merge of several.
		textOnly(fig{ID: FigEnded, Title: "Why the measured window ended", Short: "Ended", Merge: MergeDropped, Block: CSVNone}, nil),
		with(fig{ID: FigOps, Title: "I/O operations completed", Short: "I/Os", Head: "Ops", Unit: UnitCount, Better: NeitherIsBetter,
			Merge: MergeHistogram, Block: CSVFirst, Read: FigReadOps, Write: FigWriteOps},
			u64(func(s *Summary) uint64 { return s.Ops })),
		with(fig{ID: FigReadOps, Title: "Reads completed", Short: "reads", Unit: UnitCount, Better: NeitherIsBetter,
			Merge: MergeHistogram, Block: CSVFirst, Op: OpRead},
			u64(func(s *Summary) uint64 { return s.ReadOps })),
		with(fig{ID: FigWriteOps, Title: "Writes completed", Short: "writes", Unit: UnitCount, Better: NeitherIsBetter,
			Merge: MergeHistogram, Block: CSVFirst, Op: OpWrite},
			u64(func(s *Summary) uint64 { return s.WriteOps })),
		with(fig{ID: FigBytes, Title: "Bytes transferred", Short: "bytes", Unit: UnitBytes, Better: NeitherIsBetter,
			Merge: MergeSum, Block: CSVFirst, Read: FigReadBytes, Write: FigWriteBytes},
			u64(func(s *Summary) uint64 { return s.Bytes })),
		with(fig{ID: FigReadBytes, Title: "Bytes read", Short: "bytes read", Unit: UnitBytes, Better: NeitherIsBetter,
			Merge: MergeSum, Block: CSVFirst, Op: OpRead},
			u64(func(s *Summary) uint64 { return s.ReadBytes })),
		with(fig{ID: FigWriteBytes, Title: "Bytes written", Short: "bytes written", Unit: UnitBytes, Better: NeitherIsBetter,
			Merge: MergeSum, Block: CSVFirst, Op: OpWrite},
			u64(func(s *Summary) uint64 { return s.WriteBytes })),
		with(fig{ID: FigErrors, Title: "I/O errors", Short: "Errors", Unit: UnitCount, Better: LowerIsBetter,
			Merge: MergeSum, Block: CSVFirst,
			Metric: Metric{Name: "io_errors", ProbeHelp: "Failed I/O operations during the probe."}},
			u64(func(s *Summary) uint64 { return s.Errors })),
		textOnly(fig{ID: FigErrorsByClass, Title: "I/O errors by class", Short: "Errors by class", Merge: MergeUnion, Block: CSVFirst},
			func(s *Summary) string {
				var parts []string
				for c, n := range s.ErrorsByClass {
					parts = append(parts, fmt.Sprintf("%s=%d", c, n))
				}
				sort.Strings(parts)
				return strings.Join(parts, ";")
			}),
		with(fig{ID: FigElapsed, Title: "Measured time (s)", Short: "Measured", Unit: UnitSeconds, Better: NeitherIsBetter,
			Merge: MergeElapsed, Block: CSVFirst,
			Metric: Metric{Name: "duration_seconds", RunHelp: "Length of the last run's measured window (ramp-up excluded)."}},
			f64(func(s *Summary) float64 { return s.ElapsedSeconds })),
		with(fig{ID: FigIOPS, Title: "I/O operations per second", Short: "IOPS", Unit: UnitIOPS, Better: HigherIsBetter,
			Merge: MergeRate, Block: CSVFirst, Read: FigReadIOPS, Write: FigWriteIOPS,
			Metric: Metric{Name: "operations_per_second",
				RunHelp:   "I/O operations per second over the measured window of the last completed run.",
				ProbeHelp: "I/O operations per second measured by the probe."},
			Interval: func(iv *Interval) float64 { return iv.IOPS }},
			f64(func(s *Summary) float64 { return s.IOPS })),
		with(fig{ID: FigReadIOPS, Title: "Read operations per second", Short: "read IOPS", Unit: UnitIOPS, Better: HigherIsBetter,
			Merge: MergeRate, Block: CSVFirst, Op: OpRead,
			Metric: Metric{Name: "read_operations_per_second", RunHelp: "Read operations per second of the last completed run."}},
			f64(func(s *Summary) float64 { return s.ReadIOPS })),
		with(fig{ID: FigWriteIOPS, Title: "Write operations per second", Short: "write IOPS", Unit: UnitIOPS, Better: HigherIsBetter,
			Merge: MergeRate, Block: CSVFirst, Op: OpWrite,
			Metric: Metric{Name: "write_operations_per_second", RunHelp: "Write operations per second of the last completed run."}},
			f64(func(s *Summary) float64 { return s.WriteIOPS })),
		with(fig{ID: FigThroughput, Title: "Throughput (bytes per second)", Short: "bytes/s", Unit: UnitBytesPerSecond, Better: HigherIsBetter,
			Merge: MergeRate, Block: CSVFirst,
			Metric: Metric{Name: "throughput_bytes_per_second",
				RunHelp:   "Bytes per second of the last completed run (MB/s = this / 1e6).",
				ProbeHelp: "Bytes per second measured by the probe."}},
			f64(func(s *Summary) float64 { return s.ThroughputBytesPerSecond })),
		with(fig{ID: FigMBPerSecond, Title: "Throughput (MB/s)", Short: "MB/s", Unit: UnitMBPerSecond, Better: HigherIsBetter,
			Merge: MergeRate, Block: CSVFirst,
			Interval: func(iv *Interval) float64 { return iv.BytesPerSecond / 1e6 }},
			f64(func(s *Summary) float64 { return s.MBPerSecond })),
	}
	out = append(out, LatencyAll.figures()...)
	out = append(out, LatencyRead.figures()...)
	out = append(out, LatencyWrite.figures()...)
	cpu := func(f Figure, get func(c *CPU) float64) Figure {
		f.Merge, f.Block = MergeCPU, CSVFirst
		return with(f, f64(func(s *Summary) float64 { return get(&s.CPU) }))
	}
	out = append(out,
		cpu(fig{ID: FigProcessUser, Title: "Process CPU, user (s)", Short: "user", Unit: UnitSeconds, Better: LowerIsBetter},
			func(c *CPU) float64 { return c.ProcessUserSeconds }),
		cpu(fig{ID: FigProcessSystem, Title: "Process CPU, system (s)", Short: "system", Unit: UnitSeconds, Better: LowerIsBetter},
			func(c *CPU) float64 { return c.ProcessSystemSeconds }),
		cpu(fig{ID: FigProcessCPUIO, Title: "Process CPU per I/O (µs)", Short: "CPU per I/O", Head: "Process CPU µs/I/O", Unit: UnitCPUPerIO, Better: LowerIsBetter,
			Metric: Metric{Name: "process_cpu_seconds_per_io", RunHelp: "ioprobe's own CPU time (user + system) per I/O in the last completed run."}},
			func(c *CPU) float64 { return c.ProcessCPUSecondsPerIO }),
		cpu(fig{ID: FigHostBusyCores, Title: "Host CPU busy (cores)", Short: "busy cores", Unit: UnitCores, Better: LowerIsBetter,
			Metric: Metric{Name: "host_cpu_busy_cores", RunHelp: "Host CPU busy (all CPUs, /proc/stat total - idle - iowait) during the last completed run, in cores; x100 is the reports' summed CPU %."}},
			func(c *CPU) float64 { return c.HostBusyCores }),
		cpu(fig{ID: FigHostCPUPct, Title: "CPU utilization (%, summed over CPUs)", Short: "CPU", Words: "host utilization", Axis: "Host CPU utilization (%)",
			Unit: UnitCPUPercent, Better: LowerIsBetter},
			func(c *CPU) float64 { return c.HostUtilizationPct }),
		cpu(fig{ID: FigHostCPUIO, Title: "Host CPU per I/O (µs)", Short: "CPU per I/O", Head: "Host CPU µs/I/O", Unit: UnitCPUPerIO, Better: LowerIsBetter,
			Metric: Metric{Name: "host_cpu_seconds_per_io", RunHelp: "Host busy CPU time per I/O in the last completed run."}},
			func(c *CPU) float64 { return c.HostCPUSecondsPerIO }),
		cpu(fig{ID: FigCyclesPerIO, Title: "Host CPU cycles per I/O", Short: "cycles per I/O", Unit: UnitCycles, Better: LowerIsBetter,
			Metric: Metric{Name: "cycles_per_io", RunHelp: "Host CPU cycles per I/O in the last completed run (busy share x rated clock x CPUs / IOPS)."}},
			func(c *CPU) float64 { return c.CyclesPerIO }),
		cpu(fig{ID: FigIOPSPerCPU, Title: "I/O rate efficiency (IOPS per %CPU)", Short: "IOPS per %CPU", Head: "IOPS per %CPU", Axis: "IOPS per %CPU",
			Unit: UnitIOPSPerCPU, Better: HigherIsBetter},
			func(c *CPU) float64 { return c.IOPSPerCPUPct }),
		cpu(fig{ID: FigMBPerSecPerCPU, Title: "Throughput efficiency (MB/s per %CPU)", Short: "MB/s per %CPU", Head: "MB/s per %CPU", Axis: "MB/s per %CPU",
			Unit: UnitMBPerCPU, Better: HigherIsBetter},
			func(c *CPU) float64 { return c.MBPerSecondPerCPUPct }),
		textOnly(fig{ID: FigDeviceDevices, Title: "Devices the kernel counted", Short: "devices", Merge: MergeUnion, Block: CSVFirst},
			func(s *Summary) string {
				if s.Device == nil {
					return ""
				}
				return strings.Join(s.Device.Devices, ";")
			}),
		with(fig{ID: FigDeviceReadOps, Title: "Reads the kernel counted", Short: "reads", Unit: UnitCount, Better: NeitherIsBetter,
			Merge: MergeDevice, Block: CSVFirst, Op: OpRead},
			devU64(func(d *DeviceStats) uint64 { return d.ReadOps })),
		with(fig{ID: FigDeviceWriteOps, Title: "Writes the kernel counted", Short: "writes", Unit: UnitCount, Better: NeitherIsBetter,
			Merge: MergeDevice, Block: CSVFirst, Op: OpWrite},
			devU64(func(d *DeviceStats) uint64 { return d.WriteOps })),
		with(fig{ID: FigDeviceReadBytes, Title: "Bytes the kernel counted read", Short: "bytes read", Unit: UnitBytes, Better: NeitherIsBetter,
			Merge: MergeDevice, Block: CSVFirst, Op: OpRead},
			devU64(func(d *DeviceStats) uint64 { return d.ReadBytes })),
		with(fig{ID: FigDeviceWriteBytes, Title: "Bytes the kernel counted written", Short: "bytes written", Unit: UnitBytes, Better: NeitherIsBetter,
			Merge: MergeDevice, Block: CSVFirst, Op: OpWrite},
			devU64(func(d *DeviceStats) uint64 { return d.WriteBytes })),
		textOnly(fig{ID: FigVerify, Title: "Reads verified", Short: "verified", Merge: MergeDropped, Block: CSVNone}, nil),
	)
	// Columns added after the first layout: flushes, the kernel's flush
	// counts, the lines of a specification, the latency from the intended
	// start of rate-limited runs; then whatever comes next.
	out = append(out,
		with(fig{ID: FigSyncOps, Title: "Flushes completed", Short: "Flushes", Unit: UnitCount, Better: NeitherIsBetter,
			Merge: MergeHistogram, Block: CSVSecond},
			reader{func(s *Summary) (float64, bool) {
				if s.Sync == nil {
					return 0, false
				}
				return float64(s.Sync.Ops), true
			}, func(s *Summary) string {
				if s.Sync == nil {
					return ""
				}
				return strconv.FormatUint(s.Sync.Ops, 10)
			}}),
	)
	out = append(out, LatencySync.figures()...)
	out = append(out,
		with(fig{ID: FigDeviceFlushOps, Title: "Flushes the kernel counted", Short: "flushes", Unit: UnitCount, Better: NeitherIsBetter,
			Merge: MergeDevice, Block: CSVSecond},
			devU64(func(d *DeviceStats) uint64 { return d.FlushOps })),
		with(fig{ID: FigDeviceFlushSeconds, Title: "Time the kernel spent flushing (s)", Short: "flushing", Unit: UnitSeconds, Better: LowerIsBetter,
			Merge: MergeDevice, Block: CSVSecond},
			dev(func(d *DeviceStats) float64 { return d.FlushSeconds }, func(d *DeviceStats) string { return Float(d.FlushSeconds) })),
		textOnly(fig{ID: FigLines, Title: "Each access specification line", Short: "lines", Merge: MergeLines, Block: CSVSecond}, linesText),
	)
	out = append(out, LatencyIntended.figures()...)
	out = append(out,
		textOnly(fig{ID: FigDeviceShared, Title: "Devices several runs measured at once on one machine, counted once", Short: "shared devices",
			Merge: MergeDevice, Block: CSVThird}, sharedText),
	)
	out = append(out, deviceLatencyFigures()...)
	// Each job of a point run at once has rows of its own (text, CSV),
	// not a column.
	out = append(out, textOnly(fig{ID: FigJobs, Title: "Each job run at once", Short: "jobs", Merge: MergeJobs, Block: CSVNone}, nil))
	// The I/Os the block layer merged into requests it held: the device
	// saw other request sizes than the I/Os issued.
	out = append(out,
		with(fig{ID: FigDeviceReadMerges, Title: "Reads the kernel merged into others", Short: "read merges", Unit: UnitCount, Better: NeitherIsBetter,
			Merge: MergeDevice, Block: CSVThird, Op: OpRead},
			devU64(func(d *DeviceStats) uint64 { return d.ReadMerges })),
		with(fig{ID: FigDeviceWriteMerges, Title: "Writes the kernel merged into others", Short: "write merges", Unit: UnitCount, Better: NeitherIsBetter,
			Merge: MergeDevice, Block: CSVThird, Op: OpWrite},
			devU64(func(d *DeviceStats) uint64 { return d.WriteMerges })),
	)
	// What other processes did meanwhile.
	others := func(get func(o *HostOthers) *uint64) reader {
		return reader{func(s *Summary) (float64, bool) {
			if s.HostOthers == nil || get(s.HostOthers) == nil {
				return 0, false
			}
			return float64(*get(s.HostOthers)), true
		}, func(s *Summary) string {
			if s.HostOthers == nil || get(s.HostOthers) == nil {
				return ""
			}
			return strconv.FormatUint(*get(s.HostOthers), 10)
		}}
	}
	out = append(out,
		with(fig{ID: FigOthersCPU, Title: "Host CPU other processes used (share of all CPUs)", Short: "others' CPU",
			Words: "CPU other processes used", Unit: UnitFraction, Better: NeitherIsBetter, Merge: MergeOthers, Block: CSVThird},
			reader{func(s *Summary) (float64, bool) {
				if s.HostOthers == nil {
					return 0, false
				}
				return s.HostOthers.CPUFraction, true
			}, func(s *Summary) string {
				if s.HostOthers == nil {
					return ""
				}
				return Float(s.HostOthers.CPUFraction)
			}}),
		with(fig{ID: FigOthersDeviceOps, Title: "I/Os the devices served for other processes", Short: "others' I/Os",
			Unit: UnitCount, Better: NeitherIsBetter, Merge: MergeOthers, Block: CSVThird},
			others(func(o *HostOthers) *uint64 { return o.DeviceOps })),
		with(fig{ID: FigOthersDeviceBytes, Title: "Bytes the devices moved for other processes", Short: "others' bytes",
			Unit: UnitBytes, Better: NeitherIsBetter, Merge: MergeOthers, Block: CSVThird},
			others(func(o *HostOthers) *uint64 { return o.DeviceBytes })),
	)
	out = append(out, ownAndFlushFigures()...)
	return out
}

// ownAndFlushFigures say what the kernel's counts hold besides the
// workload's requests on the targets' devices: the whole disks whose
// flushes a partition's are, ioprobe's own reads taken out, and what
// the device-latency programs counted without a time.
func ownAndFlushFigures() []Figure {
	device := func(get func(d *DeviceStats) string) func(s *Summary) string {
		return func(s *Summary) string {
			if s.Device == nil {
				return ""
			}
			return get(s.Device)
		}
	}
	return []Figure{
		textOnly(fig{ID: FigDeviceFlushDevices, Title: "Whole disks whose flushes the kernel counted for a partition", Short: "flushes counted on",
			Merge: MergeUnion, Block: CSVThird}, device(func(d *DeviceStats) string { return strings.Join(d.FlushDevices, ";") })),
		with(fig{ID: FigDeviceOwnReadOps, Title: "ioprobe's own reads the kernel counted (safety checks), not in its reads", Short: "own reads", Unit: UnitCount,
			Better: NeitherIsBetter, Merge: MergeDevice, Block: CSVThird, Op: OpRead},
			devU64(func(d *DeviceStats) uint64 { return d.OwnReadOps })),
		with(fig{ID: FigDeviceOwnReadBytes, Title: "Bytes of ioprobe's own reads the kernel counted", Short: "own bytes read", Unit: UnitBytes,
			Better: NeitherIsBetter, Merge: MergeDevice, Block: CSVThird, Op: OpRead},
			devU64(func(d *DeviceStats) uint64 { return d.OwnReadBytes })),
		textOnly(fig{ID: FigDeviceOwnInLatency, Title: "Why ioprobe's own reads are in the device latency", Short: "own reads timed",
			Merge: MergeUnion, Block: CSVThird}, device(func(d *DeviceStats) string { return d.OwnInLatency })),
		with(fig{ID: FigDeviceLatencyUntimed, Title: "Device requests not timed (issued before the programs, or on a queue they did not size)", Short: "untimed",
			Unit: UnitCount, Better: NeitherIsBetter, Merge: MergeSum, Block: CSVThird},
			devU64(func(d *DeviceStats) uint64 {
				if d.Latency == nil {
					return 0
				}
				return d.Latency.Untimed
			})),
		with(fig{ID: FigDeviceQueueNoStart, Title: "Device requests without a queue time (the queue keeps no start time)", Short: "no queue time",
			Unit: UnitCount, Better: NeitherIsBetter, Merge: MergeSum, Block: CSVThird},
			devU64(func(d *DeviceStats) uint64 {
				if d.QueueLatency == nil {
					return 0
				}
				return d.QueueLatency.NoStart
			})),
	}
}

// deviceLatencyFigures are the devices' own latency, measured in the
// kernel: counts, bytes and the summaries, then why it is absent.
func deviceLatencyFigures() []Figure {
	// counted reads a count of the device latency section, absent
	// without it.
	counted := func(get func(d *DeviceStats) (uint64, bool)) reader {
		return reader{func(s *Summary) (float64, bool) {
			if s.Device == nil {
				return 0, false
			}
			n, ok := get(s.Device)
			return float64(n), ok
		}, func(s *Summary) string {
			if s.Device == nil {
				return ""
			}
			n, ok := get(s.Device)
			if !ok {
				return ""
			}
			return strconv.FormatUint(n, 10)
		}}
	}
	svc := func(get func(l *DeviceLatency) uint64) reader {
		return counted(func(d *DeviceStats) (uint64, bool) {
			if d.Latency == nil {
				return 0, false
			}
			return get(d.Latency), true
		})
	}
	queue := func(get func(l *QueueLatency) uint64) reader {
		return counted(func(d *DeviceStats) (uint64, bool) {
			if d.QueueLatency == nil {
				return 0, false
			}
			return get(d.QueueLatency), true
		})
	}
	n := func(id FigureID, title, short string, op Op, merge MergeRule, r reader) Figure {
		unit := UnitCount
		if strings.HasSuffix(string(id), ".bytes") {
			unit = UnitBytes
		}
		f := fig{ID: id, Title: title, Short: short, Unit: unit, Better: NeitherIsBetter, Merge: merge, Block: CSVThird, Op: op}
		if id == FigDeviceLatencyCount {
			f.Read, f.Write = FigDeviceLatencyReadCount, FigDeviceLatencyWriteCount
		}
		if id == FigDeviceQueueCount {
			f.Read, f.Write = FigDeviceQueueReadCount, FigDeviceQueueWriteCount
		}
		return with(f, r)
	}
	out := []Figure{
		n(FigDeviceLatencyCount, "Device requests timed (reads and writes)", "requests timed", OpAll, MergeHistogram,
			svc(func(l *DeviceLatency) uint64 { return l.Count })),
		n(FigDeviceLatencyReadCount, "Device reads timed", "reads timed", OpRead, MergeHistogram,
			svc(func(l *DeviceLatency) uint64 { return l.Read.Count })),
		n(FigDeviceLatencyReadBytes, "Bytes of the device reads timed", "bytes read", OpRead, MergeSum,
			svc(func(l *DeviceLatency) uint64 { return l.Read.Bytes })),
		n(FigDeviceLatencyWriteCount, "Device writes timed", "writes timed", OpWrite, MergeHistogram,
			svc(func(l *DeviceLatency) uint64 { return l.Write.Count })),
		n(FigDeviceLatencyWriteBytes, "Bytes of the device writes timed", "bytes written", OpWrite, MergeSum,
			svc(func(l *DeviceLatency) uint64 { return l.Write.Bytes })),
		n(FigDeviceLatencyFlushCount, "Device flushes timed", "flushes timed", OpAll, MergeHistogram,
			svc(func(l *DeviceLatency) uint64 { return l.Flush.Count })),
		n(FigDeviceLatencyDiscards, "Device discards (not timed)", "discards", OpAll, MergeSum,
			svc(func(l *DeviceLatency) uint64 { return l.Discards })),
		n(FigDeviceQueueCount, "Device requests queued (reads and writes)", "requests queued", OpAll, MergeHistogram,
			queue(func(l *QueueLatency) uint64 { return l.Count })),
		n(FigDeviceQueueReadCount, "Device reads queued", "reads queued", OpRead, MergeHistogram,
			queue(func(l *QueueLatency) uint64 { return l.Read.Count })),
		n(FigDeviceQueueWriteCount, "Device writes queued", "writes queued", OpWrite, MergeHistogram,
			queue(func(l *QueueLatency) uint64 { return l.Write.Count })),
	}
	for _, k := range []LatencyKind{LatencyDevice, LatencyDeviceRead, LatencyDeviceWrite, LatencyDeviceFlush, LatencyQueue, LatencyQueueRead, LatencyQueueWrite} {
		out = append(out, k.figures()...)
	}
	out = append(out, textOnly(fig{ID: FigDeviceLatencyWhyNot, Title: "Why the device latency was not measured", Short: "device latency unavailable",
		Merge: MergeUnion, Block: CSVThird}, func(s *Summary) string {
		if s.Device == nil {
			return ""
		}
		return s.Device.LatencyUnavailable
	}))
	return out
}
