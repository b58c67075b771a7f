package workload

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// BlockSize is one transfer size of an access specification and its weight
// (relative share of I/Os, as in Iometer's "% of access specification").
type BlockSize struct {
	Bytes  int64 `json:"bytes"`
	Weight int   `json:"weight"`
}

// Limits that Validate enforces. They are generous on purpose: they exist to
// catch typos (qd=16000) before anything is allocated, not to second-guess
// the user.
const (
	MinBlockSize  = 512
	MaxBlockSize  = 64 * MiB
	MaxBlockSizes = 16
	MaxQueueDepth = 1024
	MaxWorkers    = 1024
	MaxWeight     = 10000
	MaxDuration   = 365 * 24 * time.Hour
	MaxRateIOPS   = 100_000_000
	MaxFlushEvery = 1 << 30
)

// Sync modes (--sync): how targets are opened for writing, fio's names.
const (
	SyncNone  = ""      // neither: writes are durable only after a flush
	SyncDsync = "dsync" // O_DSYNC: each write returns once its data is durable
	SyncSync  = "sync"  // O_SYNC: data and metadata
)

// SyncModes are the values Spec.Sync accepts ("none" reads as "").
var SyncModes = []string{"none", SyncDsync, SyncSync}

// NormalizeSync maps a --sync value as given to Spec.Sync: "none" (fio's
// word for the default) is "". Validate judges the rest.
func NormalizeSync(v string) string {
	if v == "none" {
		return SyncNone
	}
	return v
}

// EngineName names an I/O engine: the engines' own Name(), what
// Spec.Engine accepts and what a result's workload says ran (internal/cli's
// test checks them against the engine registry).
type EngineName string

// Engine names.
const (
	EngineAuto  EngineName = "auto" // uring where it works, else sync
	EngineSync  EngineName = "sync"
	EngineURing EngineName = "uring"
)

// EngineNames are the names Spec.Engine accepts.
var EngineNames = []EngineName{EngineAuto, EngineSync, EngineURing}

