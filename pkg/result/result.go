package result

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Schema names. A reader refuses a schema it does not know.
const (
	Schema      = "ioprobe.result/v1"
	SuiteSchema = "ioprobe.suite/v1"
)

// Status is how a run ended: a closed set that results, the daemon's run
// history and its ioprobe_job_runs_total{status} share.
type Status string

// Run statuses.
const (
	StatusOK          Status = "ok"          // ran for its whole duration without I/O errors
	StatusInterrupted Status = "interrupted" // stopped early by a signal or a cancelled context
	StatusErrors      Status = "errors"      // I/O errors happened (see summary.errors)
	// StatusFailed: the run could not start, and measured nothing; no
	// result has it, the daemon's history and counters of runs do.
	StatusFailed Status = "failed"
)

// Statuses lists every status, in order.
func Statuses() []Status { return []Status{StatusOK, StatusErrors, StatusInterrupted, StatusFailed} }

// Result is one run: one access specification against one or more targets.
// The JSON field names are a contract (docs/output.md); fields may be added, never
// renamed.
type Result struct {
	Schema  string `json:"schema"`
	Version string `json:"version"`
	// RunID identifies the run (random, given by the runner); with the
	// host and the start it tells runs apart, so that a merge counts each
	// once. Absent for a merged result (Merged.Of lists its runs) and in
	// results written before it.
	RunID     string    `json:"run_id,omitempty"`
	StartedAt time.Time `json:"started_at"`
	// StartAt is the instant run --start-at asked for (StartedAt, when the
	// ramp-up began, is at or after it).
	StartAt time.Time `json:"start_at,omitzero"`
	Status  Status    `json:"status"`
	Message string    `json:"message,omitempty"` // why a run stopped early, what failed
	// SafetyStop says that the run stopped writing because a target's
	// safety check, repeated at the end of a measured interval, found
	// data that appeared there meanwhile (status "errors").
	SafetyStop *SafetyStop `json:"safety_stop,omitempty"`
	// SafetyChecks is what the looks for signatures at the end of each
	// interval read from the targets the run wrote (absent when it wrote
	// nothing). Those reads reach the device: summary.device counts them.
	SafetyChecks *SafetyChecks `json:"safety_checks,omitempty"`
	// Notes say where the run differs from what its input asked for (a fio
	// job without direct=1 run with O_DIRECT).
	Notes []string `json:"notes,omitempty"`
	// IOSchedulers are the devices whose I/O scheduler ioprobe switched
	// for a fio job's ioscheduler= before this run (or before an earlier
	// point of the same job file: fio leaves a switched scheduler as it
	// is for the jobs after), what each ran under and what it was before.
	IOSchedulers []IOScheduler `json:"io_schedulers,omitempty"`
	Host         Host          `json:"host"`
	Workload     Workload      `json:"workload"`
	// Groups lists each access specification of a run that ran several at
	// once on their own workers (the business suite's mixed run).
	Groups    []Workload `json:"groups,omitempty"`
	Targets   []Target   `json:"targets"`
	Summary   Summary    `json:"summary"`
	Histogram Histograms `json:"histogram"`
	// IODepth is how deep the workers' queues ran and how many I/Os each
	// submission and each reap handled (fio's iodepth_level,
	// iodepth_submit and iodepth_complete), over the measured window.
	IODepth *Depth `json:"iodepth,omitempty"`
	// DiskUtil is each device under the targets, its block-layer
	// counters over the measured window (fio's disk_util; summary.device
	// sums them).
	DiskUtil  []DiskUtil `json:"disk_util,omitempty"`
	Intervals []Interval `json:"intervals"`
	// Merged says how many runs and hosts a merged result was made from
	// (absent for a single run).
	Merged *MergeInfo `json:"merged,omitempty"`
	// Point says which point of a suite this is (absent for a plain run).
	Point *Point `json:"point,omitempty"`
	// Spread is the run-to-run variation of a point run several times
	// (--repeat); the result itself is then those runs merged.
	Spread *Spread `json:"spread,omitempty"`
	// Hosts, on a point of a fleet suite, is each host's own run of that
	// point, its result merged into this one (see Fleet).
	Hosts []FleetHost `json:"hosts,omitempty"`
}

// IOScheduler is a device whose I/O scheduler ioprobe switched for fio's
// ioscheduler= (docs/fio.md): Scheduler, what the run ran under; Was, what
// the device had before ioprobe switched it; Restored, that ioprobe put
// Was back once the job file's last run ended (fio leaves it switched).
type IOScheduler struct {
	Device    string `json:"device"`
	Scheduler string `json:"scheduler"`
	Was       string `json:"was"`
	Restored  bool   `json:"restored"`
}

