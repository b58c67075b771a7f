package runner

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ioprobe/ioprobe/internal/cpuacct"
	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/target"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// runName names the run: the plan's name, else the group's workload.
func (p *Plan) runName() string {
	if p.Name != "" {
		return p.Name
	}
	var names []string
	for _, g := range p.Groups {
		n := g.Spec.Name
		if n == "" {
			n = g.Spec.Describe()
		}
		names = append(names, n)
	}
	return strings.Join(names, " + ")
}

// workloadOf is the result's record of spec s run by engine e on targets
// targets.
func workloadOf(s *workload.Spec, name string, e engine.Engine, reason string, targets int) result.Workload {
	bs, readPct, randomPct := s.Mix()
	w := result.Workload{
		Name:            name,
		ReadPct:         readPct,
		RandomPct:       randomPct,
		QueueDepth:      s.QueueDepth,
		Workers:         s.Workers,
		RampSeconds:     s.Ramp.Seconds(),
		DurationSeconds: s.Duration.Seconds(),
		RegionBytes:     s.RegionBytes,
		Engine:          e.Name(),
		EngineRequested: s.Engine,
		EngineReason:    reason,
		AlignBytes:      s.Alignment(),
		RateIOPS:        s.RateIOPS,
		Seed:            s.Seed,
		Verify:          s.Verify,
		Fsync:           s.Fsync,
		Fdatasync:       s.Fdatasync,
		Sync:            s.Sync,

		SequentialStreams: s.SequentialStreams,
		IOBytes:           s.IOBytes,
		IOCount:           s.IOCount,
		Loops:             s.Loops,
		Buffered:          s.Buffered,
		KeepCache:         s.KeepCache,
		FsyncOnClose:      s.FsyncOnClose,
		RandomMap:         s.RandomMap,
		RateReadBPS:       s.RateReadBPS,
		RateWriteBPS:      s.RateWriteBPS,
		RateProcess:       s.RateProcess,

		OffsetBytes:          s.Offset,
		OffsetIncrementBytes: s.OffsetIncrement,
		FilesInTurn:          s.FilesInTurn,
		CloneFiles:           s.CloneFiles,

		RandomDistribution: s.RandomDistribution,
		RandomGenerator:    s.RandomGenerator,
		Buffer:             s.Buffer,
	}
	if e.Name() == workload.EngineURing && s.Adaptive() {
		w.SubmitMode = workload.SubmitAdaptive
	} else if e.Name() == workload.EngineURing {
		w.SubmitMode = workload.SubmitFio
		// The ring's slots: the queue depth on each target, or over all
		// of them in turn.
		slots := s.QueueDepth * max(1, targets)
		if s.FilesInTurn > 0 {
			slots = s.QueueDepth
		}
		batch, completeMin, completeMax := s.Submission(slots)
		if batch > 1 {
			w.SubmitBatch = batch
		}
		if completeMin != 1 {
			w.CompleteMin, w.CompletePoll = completeMin, completeMin == 0
		}
		if completeMax != max(1, completeMin) {
			w.CompleteMax = completeMax
		}
	}
	for _, b := range bs {
		w.BlockSizes = append(w.BlockSizes, result.BlockSize{Bytes: b.Bytes, Weight: b.Weight})
	}
	if !s.OneLineForm() {
		for _, l := range s.Lines {
			w.Lines = append(w.Lines, result.Line{Bytes: l.Bytes, Share: l.Share, ReadPct: l.ReadPct, RandomPct: l.RandomPct,
				AlignBytes: l.Align, DelayMs: l.DelayMs, Burst: l.Burst})
		}
	}
	return w
}

// lineSummaries reads each line's counters from the workers' lanes (they
// count only while measuring, so they hold the measured window): nil
// unless the run is one specification of more than one line.
func lineSummaries(ws []*engine.Worker) []result.LineSummary {
	if len(ws) == 0 {
		return nil
	}
	spec := ws[0].Spec
	for _, w := range ws {
		if w.Spec != spec {
			return nil // several specifications at once: their lines differ
		}
	}
	lines := spec.Normalized()
	if len(lines) < 2 {
		return nil
	}
	out := make([]result.LineSummary, len(lines))
	latNs := make([]uint64, len(lines))
	for i, l := range lines {
		out[i] = result.LineSummary{Line: i + 1, TransferBytes: l.Bytes}
	}
	for _, w := range ws {
		for _, ln := range w.Lanes() {
			for i := range ln.Lines {
				c := &ln.Lines[i]
				out[i].ReadOps += c.ReadOps.Load()
				out[i].WriteOps += c.WriteOps.Load()
				out[i].ReadBytes += c.ReadBytes.Load()
				out[i].WriteBytes += c.WriteBytes.Load()
				latNs[i] += c.LatencyNs.Load()
			}
		}
	}
	for i := range out {
		l := &out[i]
		l.Ops, l.Bytes = l.ReadOps+l.WriteOps, l.ReadBytes+l.WriteBytes
		if l.Ops > 0 {
			l.LatencyMeanSeconds = float64(latNs[i]) / float64(l.Ops) / 1e9
		}
	}
	return out
}