// Spec is an access specification plus the run parameters that Iometer keeps
// beside it (outstanding I/Os, workers, ramp-up, run time). Zero values mean
// "the default" wherever a default exists; call WithDefaults before use.
type Spec struct {
	Name        string        `json:"name"`
	BlockSizes  []BlockSize   `json:"block_sizes"`
	ReadPct     int           `json:"read_pct"`
	RandomPct   int           `json:"random_pct"`
	Align       int64         `json:"align_bytes,omitempty"` // 0: the smallest block size
	RegionBytes int64         `json:"region_bytes"`          // 0: the whole target
	QueueDepth  int           `json:"queue_depth"`           // outstanding I/Os per worker per target
	Workers     int           `json:"workers"`               // engine loops
	Ramp        time.Duration `json:"-"`                     // run, but do not count
	Duration    time.Duration `json:"-"`                     // measured run time
	RateIOPS    int           `json:"rate_iops,omitempty"`   // 0: unlimited; total over all workers
	Engine      EngineName    `json:"engine"`                // auto | sync | uring
	Seed        uint64        `json:"seed,omitempty"`        // 0: random per run
	Verify      bool          `json:"verify,omitempty"`      // write self-describing blocks, check them on read
	// Fsync and Fdatasync (fio's fsync=N, fdatasync=N): each worker
	// flushes a target after every N writes it issued there (0: never).
	// At most one of them is set.
	Fsync     int    `json:"fsync,omitempty"`
	Fdatasync int    `json:"fdatasync,omitempty"`
	Sync      string `json:"sync,omitempty"` // "" | dsync | sync (SyncModes)
	// Lines, when set, is the access specification as Iometer writes it
	// (each line its own size, share, % read, % random, alignment, delay
	// and burst); BlockSizes, ReadPct, RandomPct and Align are then unset.
	// Normalized returns the lines of either form.
	Lines []Line `json:"lines,omitempty"`
	// SequentialStreams says which earlier I/O a sequential one follows:
	// "" (StreamsWorker, Iometer's rule) the worker's previous I/O on the
	// target whatever its direction; "direction" (StreamsDirection, fio's
	// rule: io_u.c, last_pos[ddir]) a sequential read follows the
	// previous read, a sequential write the previous write.
	SequentialStreams string `json:"sequential_streams,omitempty"`
	// Budget, when Loops > 0, ends each worker's I/O as fio ends a job
	// without time_based: a worker stops issuing once it has issued
	// Loops × IOCount I/Os (IOCount > 0) or Loops × IOBytes bytes (0:
	// the sum of its targets' regions, fio's default io_size=size),
	// whichever comes first, ramp-up included (fio counts its ramp_time
	// I/O towards size). The run ends when every worker is done, or at
	// Duration, which is then a cap. Loops 0: a run for a time only.
	IOBytes int64 `json:"io_bytes,omitempty"` // per worker and loop
	IOCount int64 `json:"io_count,omitempty"` // per worker and loop
	Loops   int   `json:"loops,omitempty"`
	// Buffered runs the I/O through the page cache (fio's direct=0, run
	// --buffered): targets are opened without O_DIRECT, so transfer sizes
	// and offsets need not be whole sectors. Before the run, and each time
	// a pass over the region starts again, the target's cached pages are
	// dropped (fio's invalidate=1) unless KeepCache (invalidate=0).
	Buffered  bool `json:"buffered,omitempty"`
	KeepCache bool `json:"keep_cache,omitempty"`
	// FsyncOnClose flushes each written target once the run's I/O is done
	// (fio's fsync_on_close=1), outside the measured figures as in fio.
	FsyncOnClose bool `json:"fsync_on_close,omitempty"`
	// RandomMap is fio's random map (its default without norandommap):
	// each worker keeps, per target, a bit per block of the smallest
	// transfer size; a random I/O starts at a free block (the next free
	// one after a drawn block that is taken), takes a transfer size that
	// fits before the region's end, and is shortened to the free blocks
	// from its start. Once every block was touched the map (and the
	// sequential positions) start again: a new pass.
	RandomMap bool `json:"random_map,omitempty"`
	// RandomDistribution is fio's random_distribution for random I/O, in
	// fio's words as ParseDistribution reads them: "" uniform (fio's
	// random), zipf:THETA, pareto:H, normal:DEV (a center after a
	// further colon), zoned and zoned_abs. Each worker draws the blocks
	// of the smallest transfer with fio's generator on each target (its
	// ranks spread by fio's hash, its hot spot placed once per worker and
	// target); a transfer size that would pass the region's end gives way
	// to one that fits. fio turns its random map off for any but the
	// uniform one, and so must RandomMap be.
	RandomDistribution string `json:"random_distribution,omitempty"`
	// RandomGenerator is fio's random_generator where it changes more
	// than the sequence: "lfsr" visits every block once per pass in a
	// scrambled order, without a map (""; tausworthe, repeats allowed).
	RandomGenerator string `json:"random_generator,omitempty"`
	// Buffer is what writes carry when a fio job says (its buffer
	// options: see BufferContent); nil, ioprobe's own: random data with
	// every 512-byte sector stamped to describe itself (internal/verify).
	Buffer *BufferContent `json:"buffer,omitempty"`
	// RateReadBPS and RateWriteBPS are fio's rate per direction (rate=,
	// or rate_iops times the smallest transfer size) in bytes per second
	// over all workers (0: that direction is not limited). Each worker
	// keeps a schedule per direction and, when the direction it drew is
	// ahead of its schedule and the other is not, issues the other one
	// (fio's rate_ddir), so a capped mix runs at the caps, not at its
	// read share. RateProcess is "" (linear: fio's default) or "poisson"
	// (exponential gaps between I/Os). Exclusive with RateIOPS.
	RateReadBPS  int64  `json:"rate_read_bps,omitempty"`
	RateWriteBPS int64  `json:"rate_write_bps,omitempty"`
	RateProcess  string `json:"rate_process,omitempty"`
	// SubmitBatch is fio's iodepth_batch_submit: a worker hands at most
	// this many I/Os to the kernel in one submission (capped at its
	// queue depth × targets). 0 or 1 is fio's default: each I/O on its
	// own, so that the block layer plugs nothing across I/Os and a
	// sequential stream reaches the device in the sizes asked for rather
	// than merged. More saves system calls, and lets the block layer
	// merge contiguous I/Os submitted together.
	SubmitBatch int `json:"submit_batch,omitempty"`
	// CompleteMin is fio's iodepth_batch_complete_min: with its queue
	// full, a worker waits for this many completions before it issues
	// more (0 or 1: one, fio's default). CompletePoll is fio's
	// iodepth_batch_complete_min=0: it checks for completions without
	// sleeping, spending a CPU to notice them sooner. CompleteMax is
	// fio's iodepth_batch_complete_max: it refills at most this many
	// slots before it submits again (0: CompleteMin, fio's default, so
	// that by default each completion is followed by one submission and
	// the queue stays at its depth).
	CompleteMin  int  `json:"complete_min,omitempty"`
	CompletePoll bool `json:"complete_poll,omitempty"`
	CompleteMax  int  `json:"complete_max,omitempty"`
	// Offset and OffsetIncrement place each worker's region on its
	// targets (fio's offset and offset_increment): worker k's region
	// starts Offset + k × OffsetIncrement bytes into each target, and is
	// RegionBytes long (0: to the target's end). Without them every
	// region starts at the target's start.
	Offset          int64 `json:"offset_bytes,omitempty"`
	OffsetIncrement int64 `json:"offset_increment_bytes,omitempty"`
	// OffsetAlign, when set, rounds each worker's start up to a multiple
	// of it (fio rounds an offset given in % up to the smallest
	// transfer, clone by clone).
	OffsetAlign int64 `json:"offset_align_bytes,omitempty"`
	// FilesInTurn, when set, is fio's file_service_type=roundrobin:N for
	// a worker with several targets: it issues N I/Os to one target, then
	// N to the next, in turn, its QueueDepth I/Os in flight over all of
	// them (fio's iodepth is the job's), one sequential position and
	// random map per target. 0: each target has its own QueueDepth
	// I/Os in flight at once (ioprobe's and Iometer's rule).
	FilesInTurn int `json:"files_in_turn,omitempty"`
	// CloneFiles gives each worker its own share of the targets, in order
	// (worker k the k-th of Workers equal shares), as fio gives each job
	// clone its own files ($jobname.$jobnum.$filenum) when the job names
	// none. false: every worker runs on every target.
	CloneFiles bool `json:"clone_files,omitempty"`
	// SubmitMode is how a ring hands I/Os to the kernel. SubmitAdaptive
	// (or "", the default when none of SubmitBatch, CompleteMin,
	// CompletePoll and CompleteMax is set) batches what cannot merge:
	// every I/O drawn goes into one io_uring_enter with the others drawn
	// in the same pass, except one contiguous with an I/O of that batch,
	// or with the last I/O handed to the kernel for its target, which
	// starts a new call; and every completion found is refilled in the
	// same pass, unless the stream just drew contiguous I/Os (then one,
	// as fio). So sequential I/O reaches the device one I/O per call and
	// unmerged, as fio's, and random I/O costs one call per pass, not
	// one per I/O. SubmitFio is fio's iodepth_batch_* rules with the
	// fields above (fio's defaults where unset): what --batch-* and a job
	// file's iodepth_batch* options ask for.
	SubmitMode string `json:"submit_mode,omitempty"`
}