// SafetyStop is why a run stopped writing early: what its re-check of a
// target found, in the words and ids of a refusal (docs/output.md).
type SafetyStop struct {
	Target   string   `json:"target"`
	Reason   string   `json:"reason"`
	Refusals []string `json:"refusals"`
	// AfterSeconds is when it was found, from the start of the measured
	// window (negative: during the ramp-up).
	AfterSeconds float64 `json:"after_seconds"`
}

// SafetyChecks counts the looks for signatures a run made while it wrote
// (at the end of every interval, and once after the last) and their reads.
type SafetyChecks struct {
	Looks     int    `json:"looks"`
	ReadOps   uint64 `json:"read_ops"`
	ReadBytes uint64 `json:"read_bytes"`
	// WindowReadOps and WindowReadBytes are the part of them made inside
	// the measured window, which summary.device's counts include.
	WindowReadOps   uint64 `json:"window_read_ops"`
	WindowReadBytes uint64 `json:"window_read_bytes"`
}

// Host describes the machine that ran the workload.
type Host struct {
	Hostname string `json:"hostname"`
	// BootID is the kernel's boot id (/proc/sys/kernel/random/boot_id):
	// the same for every container and network namespace of one machine
	// until it reboots, as are the CPU and disk counters ioprobe reads.
	// Merges count those once per machine by it.
	BootID      string  `json:"boot_id,omitempty"`
	Kernel      string  `json:"kernel"`
	CPUModel    string  `json:"cpu_model"`
	LogicalCPUs int     `json:"logical_cpus"`
	ClockHz     float64 `json:"clock_hz"`
}

// Workload is the access specification that ran.
type Workload struct {
	Name            string              `json:"name"`
	BlockSizes      []BlockSize         `json:"block_sizes"`
	ReadPct         int                 `json:"read_pct"`
	RandomPct       int                 `json:"random_pct"`
	QueueDepth      int                 `json:"queue_depth"`
	Workers         int                 `json:"workers"`
	RampSeconds     float64             `json:"ramp_seconds"`
	DurationSeconds float64             `json:"duration_seconds"`
	RegionBytes     int64               `json:"region_bytes"`
	Engine          workload.EngineName `json:"engine"`                     // the engine that ran
	EngineRequested workload.EngineName `json:"engine_requested,omitempty"` // what was asked for (auto, sync, uring)
	EngineReason    string              `json:"engine_reason,omitempty"`    // why auto chose what it chose
	AlignBytes      int64               `json:"align_bytes,omitempty"`
	RateIOPS        int                 `json:"rate_iops,omitempty"`
	Seed            uint64              `json:"seed,omitempty"`
	Verify          bool                `json:"verify,omitempty"`
	// Fsync, Fdatasync: a flush of a target after every N writes of a
	// worker there; Sync: targets opened O_DSYNC ("dsync") or O_SYNC ("sync").
	Fsync     int    `json:"fsync,omitempty"`
	Fdatasync int    `json:"fdatasync,omitempty"`
	Sync      string `json:"sync,omitempty"`
	// Lines is the access specification line by line, when it cannot be
	// written with the fields above (block_sizes, read_pct, random_pct
	// then summarise it: sizes weighted by share, shares of reads and
	// random I/O of the whole specification).
	Lines []Line `json:"lines,omitempty"`
	// SequentialStreams is "direction" when a sequential read followed the
	// previous read and a sequential write the previous write (fio's rule,
	// set for fio job files); absent for Iometer's one stream per worker.
	SequentialStreams string `json:"sequential_streams,omitempty"`
	// IOBytes, IOCount, Loops: the stop-after budget of each worker (fio's
	// io_size or size, number_ios, loops; see workload.Spec), set only for
	// a run that stops after it; duration_seconds is then the cap.
	IOBytes int64 `json:"io_bytes,omitempty"`
	IOCount int64 `json:"io_count,omitempty"`
	Loops   int   `json:"loops,omitempty"`
	// Buffered: the I/O went through the page cache (run --buffered, a
	// fio job with direct=0; targets[].direct is then false); KeepCache:
	// the cache was not dropped first (fio's invalidate=0); FsyncOnClose:
	// the written targets were flushed when the I/O was done.
	Buffered     bool `json:"buffered,omitempty"`
	KeepCache    bool `json:"keep_cache,omitempty"`
	FsyncOnClose bool `json:"fsync_on_close,omitempty"`
	// RandomMap: fio's random map (each block once per pass, I/Os
	// shortened to the free blocks).
	RandomMap bool `json:"random_map,omitempty"`
	// RandomDistribution: fio's random_distribution of the random I/O
	// (zipf:1.2, pareto:0.9, normal:5, zoned:…, zoned_abs:…; absent:
	// uniform); RandomGenerator: "lfsr" when every block was visited once
	// per pass without a map (fio's random_generator=lfsr).
	RandomDistribution string `json:"random_distribution,omitempty"`
	RandomGenerator    string `json:"random_generator,omitempty"`
	// Buffer is what the writes carried when a fio job's buffer options
	// said (workload.BufferContent; absent: ioprobe's own random data,
	// each sector stamped).
	Buffer *workload.BufferContent `json:"buffer,omitempty"`
	// RateReadBPS, RateWriteBPS, RateProcess: fio's rate per direction,
	// bytes per second over all workers (0: that direction unlimited),
	// "" (linear) or "poisson".
	RateReadBPS  int64  `json:"rate_read_bps,omitempty"`
	RateWriteBPS int64  `json:"rate_write_bps,omitempty"`
	RateProcess  string `json:"rate_process,omitempty"`
	// SubmitBatch, CompleteMin, CompletePoll and CompleteMax say how the
	// engine handed I/Os to the kernel when not as fio does by default
	// (each I/O on its own; one completion waited for, one slot refilled):
	// up to SubmitBatch I/Os per call (fio's iodepth_batch_submit),
	// waiting with the queue full for CompleteMin completions
	// (iodepth_batch_complete_min) or polling for them (its 0), refilling
	// up to CompleteMax slots before submitting (iodepth_batch_complete_max).
	SubmitBatch  int  `json:"submit_batch,omitempty"`
	CompleteMin  int  `json:"complete_min,omitempty"`
	CompletePoll bool `json:"complete_poll,omitempty"`
	CompleteMax  int  `json:"complete_max,omitempty"`
	// OffsetBytes, OffsetIncrementBytes: worker k's region started
	// offset + k × increment bytes into each target (fio's offset and
	// offset_increment; targets[].region_bytes is then where the last
	// one ends).
	OffsetBytes          int64 `json:"offset_bytes,omitempty"`
	OffsetIncrementBytes int64 `json:"offset_increment_bytes,omitempty"`
	// FilesInTurn: each worker issued this many I/Os to one of its
	// targets, then to the next, its queue depth over all of them (fio's
	// file_service_type=roundrobin); CloneFiles: each worker had its own
	// share of the targets (fio's per-clone files).
	FilesInTurn int  `json:"files_in_turn,omitempty"`
	CloneFiles  bool `json:"clone_files,omitempty"`
	// SubmitMode is the ring's submission (the uring engine only; the
	// sync engine hands each I/O over on its own): "adaptive", the
	// default, batching only I/Os that cannot merge (docs/engines.md), or
	// "fio", fio's iodepth_batch_* rules with SubmitBatch, CompleteMin,
	// CompletePoll and CompleteMax.
	SubmitMode string `json:"submit_mode,omitempty"`
}