// baseResult fills what is known before the run starts.
func (p *Plan) baseResult(started time.Time, specs []workload.Spec, engines []engine.Engine, reasons []string, targets []*openTarget) *result.Result {
	host, _ := cpuacct.Reader{}.Host()
	if host.Hostname == "" {
		host.Hostname, _ = os.Hostname()
	}
	res := &result.Result{
		Schema:    result.Schema,
		Version:   p.Version,
		RunID:     newRunID(),
		StartedAt: started.UTC(),
		Host:      host,
		Intervals: []result.Interval{},
	}
	name := p.runName()
	res.Workload = workloadOf(&specs[0], name, engines[0], reasons[0], len(groupTargets(p.Groups[0], targets)))
	res.Workload.DurationSeconds = p.duration().Seconds() // the longest group's: the run's
	if len(specs) > 1 {
		for i := range specs {
			n := specs[i].Name
			if n == "" {
				n = specs[i].Describe()
			}
			res.Groups = append(res.Groups, workloadOf(&specs[i], n, engines[i], reasons[i], len(groupTargets(p.Groups[i], targets))))
		}
	}
	for i := range specs {
		if s := &specs[i]; engines[i].Name() == workload.EngineSync && (s.SubmitBatch > 1 || s.CompleteMin > 1 || s.CompleteMax > 1 || s.CompletePoll) {
			n := s.Name
			if n == "" {
				n = s.Describe()
			}
			res.Notes = append(res.Notes, fmt.Sprintf("%s: the sync engine hands each I/O to the kernel on its own and waits for it (one pread or pwrite per call): batched submission and completion apply to the uring engine only", n))
		}
	}
	for _, ot := range targets {
		t := ot.t
		// A target is direct unless every group on it ran buffered.
		direct := false
		for _, gi := range ot.groups {
			direct = direct || !specs[gi].Buffered
		}
		res.Targets = append(res.Targets, result.Target{
			Path:              t.Path,
			Kind:              string(t.Kind),
			SizeBytes:         t.Size,
			RegionBytes:       t.Region,
			Direct:            direct,
			LogicalBlockBytes: t.LogicalBlock,
			Device:            t.Device,
			Created:           t.Created,
			Extended:          t.Extended,
			ExtendedFromBytes: t.GrownFrom,
		})
		if t.Extended {
			res.Notes = append(res.Notes, extendedNote(t.Path, t.GrownFrom, t.Size))
		}
	}
	return res
}

// extendedNote says that the run grew ioprobe's own file at path from
// its size before to now, to hold the access region asked for: the file
// on disk is larger than before the run.
func extendedNote(path string, from, now int64) string {
	if from >= now {
		return fmt.Sprintf("%s: ioprobe's own file, whose filling had been interrupted, was filled to its %s before measuring", path, workload.FormatSize(now))
	}
	return fmt.Sprintf("%s: ioprobe's own file was %s; it was grown to %s (the new part filled before measuring) to hold the access region asked for, and stays that size",
		path, workload.FormatSize(from), workload.FormatSize(now))
}