// WorkerRegion is the start of worker k's region on a target (Offset +
// k × OffsetIncrement, rounded up to OffsetAlign).
func (s *Spec) WorkerRegion(k int) int64 {
	off := s.Offset + int64(k)*s.OffsetIncrement
	if a := s.OffsetAlign; a > 0 && off%a != 0 {
		off += a - off%a
	}
	return off
}

// Extent is how far into a target the regions of every worker reach when
// RegionBytes is set (0 when it is not: to the target's end).
func (s *Spec) Extent() int64 {
	if s.RegionBytes == 0 {
		return 0
	}
	return s.WorkerRegion(max(s.Workers, 1)-1) + s.RegionBytes
}

// Submission modes (Spec.SubmitMode).
const (
	SubmitAdaptive = "adaptive"
	SubmitFio      = "fio"
)

// Adaptive says whether a ring submits by the adaptive rule
// (Spec.SubmitMode): nothing asked for fio's batching, by mode or by any
// of its fields.
func (s *Spec) Adaptive() bool {
	return s.SubmitMode != SubmitFio && s.SubmitBatch == 0 && s.CompleteMin == 0 && !s.CompletePoll && s.CompleteMax == 0
}

// Submission returns, for a worker of n queue slots, how many I/Os it
// submits at once, how many completions it waits for once its queue is
// full (0 when it polls) and how many slots it refills before it submits
// again: SubmitBatch, CompleteMin and CompleteMax with fio's defaults,
// capped at n as fio caps them at iodepth.
//
// By the adaptive rule (Adaptive) a batch may hold every slot and every
// completion found is refilled before the next submission, waiting for
// one completion with the queue full; the ring splits a batch where two
// I/Os would merge.
func (s *Spec) Submission(n int) (batch, completeMin, completeMax int) {
	if s.Adaptive() {
		return max(1, n), 1, max(1, n)
	}
	batch, completeMin = max(1, min(s.SubmitBatch, n)), max(1, min(s.CompleteMin, n))
	completeMax = max(completeMin, min(s.CompleteMax, n))
	if s.CompletePoll {
		completeMin = 0
	}
	return batch, completeMin, completeMax
}