// BlockSize is a transfer size and its weight in the mix.
type BlockSize struct {
	Bytes  int64 `json:"bytes"`
	Weight int   `json:"weight"`
}

// Target describes one target as it was opened.
type Target struct {
	Path      string `json:"path"`
	Kind      string `json:"kind"` // file | block
	SizeBytes int64  `json:"size_bytes"`
	// RegionBytes is how far into this target any workload of the run
	// reached, from offset 0 (its largest region, or where the last
	// worker's region ends with an offset): I/O never reaches past it.
	RegionBytes       int64  `json:"region_bytes,omitempty"`
	Direct            bool   `json:"direct"`
	LogicalBlockBytes int64  `json:"logical_block_bytes"`
	Device            string `json:"device"` // kernel name of the block device the I/O reaches (e.g. "loop0", "vda")
	Created           bool   `json:"created,omitempty"`
	Extended          bool   `json:"extended,omitempty"` // an existing ioprobe file grown to a larger --size
	// ExtendedFromBytes is the size an extended file had before this run
	// grew it (equal to size_bytes when the run only finished a fill that
	// had been interrupted).
	ExtendedFromBytes int64 `json:"extended_from_bytes,omitempty"`
	// Stack is the storage under the target, from the target down to its
	// disks (stack.go); Disk is the disk at its bottom (the first, when
	// there are several), Disks every disk when there are several. Read
	// from sysfs and the kernel's files when the run started.
	Stack []Layer `json:"stack,omitempty"`
	Disk  *Disk   `json:"disk,omitempty"`
	Disks []Disk  `json:"disks,omitempty"`
	// StackUnseen says what of the stack ioprobe could not see (a
	// filesystem that did not answer a statfs in time, a sysfs file it
	// could not read): the stack is then incomplete there.
	StackUnseen []string `json:"stack_unseen,omitempty"`
	// StackChanged says which settings of the stack changed while the run
	// ran ("loop3 scheduler: mq-deadline, then none"): the figures then
	// mix both.
	StackChanged []string `json:"stack_changed,omitempty"`
}

