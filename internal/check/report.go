package check

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/ioprobe/ioprobe/internal/cpuacct"
	"github.com/ioprobe/ioprobe/internal/target"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// repeatStats is what one measured window of the etcd check counted.
type repeatStats struct {
	wal, walWrite, backend            *result.Histogram // nil when not run
	records, bytes, segments          uint64
	walFdatasyncs                     uint64 // fdatasync calls (the WAL's samples but the directory fsyncs)
	commits, pages, backendFdatasyncs uint64
	elapsed                           time.Duration
	disk                              *target.DiskStats // delta over the window; nil without a device
	prealloc                          string
	// cpu is what the CPU spent over the window (cpuErr: it could not
	// be read), and tasks what the host's processes did meanwhile
	// (tasksOK: both looks were taken in time).
	cpu     cpuacct.Usage
	cpuErr  error
	tasks   cpuacct.TaskDelta
	tasksOK bool
}

// assemble fills rep from the repeats measured: every repeat's
// histograms merged, each repeat's figure, the kernel's counters, and
// the verdict when the status is ok.
func assemble(rep *Report, o Options, runs []repeatStats, dev string) {
	rep.Settings = Settings{DurationSeconds: o.Duration.Seconds(), Repeat: o.Repeat, Rate: o.Rate, Backend: o.Backend,
		RecordBytes: RecordBytes, FrameBytes: FrameBytes, SegmentBytes: SegmentBytes}
	if o.Backend {
		rep.Settings.BatchIntervalSeconds, rep.Settings.PageBytes = BatchInterval.Seconds(), PageBytes
	}
	wal := Stream{Name: EtcdWAL.Stream, Metric: EtcdWAL.Metric,
		What:      fmt.Sprintf("fdatasync(2) after each %d-byte append written with write(2), in %d-byte segments (and the directory fsync after a new segment is renamed in), as etcd times them", FrameBytes, SegmentBytes),
		Histogram: result.NewHistogram(), WriteHistogram: result.NewHistogram()}
	backend := Stream{Name: EtcdBackend.Stream, Metric: EtcdBackend.Metric,
		What:      fmt.Sprintf("bbolt's Tx.Commit every %v: a page a put and four of the path and the freelist written, fdatasync, the meta page, fdatasync", BatchInterval),
		Histogram: result.NewHistogram()}
	var kernel Kernel
	haveDisk := dev != ""
	for _, r := range runs {
		if r.prealloc != "" {
			rep.Settings.Preallocation = r.prealloc
		}
		if r.wal != nil {
			wal.Histogram.Merge(r.wal)
			wal.WriteHistogram.Merge(r.walWrite)
			wal.addRepeat(r.wal, EtcdWAL.Quantile)
		}
		wal.Records += r.records
		wal.Bytes += r.bytes
		wal.Segments += r.segments
		wal.Fdatasyncs += r.walFdatasyncs
		if r.backend != nil {
			backend.Histogram.Merge(r.backend)
			backend.addRepeat(r.backend, EtcdBackend.Quantile)
		}
		backend.Commits += r.commits
		backend.Pages += r.pages
		backend.Fdatasyncs += r.backendFdatasyncs
		if r.disk == nil {
			haveDisk = false
		} else {
			kernel.Flushes += r.disk.FlushOps
			kernel.WriteOps += r.disk.WriteOps
			kernel.WriteBytes += r.disk.WriteBytes()
		}
	}
	streams := []*Stream{&wal}
	rules := []Rule{EtcdWAL}
	if o.Backend {
		streams = append(streams, &backend)
		rules = append(rules, EtcdBackend)
	}
	for _, s := range streams {
		s.Samples = s.Histogram.Count()
		s.Latency = result.LatencyOf(s.Histogram)
		if s.WriteHistogram != nil {
			l := result.LatencyOf(s.WriteHistogram)
			s.WriteLatency = &l
		}
		if len(s.RepeatFigures) < 2 {
			s.RepeatFigures, s.RepeatSamples = nil, nil
		}
	}
	kernel.Fdatasyncs = wal.Samples + backend.Fdatasyncs // the WAL's samples include its directory fsyncs
	if haveDisk && len(runs) > 0 && kernel.Fdatasyncs > 0 {
		kernel.Device = dev
		kernel.FlushesPerFdatasync = float64(kernel.Flushes) / float64(kernel.Fdatasyncs)
		kernel.WriteKiBPerFdatasync = float64(kernel.WriteBytes) / 1024 / float64(kernel.Fdatasyncs)
		rep.Kernel = &kernel
	}
	rep.HostOthers = checkOthers(runs, dev, haveDisk)
	rep.Notes = othersNotes(rep.HostOthers, dev)
	if rep.Status == result.StatusOK {
		var vs []StreamVerdict
		var labels []string
		for i, s := range streams {
			v := rules[i].Judge(s.Histogram, s.measuredFigures())
			if empty := s.emptyRepeats(); empty != "" {
				// Not a figure of 0: say that it measured nothing.
				said := fmt.Sprintf("; %s timed no %s", empty, rules[i].Noun)
				v.detail += said
				v.Reason += said
			}
			s.Verdict = &v
			vs = append(vs, v)
			labels = append(labels, rules[i].Label)
		}
		v := Combine("etcd", labels, vs)
		if len(rep.Notes) > 0 {
			// A verdict measured beside other load says so, with the
			// figures: the storage alone may do better.
			v.Reason += " — measured beside other load: " + strings.Join(rep.Notes, "; ")
		}
		rep.Verdict = &v
		rep.Next = nextSteps(v, o, len(rep.Notes) > 0)
	}
	for _, s := range streams {
		rep.Streams = append(rep.Streams, *s)
	}
}