// Rate processes (Spec.RateProcess): fio's names.
const (
	RateLinear  = ""
	RatePoisson = "poisson"
)

// RatedByDirection reports whether the spec has fio's rate per direction.
func (s *Spec) RatedByDirection() bool { return s.RateReadBPS > 0 || s.RateWriteBPS > 0 }

// Sequential stream modes (Spec.SequentialStreams).
const (
	StreamsWorker    = ""          // one stream per worker per target (Iometer)
	StreamsDirection = "direction" // one per direction (fio)
)

// Budgeted reports whether the workers stop after a number of bytes or
// I/Os (Loops > 0) rather than only at Duration.
func (s *Spec) Budgeted() bool { return s.Loops > 0 }

// StopAfterIOs makes each worker stop after n I/Os, Duration then only
// a cap: fio's number_ios without time_based, one loop of them (run's
// --number-ios, a job's or a module's number_ios).
func (s *Spec) StopAfterIOs(n int64) { s.IOCount, s.Loops = n, 1 }

// StopAfterBytes makes each worker stop after n bytes, Duration then
// only a cap: fio's io_size without time_based, one loop (run's
// --io-size).
func (s *Spec) StopAfterBytes(n int64) { s.IOBytes, s.Loops = n, 1 }

// FlushEvery returns after how many writes a worker flushes a target (0:
// never) and whether the flush is an fdatasync (else an fsync).
func (s *Spec) FlushEvery() (n int, datasync bool) {
	if s.Fdatasync > 0 {
		return s.Fdatasync, true
	}
	return s.Fsync, false
}

// Defaults: Iometer's (1 worker, 16 outstanding I/Os) and a 4 KiB random
// read, the figure a storage engineer asks for first.
const (
	DefaultQueueDepth = 16
	DefaultWorkers    = 1
	DefaultDuration   = 60 * time.Second
	DefaultRamp       = 10 * time.Second
	DefaultBlockSize  = 4 * KiB
	DefaultRegion     = 1 * GiB // for a file target ioprobe creates
)

// WithDefaults returns a copy with every unset field given its default.
// ReadPct and RandomPct have no "unset" value; presets set them.
func (s Spec) WithDefaults() Spec {
	if len(s.Lines) > 0 {
		s.Lines = append([]Line(nil), s.Lines...)
		if len(s.Lines) == 1 && s.Lines[0].Share == 0 {
			s.Lines[0].Share = TotalShare
		}
	} else if len(s.BlockSizes) == 0 {
		s.BlockSizes = []BlockSize{{Bytes: DefaultBlockSize, Weight: 1}}
	}
	if s.QueueDepth == 0 {
		s.QueueDepth = DefaultQueueDepth
	}
	if s.Workers == 0 {
		s.Workers = DefaultWorkers
	}
	if s.Engine == "" {
		s.Engine = EngineAuto
	}
	bs := make([]BlockSize, len(s.BlockSizes))
	copy(bs, s.BlockSizes)
	for i := range bs {
		if bs[i].Weight == 0 {
			bs[i].Weight = 1
		}
	}
	s.BlockSizes = bs
	return s
}

// MinBlock and MaxBlock return the smallest and largest transfer size.
func (s *Spec) MinBlock() int64 {
	var m int64
	for i, b := range s.Normalized() {
		if i == 0 || b.Bytes < m {
			m = b.Bytes
		}
	}
	return m
}

// MaxBlock returns the largest transfer size.
func (s *Spec) MaxBlock() int64 {
	var m int64
	for _, b := range s.Normalized() {
		if b.Bytes > m {
			m = b.Bytes
		}
	}
	return m
}