// Summary.Ended's values.
const (
	EndedBudget   = "budget"   // every worker issued its budget and saw it complete
	EndedDuration = "duration" // the run time (the cap) came first
)

// Summary holds the measured figures of the whole run.
type Summary struct {
	// Ended says why the measured window ended for a run with a
	// stop-after budget (fio's size, io_size, number_ios, loops):
	// EndedBudget or EndedDuration. Absent for a run for a time only.
	Ended                    string            `json:"ended,omitempty"`
	Ops                      uint64            `json:"ops"`
	ReadOps                  uint64            `json:"read_ops"`
	WriteOps                 uint64            `json:"write_ops"`
	Bytes                    uint64            `json:"bytes"`
	ReadBytes                uint64            `json:"read_bytes"`
	WriteBytes               uint64            `json:"write_bytes"`
	Errors                   uint64            `json:"errors"`
	ErrorsByClass            map[string]uint64 `json:"errors_by_class,omitempty"`
	ElapsedSeconds           float64           `json:"elapsed_seconds"`
	IOPS                     float64           `json:"iops"`
	ReadIOPS                 float64           `json:"read_iops"`
	WriteIOPS                float64           `json:"write_iops"`
	ThroughputBytesPerSecond float64           `json:"throughput_bytes_per_second"`
	MBPerSecond              float64           `json:"mb_per_second"`
	Latency                  Latency           `json:"latency"`
	ReadLatency              Latency           `json:"read_latency"`
	WriteLatency             Latency           `json:"write_latency"`
	// Sync is the flushes (--fsync, --fdatasync) as measured operations,
	// fio's "sync" section; absent when the workload flushes nothing.
	Sync   *SyncSummary   `json:"sync,omitempty"`
	CPU    CPU            `json:"cpu"`
	Device *DeviceStats   `json:"device,omitempty"`
	Verify *VerifySummary `json:"verify,omitempty"`
	// Lines is each access specification line's figures, for a
	// specification of more than one line.
	Lines []LineSummary `json:"lines,omitempty"`
	// IntendedLatency is the latency of the I/Os (reads and writes) from
	// their intended start, the rate limit's slot for each, to their
	// completion: what an application that issues at that rate waits, a
	// stall included (Latency is the service time, from submission).
	// Absent when the run was not rate-limited.
	IntendedLatency *Latency `json:"intended_latency,omitempty"`
	// Jobs is each job of a point that ran several at once (and the job
	// of a fio job file's point): its specification and its own figures.
	// Absent for a run of one access specification of ioprobe's own.
	Jobs []Job `json:"jobs,omitempty"`
	// HostOthers is what other processes did on the host meanwhile (see
	// HostOthers); absent in results written before it was measured.
	HostOthers *HostOthers `json:"host_others,omitempty"`
}

// SyncSummary counts the flushes (fsync or fdatasync calls) that completed
// in the measured window and their latency, from the sync histogram.
type SyncSummary struct {
	Ops     uint64  `json:"ops"`
	Latency Latency `json:"latency"`
}

// VerifySummary is what --verify found: reads whose data was checked,
// reads it could not check (data this run had not written, on a target
// ioprobe did not fill), and the sectors that failed.
type VerifySummary struct {
	ReadsVerified   uint64 `json:"reads_verified"`
	ReadsUnverified uint64 `json:"reads_unverified"`
	Failures        uint64 `json:"failures"`
	// LostWritesChecked says whether reads were also checked for sectors
	// older than the last write that completed there (off when the
	// bookkeeping, 16 bytes per unit, would exceed 256 MiB).
	LostWritesChecked bool `json:"lost_writes_checked"`
	// FailedSectors lists distinct failing sectors in offset order (at most
	// 1000; FailedSectorsTruncated says when there were more).
	FailedSectors          []VerifyFailure `json:"failed_sectors,omitempty"`
	FailedSectorsTruncated bool            `json:"failed_sectors_truncated,omitempty"`
}

// VerifyFailure is one sector that failed verification.
type VerifyFailure struct {
	Target  string `json:"target"`
	Offset  int64  `json:"offset"`
	Problem string `json:"problem"`
}

// Latency summarises a latency distribution, in seconds.
type Latency struct {
	MeanSeconds   float64            `json:"mean_seconds"`
	MinSeconds    float64            `json:"min_seconds"`
	MaxSeconds    float64            `json:"max_seconds"`
	StddevSeconds float64            `json:"stddev_seconds"`
	Percentiles   map[string]float64 `json:"percentiles"`
}

