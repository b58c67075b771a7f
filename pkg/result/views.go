package result

// Views: which figures each output shows, in order, by ID. The outputs
// take everything else about a figure (its labels, unit, value) from the
// catalogue; showing a figure in another output is adding its ID here.

// ViewSuiteTables are the reports' six tables of a suite, in the text
// report and the HTML page (esx2 Tables 2–5, the esg figures).
var ViewSuiteTables = []FigureID{FigIOPS, FigMBPerSecond, FigLatencyMean, FigHostCPUPct, FigIOPSPerCPU, FigMBPerSecPerCPU}

// ViewSpreadShown is the figure the suite tables and the HTML runs table
// show with its run-to-run spread ("12,345 ±1.2%").
const ViewSpreadShown = FigIOPS

// ViewHTMLTables are the suite tables the HTML page prints as tables (it
// draws the others).
var ViewHTMLTables = []FigureID{FigIOPS, FigHostCPUPct}

// ViewFleetColumns are the columns of a fleet's table, a row per host and
// one for all hosts (Iometer's view of a run on several managers).
var ViewFleetColumns = []FigureID{FigIOPS, FigMBPerSecond, FigLatencyMean, FigLatencyP99, FigLatencyMax, FigHostCPUPct, FigOps, FigErrors}

// ViewRunsColumns are the columns of the HTML page's table of every run.
var ViewRunsColumns = []FigureID{FigIOPS, FigMBPerSecond, FigLatencyMean, FigLatencyP99, FigLatencyP99_9, FigLatencyP99_99, FigLatencyMax, FigHostCPUPct, FigHostCPUIO}

// ViewRunResponseTimes and ViewRunPercentiles are the latency rows of a
// run's text summary, for the total, reads and writes.
var (
	ViewRunResponseTimes = []LatencyStat{StatMean, StatMin, StatMax, StatStddev}
	ViewRunPercentiles   = PercentileStats()
)

// ViewLatencyLine is a latency summary on one line of a run's text
// summary (the flushes, the latency from the intended start).
var ViewLatencyLine = []LatencyStat{StatMean, StatP50, StatP99, StatP99_9, StatMax}

// ViewDeviceLatency are the devices' own latency summaries a run's text
// summary shows on a line each (ViewLatencyLine), under ioprobe's: the
// service time first, whose mean is set against ioprobe's ("above the
// device"), then the flushes' (when the devices flushed) and the queue
// time (when requests were queued).
var ViewDeviceLatency = []LatencyKind{LatencyDevice, LatencyDeviceFlush, LatencyQueue}

// ViewDeviceLatencyUnavailable is why a run's text summary has no device
// latency.
const ViewDeviceLatencyUnavailable = FigDeviceLatencyWhyNot

// ViewCPU are the CPU rows of a run's text summary, after the process's
// CPU share.
var ViewCPU = []FigureID{FigHostCPUPct, FigIOPSPerCPU, FigMBPerSecPerCPU, FigProcessCPUIO, FigHostCPUIO, FigCyclesPerIO}

// ViewKernel are the kernel's counts in a run's text summary, each beside
// what ioprobe counted and the bytes (or time) that go with it.
var ViewKernel = []KernelRow{
	{Kernel: FigDeviceReadOps, Ours: FigReadOps, Amount: FigDeviceReadBytes, OursAmount: FigReadBytes},
	{Kernel: FigDeviceWriteOps, Ours: FigWriteOps, Amount: FigDeviceWriteBytes, OursAmount: FigWriteBytes},
	{Kernel: FigDeviceFlushOps, Ours: FigSyncOps, Amount: FigDeviceFlushSeconds},
}

// ViewKernelMerges are the kernel's merge counts a run's text summary
// shows when the block layer merged any I/O.
var ViewKernelMerges = []FigureID{FigDeviceReadMerges, FigDeviceWriteMerges}

// ViewJobs are the figures a run's text summary shows for each job of a
// point run at once, and for the point's total.
var ViewJobs = []FigureID{FigOps, FigReadOps, FigWriteOps, FigIOPS, FigMBPerSecond, FigLatencyMean, FigLatencyP99}

// KernelRow pairs a kernel count with ioprobe's own.
type KernelRow struct {
	Kernel, Ours FigureID
	// Amount goes with the count (bytes, time); OursAmount is ioprobe's
	// ("" when ioprobe has none to set beside it).
	Amount, OursAmount FigureID
}

// ViewCompare are the figures compare sets side by side. A figure with an
// Else is compared by Else when one side lacks it (host CPU per I/O when
// only one side measured host CPU: process CPU per I/O).
var ViewCompare = []CompareFigure{
	{ID: FigIOPS}, {ID: FigMBPerSecond}, {ID: FigLatencyMean}, {ID: FigLatencyP99},
	{ID: FigHostCPUIO, Else: FigProcessCPUIO, ElseNote: "process CPU (host CPU not measured on both sides)", Key: "cpu_seconds_per_io"},
}

// ViewCompareHeadline is the figure compare counts the points that gained,
// lost or stayed within the noise by.
const ViewCompareHeadline = FigIOPS

// ViewCompareEchoes: a figure left out of compare's sentence when it moved
// as the other did, within half a point (MB/s repeats IOPS when the
// transfer size is the same).
var ViewCompareEchoes = map[FigureID]FigureID{FigMBPerSecond: FigIOPS}

// ViewSpread are the figures whose run-to-run spread a result of repeated
// runs keeps (Spread's fields), and compare judges noise by.
var ViewSpread = []FigureID{FigIOPS, FigMBPerSecond, FigLatencyMean, FigLatencyP99, FigHostCPUIO, FigProcessCPUIO}

// ViewLastRunGauges are the exporter's gauges of a job's last completed
// run (ioprobe_run_<Metric.Name>), and ViewLastRunSummaries its latency
// summaries. ViewLastRunWindow is the gauge a run that could not start
// has too (its window: 0).
const ViewLastRunWindow = FigElapsed

var (
	ViewLastRunGauges    = []FigureID{FigIOPS, FigReadIOPS, FigWriteIOPS, FigThroughput, FigLatencyMean, FigHostBusyCores, FigProcessCPUIO, FigHostCPUIO, FigCyclesPerIO}
	ViewLastRunSummaries = []LatencyKind{LatencyAll, LatencyIntended, LatencySync, LatencyDevice, LatencyQueue}
)

// ViewProbeGauges and ViewProbeSummaries are /probe's figures
// (ioprobe_probe_<Metric.Name>).
var (
	ViewProbeGauges    = []FigureID{FigIOPS, FigThroughput, FigLatencyMean, FigErrors}
	ViewProbeSummaries = []LatencyKind{LatencyAll}
)

// ViewLog are the figures the daemon logs when a run or a probe ends.
var ViewLog = []FigureID{FigIOPS, FigMBPerSecond, FigLatencyMean, FigLatencyP99, FigErrors}