// Alignment returns the offset alignment in bytes: Align when set, else the
// smallest transfer size (fio's blockalign default). For a spec that only
// lines can express it is the granularity every offset and transfer keeps:
// the greatest common divisor of the lines' sizes and alignments (what the
// device's logical block must divide).
func (s *Spec) Alignment() int64 {
	if len(s.Lines) > 0 && !s.OneLineForm() {
		minBlock, a := s.MinBlock(), int64(0)
		for _, l := range s.Lines {
			a = gcd(gcd(a, l.Bytes), lineAlign(l, minBlock))
		}
		return a
	}
	if len(s.Lines) > 0 && s.Lines[0].Align > 0 {
		return s.Lines[0].Align
	}
	if s.Align > 0 {
		return s.Align
	}
	return s.MinBlock()
}

// WritesData reports whether the workload issues any write.
func (s *Spec) WritesData() bool {
	for _, l := range s.Normalized() {
		if l.ReadPct < 100 && l.Share > 0 {
			return true
		}
	}
	return false
}

// FieldError names the bad field, the value and what is accepted. The CLI
// maps it to exit status 2.
type FieldError struct {
	// Field is what was given, as the command line names it ("--qd").
	Field string
	// Spec, for a field of an access specification, is which one, so
	// that the config and the run API name it in their words; Line, for a
	// line of a multi-line specification, its number from 1.
	Spec   SpecField
	Line   int
	Value  string
	Reason string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s %s: %s", e.Field, e.Value, e.Reason)
}

func fieldErr(field string, value any, format string, args ...any) error {
	return &FieldError{Field: field, Value: fmt.Sprint(value), Reason: fmt.Sprintf(format, args...)}
}

// Validate checks every field against its accepted range and names the
// first one that is out of it. It does not know the target, so alignment
// against the device's logical block size is checked later (by the target).
func (s *Spec) Validate() error {
	if len(s.Lines) > 0 {
		if err := s.validateLines(); err != nil {
			return err
		}
	} else if err := s.validateMix(); err != nil {
		return err
	}
	return s.validateRun()
}

// validateMix checks today's one-line form: the block-size mix and its
// one % read, % random and alignment.
func (s *Spec) validateMix() error {
	if len(s.BlockSizes) == 0 {
		return specErr(FieldBlockSizes, "(none)", "at least one transfer size is needed")
	}
	if len(s.BlockSizes) > MaxBlockSizes {
		return specErr(FieldBlockSizes, len(s.BlockSizes), "at most %d transfer sizes", MaxBlockSizes)
	}
	seen := map[int64]bool{}
	for _, b := range s.BlockSizes {
		if why := s.sizeProblem(b.Bytes); why != "" {
			return specErr(FieldBlockSizes, FormatSize(b.Bytes), "%s", why)
		}
		if b.Weight < 1 || b.Weight > MaxWeight {
			return specErr(FieldBlockSizes, fmt.Sprintf("%s:%d", FormatSize(b.Bytes), b.Weight), "weight must be between 1 and %d", MaxWeight)
		}
		if seen[b.Bytes] {
			return specErr(FieldBlockSizes, FormatSize(b.Bytes), "listed twice")
		}
		seen[b.Bytes] = true
	}
	if s.ReadPct < 0 || s.ReadPct > 100 {
		return specErr(FieldReadPct, s.ReadPct, "must be between 0 and 100")
	}
	if s.RandomPct < 0 || s.RandomPct > 100 {
		return specErr(FieldRandomPct, s.RandomPct, "must be between 0 and 100")
	}
	if s.Align != 0 {
		if s.Align < 1 || s.Align > MaxBlockSize || (!s.Buffered && (s.Align < 512 || s.Align%512 != 0)) {
			return specErr(FieldAlign, FormatSize(s.Align), "must be a multiple of 512 bytes up to 64MiB")
		}
	}
	return nil
}

// sizeProblem says what is wrong with a transfer size ("" when nothing):
// 512 bytes to 64 MiB in whole sectors for direct I/O; any size from 1
// byte with Buffered (the page cache takes any length, as fio's bs=2300
// of the etcd check).
func (s *Spec) sizeProblem(n int64) string {
	if s.Buffered {
		if n < 1 || n > MaxBlockSize {
			return "must be between 1B and 64MiB"
		}
		return ""
	}
	if n < MinBlockSize || n > MaxBlockSize {
		return "must be between 512B and 64MiB"
	}
	if n%512 != 0 {
		return "must be a multiple of 512 bytes (direct I/O needs whole sectors; --buffered runs any size)" + binaryHint(n)
	}
	return ""
}