// CPU holds the reports' CPU figures for the measured window.
type CPU struct {
	ProcessUserSeconds     float64 `json:"process_user_seconds"`
	ProcessSystemSeconds   float64 `json:"process_system_seconds"`
	ProcessCPUSecondsPerIO float64 `json:"process_cpu_seconds_per_io"`
	HostBusyCores          float64 `json:"host_busy_cores"`
	HostUtilizationPct     float64 `json:"host_utilization_pct"`
	HostCPUSecondsPerIO    float64 `json:"host_cpu_seconds_per_io"`
	CyclesPerIO            float64 `json:"cycles_per_io"`
	IOPSPerCPUPct          float64 `json:"iops_per_cpu_pct"`
	MBPerSecondPerCPUPct   float64 `json:"mb_per_second_per_cpu_pct"`
}

// DeviceStats is the kernel's own count (the /sys/block/DEV/stat delta) over
// the measured window, summed over the devices the targets sit on.
type DeviceStats struct {
	Devices    []string `json:"devices"`
	ReadOps    uint64   `json:"read_ops"`
	WriteOps   uint64   `json:"write_ops"`
	ReadBytes  uint64   `json:"read_bytes"`
	WriteBytes uint64   `json:"write_bytes"`
	// FlushOps and FlushSeconds are the flush requests the block layer
	// completed and the time it spent on them (fields 16 and 17; kernels
	// before 5.5 have neither and report 0).
	FlushOps     uint64  `json:"flush_ops"`
	FlushSeconds float64 `json:"flush_seconds"`
	// FlushDevices are the whole disks whose flushes FlushOps,
	// FlushSeconds and Latency.Flush count for devices that are
	// partitions: a flush request is the disk's (the block layer counts it
	// on the disk, never on a partition), so these are every flush of the
	// disk in the window, whichever partition asked for it.
	FlushDevices []string `json:"flush_devices,omitempty"`
	// OwnReadOps and OwnReadBytes are ioprobe's own reads in the window
	// that are not the workload's (the safety checks' looks of a run that
	// writes): the kernel counted them, and ReadOps and ReadBytes leave
	// them out, so that they count the workload's requests (the kernel's
	// own count is the sum). The device-latency programs count the
	// requests that carry ioprobe's mark (internal/ownio); without them,
	// they are the looks' reads in the window as ioprobe counted them.
	OwnReadOps   uint64 `json:"own_read_ops,omitempty"`
	OwnReadBytes uint64 `json:"own_read_bytes,omitempty"`
	// OwnInLatency says why ioprobe's own reads are in Latency, when they
	// are (a kernel without I/O priority hints cannot carry the mark).
	OwnInLatency string `json:"own_in_latency,omitempty"`
	// ReadMerges and WriteMerges are the I/Os the block layer merged into
	// a request it already held (fields 2 and 6): ReadOps and WriteOps
	// count requests, so each merge is one I/O that did not reach the
	// device in the size it was issued.
	ReadMerges  uint64 `json:"read_merges"`
	WriteMerges uint64 `json:"write_merges"`
	// Shared, in a merged result, lists the devices that several of the
	// merged runs measured on one machine at the same time: the kernel
	// counted each I/O there once for all of them, so their counts are
	// taken once (the largest), not summed.
	Shared []SharedDevices `json:"shared,omitempty"`
	// Latency is the devices' own service time and QueueLatency their
	// queue time, measured in the kernel per request (eBPF on the block
	// layer's tracepoints; every request of the devices in the window,
	// another process's too): histogram.device summarised. Absent when
	// they could not be measured, and LatencyUnavailable says why.
	Latency            *DeviceLatency `json:"latency,omitempty"`
	QueueLatency       *QueueLatency  `json:"queue_latency,omitempty"`
	LatencyUnavailable string         `json:"latency_unavailable,omitempty"`
}

// SharedDevices are devices several merged runs measured at once on one
// machine.
type SharedDevices struct {
	Hosts   []string `json:"hosts"`
	Devices []string `json:"devices"`
	Runs    int      `json:"runs"`
}

// CountedLatency is a latency summary with the count of what it
// summarises.
type CountedLatency struct {
	Count uint64 `json:"count"`
	Latency
}

// DeviceOpLatency is one direction's service time and its requests'
// bytes.
type DeviceOpLatency struct {
	CountedLatency
	Bytes uint64 `json:"bytes"`
}