// addRepeat records one repeat's figure and samples. A repeat that timed
// nothing (the backend commits only puts the WAL saved, and a window
// can close before the first one) has no figure: null, not the 0 of an
// empty histogram, which would read as the fastest repeat and could
// make the others straddle the threshold.
func (s *Stream) addRepeat(h *result.Histogram, q float64) {
	var fig *float64
	if h.Count() > 0 {
		f := h.Quantile(q) / 1e9
		fig = &f
	}
	s.RepeatFigures = append(s.RepeatFigures, fig)
	s.RepeatSamples = append(s.RepeatSamples, h.Count())
}

// measuredFigures are the figures of the repeats that timed something.
func (s *Stream) measuredFigures() []float64 {
	var fs []float64
	for _, f := range s.RepeatFigures {
		if f != nil {
			fs = append(fs, *f)
		}
	}
	return fs
}

// emptyRepeats names the repeats that timed nothing ("repeat 2",
// "repeats 1 and 3"), or is empty.
func (s *Stream) emptyRepeats() string {
	var ns []string
	for i, f := range s.RepeatFigures {
		if f == nil {
			ns = append(ns, strconv.Itoa(i+1))
		}
	}
	switch len(ns) {
	case 0:
		return ""
	case 1:
		return "repeat " + ns[0]
	}
	return "repeats " + strings.Join(ns[:len(ns)-1], ", ") + " and " + ns[len(ns)-1]
}

// nextSteps is what an etcd operator should look at after this verdict,
// measured beside other load (busy) or not.
func nextSteps(v Verdict, o Options, busy bool) []string {
	var next []string
	if busy {
		next = append(next, "Others used the host's CPU or the device while the check ran (see above): run it again when they do not, or read its figures as the storage's under that load.")
	}
	switch {
	case v.Verdict == Inconclusive:
		next = append(next, "Run longer (--duration) for at least 300 samples in each stream; --repeat N shows how much the figures move between runs.")
	case !v.Pass || v.Borderline:
		next = append(next, "Give etcd a disk of its own, SSD or NVMe and not network storage (at least its WAL: --wal-dir): other writers on the device lengthen every fdatasync etcd waits for.")
	}
	if !o.Backend {
		next = append(next, "The backend's commits were not run (--backend=false): etcd does both at once.")
	}
	next = append(next,
		"Where etcd runs, its own etcd_disk_wal_fsync_duration_seconds and etcd_disk_backend_commit_duration_seconds time these same calls under its real load: histogram_quantile(0.99, rate(etcd_disk_wal_fsync_duration_seconds_bucket[5m])) against 10 ms, the backend's against 25 ms.",
		"The thresholds are etcd's guidance (its FAQ, and its hardware recommendations); the workload follows etcd's WAL and bbolt's commit, and agrees with the community fio recipe (fio --rw=write --ioengine=sync --fdatasync=1 --size=22m --bs=2300) on a WAL alone (docs/output.md).")
	return next
}