// summarize computes the summary from the final snapshot and the window.
func summarize(res *result.Result, snap *snapshotter, win *window) {
	s := &res.Summary
	read, write := result.NewHistogram(), result.NewHistogram()
	// A sync section only when some worker flushes (--fsync,
	// --fdatasync); the latency from the intended start only when some
	// worker runs to a rate limit.
	var flush *result.Histogram
	if slices.ContainsFunc(snap.workers, (*engine.Worker).Flushes) {
		flush = result.NewHistogram()
	}
	var intended *result.Histogram
	if slices.ContainsFunc(snap.workers, (*engine.Worker).Paced) {
		intended = result.NewHistogram()
	}
	classes := map[string]uint64{}
	for i := range snap.current.Targets {
		t := &snap.current.Targets[i]
		read.Merge(&t.Read.Latency)
		write.Merge(&t.Write.Latency)
		if flush != nil {
			flush.Merge(&t.Sync.Latency)
		}
		if intended != nil {
			intended.Merge(&t.Read.Intended)
			intended.Merge(&t.Write.Intended)
		}
		s.ReadBytes += t.Read.Bytes
		s.WriteBytes += t.Write.Bytes
		for c := 0; c < engine.NumErrClasses; c++ {
			if n := t.Read.Errors[c] + t.Write.Errors[c]; n > 0 {
				classes[engine.ErrClassNames[c]] += n
				s.Errors += n
			}
		}
	}
	if len(classes) > 0 {
		s.ErrorsByClass = classes
	}
	res.Histogram = result.Histograms{Read: read, Write: write, Sync: flush, Intended: intended}
	depth := &result.Depth{}
	for _, w := range snap.workers {
		w.Depth.Add(depth)
	}
	if *depth != (result.Depth{}) {
		res.IODepth = depth
	}
	s.SetFromHistograms(res.Histogram)
	if v := snap.verifier; v != nil {
		vs := &result.VerifySummary{LostWritesChecked: v.LostWrites()}
		for i := range snap.current.Targets {
			t := &snap.current.Targets[i]
			vs.ReadsVerified += t.Read.Verified
			vs.ReadsUnverified += t.Read.Unverified
		}
		n, sectors, truncated := v.Failures()
		vs.Failures = uint64(n)
		for _, f := range sectors {
			vs.FailedSectors = append(vs.FailedSectors, result.VerifyFailure{Target: res.Targets[f.Target].Path, Offset: f.Offset, Problem: f.Problem})
		}
		vs.FailedSectorsTruncated = truncated
		s.Verify = vs
	}
	if win == nil {
		return
	}
	s.ElapsedSeconds = win.t1.Sub(win.t0).Seconds()
	s.SetRates()
	s.Lines = lineSummaries(snap.workers)
	s.SetLineRates()
	s.CPU = cpuacct.Derive(win.usage, cpuacct.Work{
		Ops: s.Ops, Bytes: s.Bytes, ElapsedSeconds: s.ElapsedSeconds,
		LogicalCPUs: res.Host.LogicalCPUs, ClockHz: res.Host.ClockHz,
	})
	if len(win.devices) > 0 {
		s.Device = deviceDelta(win.devices, win.flushDisks, win.disk0, win.disk1)
		res.DiskUtil = diskUtil(win)
	}
}

// deviceDelta is what the kernel counted on devices between the readings
// before and after (each the sum of two readings of a device, around an
// instant: the difference is halved). A counter that went back (wrapped,
// or a device that came back) counts 0, not 2^64 less a little. The
// flushes of a partition in flushDisks are its whole disk's, counted
// once for the disk.
func deviceDelta(devices []string, flushDisks map[string]string, before, after map[string]target.DiskStats) *result.DeviceStats {
	d := &result.DeviceStats{Devices: devices}
	delta := func(dev string) (target.DiskStats, bool) {
		a, okA := before[dev]
		b, okB := after[dev]
		return b.Sub(a), okA && okB
	}
	flushed := map[string]bool{}
	for _, dev := range devices {
		dd, ok := delta(dev)
		if !ok {
			continue
		}
		d.ReadOps += dd.ReadOps / 2
		d.WriteOps += dd.WriteOps / 2
		d.ReadBytes += dd.ReadSectors / 2 * target.SectorSize
		d.WriteBytes += dd.WriteSectors / 2 * target.SectorSize
		d.ReadMerges += dd.ReadMerges / 2
		d.WriteMerges += dd.WriteMerges / 2
		fd := dev
		if disk, ok := flushDisks[dev]; ok && !slices.Contains(devices, disk) {
			fd = disk
			if dd, ok = delta(disk); !ok {
				continue
			}
			if !slices.Contains(d.FlushDevices, disk) {
				d.FlushDevices = append(d.FlushDevices, disk)
			}
		}
		if flushed[fd] {
			continue
		}
		flushed[fd] = true
		d.FlushOps += dd.FlushOps / 2
		d.FlushSeconds += float64(dd.FlushTicks) / 2 / 1000
	}
	return d
}

// newRunID is a run's id: 128 random bits, in hex. With the host and the
// start it tells the run apart from every other, so that merges count it
// once.
func newRunID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// diskUtil is each device's block-layer counters over the window, as
// fio's disk_util reports them (the window takes the midpoint of two
// readings at each end: halve the sums' difference).
func diskUtil(win *window) []result.DiskUtil {
	var out []result.DiskUtil
	for _, dev := range win.devices {
		a, okA := win.disk0[dev]
		b, okB := win.disk1[dev]
		if !okA || !okB {
			continue
		}
		d := b.Sub(a)
		out = append(out, result.DiskUtil{Name: dev,
			ReadIOs: d.ReadOps / 2, WriteIOs: d.WriteOps / 2, ReadMerges: d.ReadMerges / 2, WriteMerges: d.WriteMerges / 2,
			ReadTicksMs: d.ReadTicks / 2, WriteTicksMs: d.WriteTicks / 2, InQueueMs: d.QueueTicks / 2, IOTicksMs: d.IOTicks / 2,
			WindowMs: uint64(win.t1.Sub(win.t0).Milliseconds())})
	}
	return out
}