// binaryHint says what a size written in decimal units (4KB, 1MB: powers
// of 1000 here, as in the reports' MB/s) was most likely meant to be:
// "; KB is 1000 bytes here: for 4096 bytes write 4k or 4KiB". Empty when
// n is no whole number of kB, MB or GB, or its binary twin would be
// refused too.
func binaryHint(n int64) string {
	units := []struct {
		dec, bin         int64
		name, short, iec string
	}{{1e9, GiB, "GB is 10^9 bytes", "g", "GiB"}, {1e6, MiB, "MB is 10^6 bytes", "m", "MiB"}, {1e3, KiB, "KB is 1000 bytes", "k", "KiB"}}
	for _, u := range units {
		if n < u.dec || n%u.dec != 0 {
			continue
		}
		k := n / u.dec
		if b := k * u.bin; b > MaxBlockSize || b%512 != 0 {
			return ""
		}
		return fmt.Sprintf("; %s here: for %d bytes write %d%s or %d%s", u.name, k*u.bin, k, u.short, k, u.iec)
	}
	return ""
}

// validateRun checks what is beside the access specification: outstanding
// I/Os, workers, times, rate, flushes, region and engine.
func (s *Spec) validateRun() error {
	if s.QueueDepth < 1 || s.QueueDepth > MaxQueueDepth {
		return specErr(FieldQueueDepth, s.QueueDepth, "must be between 1 and %d", MaxQueueDepth)
	}
	if s.Workers < 1 || s.Workers > MaxWorkers {
		return specErr(FieldWorkers, s.Workers, "must be between 1 and %d", MaxWorkers)
	}
	if s.Duration <= 0 || s.Duration > MaxDuration {
		return specErr(FieldDuration, s.Duration, "must be more than 0 and at most 8760h")
	}
	if s.Loops < 0 || s.IOBytes < 0 || s.IOCount < 0 || (s.Loops == 0 && (s.IOBytes > 0 || s.IOCount > 0)) {
		return specErr(FieldLoops, s.Loops, "a budget (io_bytes %d, io_count %d) needs loops of at least 1, and none is negative", s.IOBytes, s.IOCount)
	}
	if s.Ramp < 0 || s.Ramp > MaxDuration {
		return specErr(FieldRamp, s.Ramp, "must be between 0 and 8760h")
	}
	if s.RateIOPS < 0 || s.RateIOPS > MaxRateIOPS {
		return specErr(FieldRateIOPS, s.RateIOPS, "must be between 0 (unlimited) and %d", MaxRateIOPS)
	}
	if err := s.validateRates(); err != nil {
		return err
	}
	if err := s.validateRandomMap(); err != nil {
		return err
	}
	if err := s.validateDistribution(); err != nil {
		return err
	}
	if err := s.validateBuffer(); err != nil {
		return err
	}
	if s.Verify && s.Buffered && s.Alignment()%512 != 0 {
		return fieldErr("--verify", true, "checks whole 512-byte sectors: with --buffered, every transfer size and the alignment must be multiples of 512")
	}
	if s.Fsync < 0 || s.Fsync > MaxFlushEvery {
		return specErr(FieldFsync, s.Fsync, "must be between 0 (never) and %d writes", MaxFlushEvery)
	}
	if s.Fdatasync < 0 || s.Fdatasync > MaxFlushEvery {
		return specErr(FieldFdatasync, s.Fdatasync, "must be between 0 (never) and %d writes", MaxFlushEvery)
	}
	if s.Fsync > 0 && s.Fdatasync > 0 {
		return specErr(FieldFdatasync, s.Fdatasync, "cannot be combined with --fsync %d: choose one flush", s.Fsync)
	}
	if s.SubmitBatch < 0 || s.SubmitBatch > MaxQueueDepth {
		return fieldErr("--batch-submit", s.SubmitBatch, "must be between 1 and %d I/Os (0: the queue depth)", MaxQueueDepth)
	}
	if s.CompleteMin < 0 || s.CompleteMin > MaxQueueDepth {
		return fieldErr("--batch-complete", s.CompleteMin, "must be between 1 and %d I/Os (0: poll without waiting)", MaxQueueDepth)
	}
	if s.CompleteMax < 0 || s.CompleteMax > MaxQueueDepth {
		return fieldErr("--batch-complete-max", s.CompleteMax, "must be between 1 and %d I/Os (0: --batch-complete)", MaxQueueDepth)
	}
	if s.SubmitMode != "" && s.SubmitMode != SubmitAdaptive && s.SubmitMode != SubmitFio {
		return fieldErr("submit_mode", strconv.Quote(s.SubmitMode), "must be %q or %q", SubmitAdaptive, SubmitFio)
	}
	if s.SubmitMode == SubmitAdaptive && !s.Adaptive() {
		return fieldErr("submit_mode", s.SubmitMode, "the adaptive rule cannot be combined with fio's batch sizes (submit_batch, complete_min, complete_poll, complete_max): give one or the other")
	}
	if s.CompletePoll && s.CompleteMin > 1 {
		return fieldErr("--batch-complete", s.CompleteMin, "polling for completions waits for none: give 0 or a number, not both")
	}
	if s.Sync != SyncNone && s.Sync != SyncDsync && s.Sync != SyncSync {
		return specErr(FieldSync, strconv.Quote(s.Sync), "must be one of %s", strings.Join(SyncModes, ", "))
	}
	align := s.Alignment()
	if err := s.validatePlacement(align); err != nil {
		return err
	}
	if s.RegionBytes < 0 {
		return specErr(FieldRegion, s.RegionBytes, "must not be negative")
	}
	if s.RegionBytes > 0 {
		if s.RegionBytes < s.MaxBlock() {
			return specErr(FieldRegion, FormatSize(s.RegionBytes), "must hold at least one transfer of %s", FormatSize(s.MaxBlock()))
		}
		if s.RegionBytes%align != 0 {
			return specErr(FieldRegion, FormatSize(s.RegionBytes), "must be a multiple of the alignment %s", FormatSize(align))
		}
	}
	if s.SequentialStreams != StreamsWorker && s.SequentialStreams != StreamsDirection {
		return specErr(FieldStreams, strconv.Quote(s.SequentialStreams), "must be empty (one stream per worker, Iometer's) or %q (one per direction, fio's)", StreamsDirection)
	}
	if !validEngine(s.Engine) {
		return specErr(FieldEngine, s.Engine, "must be one of %s", strings.Join(engineNames(), ", "))
	}
	return nil
}

