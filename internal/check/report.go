package check

import (
	"fmt"
	"time"

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
			wal.RepeatFigures = append(wal.RepeatFigures, r.wal.Quantile(EtcdWAL.Quantile)/1e9)
		}
		wal.Records += r.records
		wal.Bytes += r.bytes
		wal.Segments += r.segments
		wal.Fdatasyncs += r.walFdatasyncs
		if r.backend != nil {
			backend.Histogram.Merge(r.backend)
			backend.RepeatFigures = append(backend.RepeatFigures, r.backend.Quantile(EtcdBackend.Quantile)/1e9)
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
			s.RepeatFigures = nil
		}
	}
	kernel.Fdatasyncs = wal.Samples + backend.Fdatasyncs // the WAL's samples include its directory fsyncs
	if haveDisk && len(runs) > 0 && kernel.Fdatasyncs > 0 {
		kernel.Device = dev
		kernel.FlushesPerFdatasync = float64(kernel.Flushes) / float64(kernel.Fdatasyncs)
		kernel.WriteKiBPerFdatasync = float64(kernel.WriteBytes) / 1024 / float64(kernel.Fdatasyncs)
		rep.Kernel = &kernel
	}
	if rep.Status == result.StatusOK {
		var vs []StreamVerdict
		var labels []string
		for i, s := range streams {
			v := rules[i].Judge(s.Histogram, s.RepeatFigures)
			s.Verdict = &v
			vs = append(vs, v)
			labels = append(labels, rules[i].Label)
		}
		v := Combine("etcd", labels, vs)
		rep.Verdict = &v
		rep.Next = nextSteps(v, o)
	}
	for _, s := range streams {
		rep.Streams = append(rep.Streams, *s)
	}
}

// nextSteps is what an etcd operator should look at after this verdict.
func nextSteps(v Verdict, o Options) []string {
	var next []string
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