// DeviceLatency is the service time (issue to completion: the driver and
// the device) of the requests the devices completed in the window: reads
// and writes together, each direction, and the flushes apart. Discards
// are counted; their time is not kept.
type DeviceLatency struct {
	CountedLatency
	Read     DeviceOpLatency `json:"read"`
	Write    DeviceOpLatency `json:"write"`
	Flush    CountedLatency  `json:"flush"`
	Discards uint64          `json:"discards"`
	// Untimed are requests the devices completed in the window that the
	// programs could not time (issued before they were loaded, or on a
	// hardware queue or tag beyond those the device had when they were):
	// counted here, not in the statistics.
	Untimed uint64 `json:"untimed,omitempty"`
}

// QueueLatency is the queue time of the reads and writes the devices
// served in the window: from the request's start (the kernel's own
// stamp, rq->start_time_ns, from which diskstats count a request's time)
// to its issue to the driver. Every request has one where the queue
// keeps start times; NoStart counts those that had none.
type QueueLatency struct {
	CountedLatency
	Read  CountedLatency `json:"read"`
	Write CountedLatency `json:"write"`
	// NoStart are the reads and writes timed without a queue time: their
	// queue keeps no start time (iostats 0, no I/O scheduler, no blk-stat
	// user such as writeback throttling).
	NoStart uint64 `json:"no_start,omitempty"`
}

// countedOf summarises h with its count.
func countedOf(h *Histogram) CountedLatency {
	return CountedLatency{Count: h.Count(), Latency: LatencyOf(h)}
}

// SetDeviceLatency sets d's latency summaries from h (nil: not measured,
// and why) and the requests' bytes.
func (d *DeviceStats) SetDeviceLatency(h *DeviceHistograms, readBytes, writeBytes, discards uint64, why string) {
	if !h.complete() {
		d.Latency, d.QueueLatency, d.LatencyUnavailable = nil, nil, why
		return
	}
	rw := NewHistogram()
	rw.Merge(h.Read)
	rw.Merge(h.Write)
	d.Latency = &DeviceLatency{CountedLatency: countedOf(rw),
		Read:     DeviceOpLatency{CountedLatency: countedOf(h.Read), Bytes: readBytes},
		Write:    DeviceOpLatency{CountedLatency: countedOf(h.Write), Bytes: writeBytes},
		Flush:    countedOf(h.Flush),
		Discards: discards}
	q := NewHistogram()
	q.Merge(h.QueueRead)
	q.Merge(h.QueueWrite)
	d.QueueLatency = &QueueLatency{CountedLatency: countedOf(q), Read: countedOf(h.QueueRead), Write: countedOf(h.QueueWrite)}
	d.LatencyUnavailable = ""
}

// SetUntimed sets what the device-latency programs counted without
// timing it (DeviceLatency.Untimed, QueueLatency.NoStart), once
// SetDeviceLatency has set the summaries.
func (d *DeviceStats) SetUntimed(untimed, noStart uint64) {
	if d.Latency != nil {
		d.Latency.Untimed = untimed
	}
	if d.QueueLatency != nil {
		d.QueueLatency.NoStart = noStart
	}
}

// Histograms carries the full latency distributions, per op, so that results
// merge exactly.
type Histograms struct {
	Read  *Histogram `json:"read"`
	Write *Histogram `json:"write"`
	// Sync is the flushes' latency (absent when nothing flushed). It is
	// not an I/O: Combined leaves it out.
	Sync *Histogram `json:"sync,omitempty"`
	// Intended is the latency from the intended start of every read and
	// write (summary.intended_latency); absent when the run was not
	// rate-limited. It is not a service time: Combined leaves it out.
	Intended *Histogram `json:"intended,omitempty"`
	// Device is the devices' own latency, measured in the kernel
	// (summary.device.latency and queue_latency); absent when it was not
	// measured.
	Device *DeviceHistograms `json:"device,omitempty"`
}

// DeviceHistograms are the latency distributions of the requests the
// block devices under the targets served in the measured window, all of
// them (another process's too) but ioprobe's own checks, timed in the
// kernel: the service time from issue to completion of reads, writes and
// flushes, and the queue time from the request's start (the kernel's own
// stamp) to its issue of the reads and writes.
type DeviceHistograms struct {
	Read       *Histogram `json:"read"`
	Write      *Histogram `json:"write"`
	Flush      *Histogram `json:"flush"`
	QueueRead  *Histogram `json:"queue_read"`
	QueueWrite *Histogram `json:"queue_write"`
}

// NewDeviceHistograms returns empty device histograms.
func NewDeviceHistograms() *DeviceHistograms {
	return &DeviceHistograms{Read: NewHistogram(), Write: NewHistogram(), Flush: NewHistogram(), QueueRead: NewHistogram(), QueueWrite: NewHistogram()}
}