// validateRates checks fio's rate per direction.
func (s *Spec) validateRates() error {
	switch {
	case s.RateReadBPS < 0 || s.RateWriteBPS < 0:
		return fieldErr("rate", fmt.Sprintf("%d,%d", s.RateReadBPS, s.RateWriteBPS), "a rate per direction must not be negative")
	case s.RatedByDirection() && s.RateIOPS > 0:
		return fieldErr("--rate-iops", s.RateIOPS, "cannot be combined with a rate per direction (fio's rate, rate_iops)")
	case s.RateProcess != RateLinear && s.RateProcess != RatePoisson:
		return fieldErr("rate_process", strconv.Quote(s.RateProcess), "must be linear (empty) or %q", RatePoisson)
	case s.RateProcess == RatePoisson && !s.RatedByDirection():
		return fieldErr("rate_process", s.RateProcess, "needs a rate per direction")
	}
	if s.RateProcess == RatePoisson {
		// fio draws the gaps of a Poisson process from I/Os per second:
		// the rate over the smallest transfer.
		for _, bps := range []int64{s.RateReadBPS, s.RateWriteBPS} {
			if bps > 0 && bps/int64(s.Workers) < s.MinBlock() {
				return fieldErr("rate", bps, "with rate_process=poisson each worker needs at least one I/O of %d bytes per second", s.MinBlock())
			}
		}
	}
	return nil
}

// validateRandomMap checks what fio's random map needs: one % read and %
// random for every size, offsets aligned to the smallest size (fio turns
// its map off with blockalign), and one stream per worker and target.
func (s *Spec) validateRandomMap() error {
	if !s.RandomMap {
		return nil
	}
	lines := s.Normalized()
	minBlock := s.MinBlock()
	for _, l := range lines {
		if l.ReadPct != lines[0].ReadPct || l.RandomPct != lines[0].RandomPct {
			return fieldErr("random_map", true, "needs one %% read and %% random for every transfer size")
		}
		if l.Align != 0 && l.Align != minBlock {
			return fieldErr("random_map", true, "needs offsets aligned to the smallest transfer size (fio turns its map off with blockalign)")
		}
	}
	if s.QueueDepth > 1 && s.Engine != EngineURing {
		return fieldErr("random_map", true, "keeps one map per worker and target, which the sync engine's %d streams per target would share: use engine uring or queue depth 1", s.QueueDepth)
	}
	return nil
}