// checkOthers is what other processes did during the repeats' windows:
// their share of the host's CPU, time-weighted over the repeats, and,
// when the device was counted and every other process's I/O could be
// read, the device's I/O that was theirs. The check's own writes reach
// the device rounded to pages and with its filesystem's journal, which
// the kernel's threads write: so others' bytes are the device's beyond
// the check's own, but no more than other processes sent to storage
// (/proc/PID/io), and their I/Os the device's in that proportion. Nil
// when the host's CPU was not read.
func checkOthers(runs []repeatStats, dev string, haveDisk bool) *Others {
	var weighted, elapsed float64
	var ops, bytes, servedOps, servedBytes, storage uint64
	device := haveDisk && dev != ""
	cpus := 0
	for _, r := range runs {
		if r.cpuErr != nil || r.cpu.Host.All.Total() == 0 {
			return nil
		}
		cpus = max(cpus, len(r.cpu.Host.CPUs))
		var kthreads uint64
		if r.tasksOK {
			kthreads = r.tasks.KThreadTicks
		}
		weighted += r.cpu.OthersFraction(kthreads) * r.elapsed.Seconds()
		elapsed += r.elapsed.Seconds()
		if !device || r.disk == nil || !r.tasksOK || !r.tasks.Complete {
			device = false
			continue
		}
		d := r.disk
		served := d.ReadSectors*target.SectorSize + d.WriteBytes()
		own := r.bytes + r.pages*PageBytes
		theirs := min(max(served, own)-own, r.tasks.OthersIOBytes)
		n := d.ReadOps + d.WriteOps + d.ReadMerges + d.WriteMerges
		servedOps += n
		servedBytes += served
		bytes += theirs
		if sum, carry := bits.Add64(storage, r.tasks.OthersIOBytes, 0); carry == 0 {
			storage = sum
		}
		if served > 0 {
			ops += uint64(float64(n) * float64(theirs) / float64(served))
		}
	}
	if elapsed <= 0 {
		return nil
	}
	o := &Others{LogicalCPUs: cpus}
	o.CPUFraction = weighted / elapsed
	if device {
		o.DeviceOps, o.DeviceBytes, o.ServedOps, o.ServedBytes, o.StorageBytes = &ops, &bytes, servedOps, servedBytes, storage
	} else if haveDisk {
		o.DeviceUnknown = "other processes' I/O could not be read (another user's /proc/PID/io needs root or CAP_SYS_PTRACE): the device's part is not judged"
	}
	return o
}

// othersNotes says what others did while the check measured, when it
// was more than result.OthersThreshold of the host's CPU or of the
// device's bytes. The device's part cannot be told apart from the
// filesystem's own writes for the check (its journal, written by the
// kernel's threads) when other processes were busy on any device, and
// it says so.
func othersNotes(o *Others, dev string) []string {
	if o == nil {
		return nil
	}
	var notes []string
	if cpu, _ := result.OthersLoad(o.LogicalCPUs, &o.HostOthers, nil); cpu != "" {
		notes = append(notes, strings.Replace(cpu, "during the window", "during the check", 1))
	}
	if o.DeviceBytes != nil && o.ServedBytes > 0 {
		if share := float64(*o.DeviceBytes) / float64(o.ServedBytes); share > result.OthersThreshold {
			notes = append(notes, fmt.Sprintf("%s served %.2f MB of its %.2f MB (%.1f%%) beyond the check's own writes while other processes moved %.2f MB to and from storage: someone else's I/O, or the filesystem's own work for the check (its journal)",
				dev, float64(*o.DeviceBytes)/1e6, float64(o.ServedBytes)/1e6, 100*share, float64(o.StorageBytes)/1e6))
		}
	}
	return notes
}