// Add merges o into d (no histogram of either may be nil).
func (d *DeviceHistograms) Add(o *DeviceHistograms) {
	d.Read.Merge(o.Read)
	d.Write.Merge(o.Write)
	d.Flush.Merge(o.Flush)
	d.QueueRead.Merge(o.QueueRead)
	d.QueueWrite.Merge(o.QueueWrite)
}

// complete says whether every histogram is there (a hand-made result may
// leave one out).
func (d *DeviceHistograms) complete() bool {
	return d != nil && d.Read != nil && d.Write != nil && d.Flush != nil && d.QueueRead != nil && d.QueueWrite != nil
}

// Interval is one snapshot period of the measured window.
type Interval struct {
	TSeconds           float64 `json:"t_seconds"` // end of the interval, from the start of measurement
	IOPS               float64 `json:"iops"`
	BytesPerSecond     float64 `json:"bytes_per_second"`
	LatencyMeanSeconds float64 `json:"latency_mean_seconds"`
	LatencyP99Seconds  float64 `json:"latency_p99_seconds"`
	Errors             uint64  `json:"errors,omitempty"`
}

// MergeInfo records what a merged result was built from.
type MergeInfo struct {
	Runs  int      `json:"runs"`
	Hosts []string `json:"hosts"`
	// Periods, when more than one, is how many spans of time the runs
	// fell into without overlapping: their rates were not summed as
	// concurrent load but averaged over the periods' time (see Merge).
	Periods int `json:"periods,omitempty"`
	// Of lists each run merged in, once: a merge of this result with one
	// of them is refused (it would count that run twice).
	Of []RunRef `json:"of,omitempty"`
	// StorageDiffers says where the storage of the runs merged differed
	// ("disk scheduler: mq-deadline on node1; none on node2"): the merged
	// figures then mix storage set up differently.
	StorageDiffers []string `json:"storage_differs,omitempty"`
}

// Suite is the output of `ioprobe suite`: one result per point and
// target, in the order they ran.
type Suite struct {
	Schema  string    `json:"schema"`
	Suite   string    `json:"suite"`
	Results []*Result `json:"results"`
	// Title and Source describe the suite and the report it rebuilds.
	Title  string `json:"title,omitempty"`
	Source string `json:"source,omitempty"`
	// Version and StartedAt are those of the ioprobe that ran it.
	Version   string    `json:"version,omitempty"`
	StartedAt time.Time `json:"started_at,omitzero"`
	// Options records what the command line set for every point.
	Options *SuiteOptions `json:"options,omitempty"`
	// Fleet, for `ioprobe fleet suite`, says where it ran; each result
	// is then a point merged over its hosts, which it carries.
	Fleet *FleetSuite `json:"fleet,omitempty"`
}

// FleetSuite is where a fleet suite ran.
type FleetSuite struct {
	Target      string   `json:"target"`
	Hosts       []string `json:"hosts"`
	Partial     bool     `json:"partial"`
	FailedHosts []string `json:"failed_hosts"`
	// Failures says where each failed host failed: at which point (the
	// suite stops after it; the points before are kept).
	Failures []FleetFailure `json:"failures,omitempty"`
}

// FleetFailure is one host's failure in a fleet suite.
type FleetFailure struct {
	Address string `json:"address"`
	// Point is the point's name and Hosts the host count it ran on (with
	// --cycle hosts=…).
	Point string `json:"point"`
	Hosts int    `json:"hosts,omitempty"`
	// State is the host's state there (failed, stopped, unreachable).
	State RunState `json:"state"`
	Error string   `json:"error,omitempty"`
}

// SuiteOptions records the command line of a suite run.
type SuiteOptions struct {
	Targets         []string `json:"targets"`
	DurationSeconds float64  `json:"duration_seconds"`
	RampSeconds     float64  `json:"ramp_seconds"`
	RegionBytes     int64    `json:"region_bytes,omitempty"`
	QueueDepth      int      `json:"queue_depth,omitempty"`
	Workers         int      `json:"workers,omitempty"`
	Cycles          []string `json:"cycles,omitempty"`
	Repeat          int      `json:"repeat,omitempty"`
	ReadOnly        bool     `json:"read_only,omitempty"`
	Engine          string   `json:"engine,omitempty"`
}

// PercentileKeys are the percentiles every Latency carries, as JSON keys.
var PercentileKeys = []string{"50", "90", "99", "99.9", "99.99"}

// percentileQ maps a key to its quantile.
var percentileQ = map[string]float64{"50": 0.50, "90": 0.90, "99": 0.99, "99.9": 0.999, "99.99": 0.9999}