func validEngine(e EngineName) bool { return slices.Contains(EngineNames, e) }

// engineNames are EngineNames as text.
func engineNames() []string {
	out := make([]string, len(EngineNames))
	for i, n := range EngineNames {
		out[i] = string(n)
	}
	return out
}

// ParseBlockSizes parses "4k" or a weighted mix "4k:70,64k:30". A size
// without a weight has weight 1.
func ParseBlockSizes(s string) ([]BlockSize, error) {
	if strings.TrimSpace(s) == "" {
		return nil, specErr(FieldBlockSizes, `""`, "empty (want e.g. 4k or 4k:70,64k:30)")
	}
	var out []BlockSize
	weighted := -1 // index of the first part with a weight, or -1
	parts := strings.Split(s, ",")
	for i, part := range parts {
		part = strings.TrimSpace(part)
		sz, wt, hasWeight := strings.Cut(part, ":")
		// All weights or none: a size without one among weighted sizes
		// would silently get weight 1 (4k:70,64k is 4k 70 times as often).
		if i == 0 && hasWeight {
			weighted = 0
		}
		if len(parts) > 1 && hasWeight != (weighted == 0) {
			first := strings.TrimSpace(parts[0])
			if hasWeight {
				return nil, specErr(FieldBlockSizes, strconv.Quote(first), "has no weight while %q has one: give every size a weight (4k:70,64k:30) or none (equal shares)", part)
			}
			return nil, specErr(FieldBlockSizes, strconv.Quote(part), "has no weight while %q has one: give every size a weight (4k:70,64k:30) or none (equal shares)", first)
		}
		n, err := ParseSize(sz)
		if err != nil {
			return nil, specErr(FieldBlockSizes, strconv.Quote(part), "%v", err)
		}
		w := 1
		if hasWeight {
			w, err = strconv.Atoi(strings.TrimSpace(wt))
			if err != nil || w < 1 || w > MaxWeight {
				return nil, specErr(FieldBlockSizes, strconv.Quote(part), "weight must be a whole number between 1 and %d", MaxWeight)
			}
		}
		out = append(out, BlockSize{Bytes: n, Weight: w})
	}
	return out, nil
}

// FormatBlockSizes renders a mix the way ParseBlockSizes reads it.
func FormatBlockSizes(bs []BlockSize) string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = FormatSize(b.Bytes)
		if len(bs) > 1 {
			parts[i] += ":" + strconv.Itoa(b.Weight)
		}
	}
	return strings.Join(parts, ",")
}

// Describe gives a short human name for the pattern, used where a spec has
// no name: "4KiB random read", "64KiB sequential write", or
// "8KiB 67% read 75% random" for a mix.
//
// A spec that only lines can express is "N lines, 512B-64KiB".
func (s *Spec) Describe() string {
	if !s.OneLineForm() {
		return fmt.Sprintf("%d lines, %s-%s", len(s.Lines), FormatSize(s.MinBlock()), FormatSize(s.MaxBlock()))
	}
	bs, readPct, randomPct := s.Mix()
	sizes := FormatBlockSizes(bs)
	var pattern string
	switch randomPct {
	case 100:
		pattern = "random"
	case 0:
		pattern = "sequential"
	}
	switch {
	case pattern != "" && readPct == 100:
		return sizes + " " + pattern + " read"
	case pattern != "" && readPct == 0:
		return sizes + " " + pattern + " write"
	}
	return fmt.Sprintf("%s %d%% read %d%% random", sizes, readPct, randomPct)
}

// SortedBlockSizes returns the transfer sizes in ascending order.
func (s *Spec) SortedBlockSizes() []int64 {
	bs, _, _ := s.Mix()
	out := make([]int64, len(bs))
	for i, b := range bs {
		out[i] = b.Bytes
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// SameSpecs reports whether two points run the same access specifications,
// their names aside: the same measurement, which a suite takes once.
func SameSpecs(a, b []Spec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		x.Name, y.Name = "", ""
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}