// LatencyOf summarises a histogram in seconds.
func LatencyOf(h *Histogram) Latency {
	l := Latency{Percentiles: map[string]float64{}}
	for _, k := range PercentileKeys {
		l.Percentiles[k] = 0
	}
	if h == nil || h.Count() == 0 {
		return l
	}
	l.MeanSeconds = h.Mean() / 1e9
	l.MinSeconds = float64(h.Min()) / 1e9
	l.MaxSeconds = float64(h.Max()) / 1e9
	l.StddevSeconds = h.Stddev() / 1e9
	for _, k := range PercentileKeys {
		l.Percentiles[k] = h.Quantile(percentileQ[k]) / 1e9
	}
	return l
}

// Combined returns the read and write histograms merged.
func (h Histograms) Combined() *Histogram {
	out := NewHistogram()
	if h.Read != nil {
		out.Merge(h.Read)
	}
	if h.Write != nil {
		out.Merge(h.Write)
	}
	return out
}

// Add merges o's histograms into h (h's must not be nil).
func (h Histograms) Add(o Histograms) {
	if o.Read != nil {
		h.Read.Merge(o.Read)
	}
	if o.Write != nil {
		h.Write.Merge(o.Write)
	}
	if o.Sync != nil && h.Sync != nil {
		h.Sync.Merge(o.Sync)
	}
	if o.Intended != nil && h.Intended != nil {
		h.Intended.Merge(o.Intended)
	}
	if o.Device.complete() && h.Device.complete() {
		h.Device.Add(o.Device)
	}
}

// Covers says whether the histograms hold every op that s counts (a
// hand-made or old result may have counts without histograms).
func (h Histograms) Covers(s *Summary) bool {
	return (h.Read != nil || s.ReadOps == 0) && (h.Write != nil || s.WriteOps == 0) &&
		(h.Sync != nil || s.Sync == nil || s.Sync.Ops == 0)
}

// SetFromHistograms sets the op counts, the byte total and the latency
// summaries from the histograms and the byte counts: the one definition of
// those figures for a run and for merged runs.
func (s *Summary) SetFromHistograms(h Histograms) {
	if h.Read != nil {
		s.ReadOps = h.Read.Count()
	}
	if h.Write != nil {
		s.WriteOps = h.Write.Count()
	}
	s.Ops = s.ReadOps + s.WriteOps
	s.Bytes = s.ReadBytes + s.WriteBytes
	s.Latency = LatencyOf(h.Combined())
	s.ReadLatency = LatencyOf(h.Read)
	s.WriteLatency = LatencyOf(h.Write)
	s.Sync = nil
	if h.Sync != nil {
		s.Sync = &SyncSummary{Ops: h.Sync.Count(), Latency: LatencyOf(h.Sync)}
	}
	s.IntendedLatency = nil
	if h.Intended != nil {
		l := LatencyOf(h.Intended)
		s.IntendedLatency = &l
	}
}

// Decode reads a result, suite or fleet file and returns its results. A
// result file yields one result; a suite yields all of them and its name;
// a fleet run yields its merged result, which carries its hosts' (none
// when no host measured anything).
func Decode(r io.Reader) (suite string, results []*Result, err error) {
	return DecodeWithin(r, &DecodeBudget{})
}

// DecodeWithin is Decode counting the document in b, which the
// documents read with it share.
func DecodeWithin(r io.Reader, b *DecodeBudget) (suite string, results []*Result, err error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return "", nil, err
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return "", nil, fmt.Errorf("not an ioprobe result: %v", err)
	}
	switch head.Schema {
	case Schema:
		var res Result
		if err := decodeDoc(data, &res, b); err != nil {
			return "", nil, fmt.Errorf("bad %s document: %v", Schema, err)
		}
		renameSections([]*Result{&res})
		return "", []*Result{&res}, nil
	case SuiteSchema:
		var s Suite
		if err := decodeDoc(data, &s, b); err != nil {
			return "", nil, fmt.Errorf("bad %s document: %v", SuiteSchema, err)
		}
		renameSections(s.Results)
		return s.Suite, s.Results, nil
	case FleetSchema:
		var f Fleet
		if err := decodeDoc(data, &f, b); err != nil {
			return "", nil, fmt.Errorf("bad %s document: %v", FleetSchema, err)
		}
		if m := f.MergedOf(); m != nil {
			renameSections([]*Result{m})
			return "", []*Result{m}, nil
		}
		return "", nil, nil
	default:
		return "", nil, fmt.Errorf("unknown schema %q (want %s, %s or %s)", head.Schema, Schema, SuiteSchema, FleetSchema)
	}
}
