package result

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// Merge combines results of one workload that ran at the same time on
// different hosts (the reports' multi-VM tests; a DaemonSet on every
// node) into the result one run of all of them would have given:
//
//   - counts (ops, bytes, errors) are summed exactly;
//   - latency figures come from the merged histograms, so percentiles are
//     those of every I/O of every host (within the histogram's 0.4%);
//   - rates (IOPS, MB/s) are summed, the elapsed time is the longest;
//     but runs that did not overlap in time (from their start through
//     ramp-up to the end of their measurement) were not concurrent load:
//     they fall into periods, each period's runs add up, and the merged
//     rate is the periods' average weighted by their time (every I/O over
//     the periods' total measured time); Merged.Periods says how many;
//   - host CPU is summed over hosts (each host's own results averaged
//     over time, so two processes on one host count its CPU once);
//     per-I/O figures are recomputed from the sums;
//   - intervals are summed index by index (p99 of a merged interval is
//     the highest of the hosts', an upper bound).
//
// Merged.Runs counts the runs merged and Merged.Hosts names their hosts.
// Results of different workloads are refused.
func Merge(rs ...*Result) (*Result, error) { return merge(rs, false) }

// MergeRepeats combines runs of one point made one after the other on one
// host (--repeat): counts and histograms as in Merge, but elapsed times
// add up, so rates are totals over the total time; intervals follow each
// other. Spread holds the run-to-run statistics.
func MergeRepeats(rs ...*Result) (*Result, error) {
	out, err := merge(rs, true)
	if err != nil {
		return nil, err
	}
	out.Spread = repeatSpread(rs)
	return out, nil
}

// MergeByPoint merges the results that measured the same point (Merge),
// and returns one result per point in the order they first appear. With
// byTarget, a point measured on different targets stays apart; without,
// the target's path is ignored (each host measured its own device, say
// /dev/sdb on one and /dev/nvme0n1 on another).
func MergeByPoint(rs []*Result, byTarget bool) ([]*Result, error) {
	var order []string
	groups := map[string][]*Result{}
	for _, r := range rs {
		p := PointOf(r)
		key := p.Key() + fmt.Sprintf("\x00%d", p.Targets)
		if byTarget {
			key += "\x00" + p.Target
		}
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], r)
	}
	out := make([]*Result, 0, len(order))
	for _, k := range order {
		m, err := Merge(groups[k]...)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// sameShape refuses to merge different workloads.
func sameShape(a, b *Result) error {
	pa, pb := PointOf(a), PointOf(b)
	why := shapeDiff(a, b)
	if pa.Name != pb.Name || pa.Section != pb.Section {
		why = fmt.Sprintf("points %q and %q differ", pa.Name, pb.Name)
	}
	if why != "" {
		return fmt.Errorf("cannot merge %s (%s) with %s (%s): %s", pa.Name, a.Host.Hostname, pb.Name, b.Host.Hostname, why)
	}
	return nil
}

// shapeDiff says how the workloads of a and b differ ("" when they do
// not): transfer sizes, pattern, outstanding I/Os, workers, or the number
// of access specifications run at once.
func shapeDiff(a, b *Result) string {
	wa, wb := a.Workload, b.Workload
	switch {
	case !slices.Equal(wa.BlockSizes, wb.BlockSizes):
		return "transfer sizes differ"
	case !slices.Equal(wa.Lines, wb.Lines):
		return "access specification lines differ"
	case wa.ReadPct != wb.ReadPct || wa.RandomPct != wb.RandomPct:
		return fmt.Sprintf("patterns differ (%d%%/%d%% and %d%%/%d%% read/random)", wa.ReadPct, wa.RandomPct, wb.ReadPct, wb.RandomPct)
	case wa.QueueDepth != wb.QueueDepth || wa.Workers != wb.Workers:
		return fmt.Sprintf("QD/workers differ (%d/%d and %d/%d)", wa.QueueDepth, wa.Workers, wb.QueueDepth, wb.Workers)
	case wa.Fsync != wb.Fsync || wa.Fdatasync != wb.Fdatasync || wa.Sync != wb.Sync:
		return fmt.Sprintf("durable writes differ (fsync %d, fdatasync %d, sync %q and fsync %d, fdatasync %d, sync %q)", wa.Fsync, wa.Fdatasync, wa.Sync, wb.Fsync, wb.Fdatasync, wb.Sync)
	case len(a.Groups) != len(b.Groups):
		return "the number of access specifications run at once differs"
	}
	return ""
}

// hostCPU accumulates one host's CPU figures, weighted by time.
type hostCPU struct {
	host       Host
	elapsed    float64
	busyCoresT float64 // Σ busy cores × elapsed
	utilT      float64 // Σ utilization % × elapsed
}

func merge(rs []*Result, sequential bool) (*Result, error) {
	if len(rs) == 0 {
		return nil, errors.New("result: nothing to merge")
	}
	for i, r := range rs {
		if r == nil {
			return nil, fmt.Errorf("result: result %d to merge is nil", i)
		}
		if err := sameShape(rs[0], r); err != nil {
			return nil, err
		}
		if !r.Histogram.Covers(&r.Summary) {
			return nil, fmt.Errorf("cannot merge %s from %s exactly: it has no latency histogram", PointOf(r).Name, r.Host.Hostname)
		}
	}
	if err := checkSums(rs); err != nil {
		var se *SumError
		if errors.As(err, &se) {
			r := rs[se.Index]
			return nil, &MergeSumError{Result: r, Err: se}
		}
		return nil, err
	}
	of, err := runsOf(rs)
	if err != nil {
		return nil, err
	}
	var spans []float64 // the periods' measured seconds, when more than one
	if !sequential {
		if p := periods(rs); len(p) > 1 {
			spans = p
		}
	}
	first := rs[0]
	out := &Result{
		Schema:    Schema,
		Version:   first.Version,
		StartedAt: earliest(rs),
		StartAt:   commonStartAt(rs),
		Workload:  first.Workload,
		Groups:    slices.Clone(first.Groups),
		Intervals: []Interval{},
	}
	out.Workload.BlockSizes = slices.Clone(first.Workload.BlockSizes)
	out.Workload.Lines = slices.Clone(first.Workload.Lines)
	out.Histogram = Histograms{Read: NewHistogram(), Write: NewHistogram()}
	for _, r := range rs {
		if r.Histogram.Sync != nil {
			out.Histogram.Sync = NewHistogram()
			break
		}
	}
	// The latency from the intended start merges only when every run was
	// rate-limited: percentiles of some runs' I/Os would not describe the
	// merged ones.
	out.Histogram.Intended = NewHistogram()
	for _, r := range rs {
		if r.Histogram.Intended == nil {
			out.Histogram.Intended = nil
			break
		}
	}
	// The devices' latency merges only when every run measured it.
	out.Histogram.Device = NewDeviceHistograms()
	var devWhy []string
	for _, r := range rs {
		if !r.Histogram.Device.complete() {
			out.Histogram.Device = nil
			why := "not measured"
			if d := r.Summary.Device; d != nil && d.LatencyUnavailable != "" {
				why = d.LatencyUnavailable
			}
			devWhy = append(devWhy, r.Host.Hostname+": "+why)
		}
	}
	s := &out.Summary
	var hosts []string
	var messages, targetsOf []string
	perHost := map[string]*hostCPU{}
	var hostOrder []string
	var procUser, procSys float64
	status := StatusOK
	var elapsedSum, elapsedMax float64
	seenTarget := map[string]bool{}
	for _, r := range rs {
		hosts = append(hosts, hostsOf(r)...)
		messages = append(messages, r.Message)
		status = worse(status, r.Status)
		out.Histogram.Add(r.Histogram)
		out.DiskUtil = addDiskUtil(out.DiskUtil, r.DiskUtil)
		if r.IODepth != nil {
			if out.IODepth == nil {
				out.IODepth = &Depth{}
			}
			out.IODepth.Add(r.IODepth)
		}
		rsum := &r.Summary
		s.Lines = mergeLines(s.Lines, rsum.Lines)
		s.Jobs = mergeJobs(s.Jobs, rsum.Jobs)
		s.ReadBytes += rsum.ReadBytes
		s.WriteBytes += rsum.WriteBytes
		s.Errors += rsum.Errors
		for c, n := range rsum.ErrorsByClass {
			if s.ErrorsByClass == nil {
				s.ErrorsByClass = map[string]uint64{}
			}
			s.ErrorsByClass[c] += n
		}
		elapsedSum += rsum.ElapsedSeconds
		elapsedMax = math.Max(elapsedMax, rsum.ElapsedSeconds)
		if !sequential && spans == nil {
			s.IOPS += rsum.IOPS
			s.ReadIOPS += rsum.ReadIOPS
			s.WriteIOPS += rsum.WriteIOPS
			s.ThroughputBytesPerSecond += rsum.ThroughputBytesPerSecond
			s.MBPerSecond += rsum.MBPerSecond
		}
		procUser += rsum.CPU.ProcessUserSeconds
		procSys += rsum.CPU.ProcessSystemSeconds
		// A machine's CPU once, however many runs (containers, network
		// namespaces) measured it.
		mk := machineKey(r.Host)
		h, ok := perHost[mk]
		if !ok {
			h = &hostCPU{host: r.Host}
			perHost[mk] = h
			hostOrder = append(hostOrder, mk)
		}
		h.elapsed += rsum.ElapsedSeconds
		h.busyCoresT += rsum.CPU.HostBusyCores * rsum.ElapsedSeconds
		h.utilT += rsum.CPU.HostUtilizationPct * rsum.ElapsedSeconds
		for _, t := range r.Targets {
			if key := t.Path + "\x00" + t.Device; !seenTarget[key] {
				seenTarget[key] = true
				out.Targets = append(out.Targets, t)
			}
		}
		if r.Point != nil {
			targetsOf = append(targetsOf, r.Point.Target)
		}
	}
	if first.Point != nil {
		p := *first.Point
		p.Target = joinUnique(targetsOf, "+")
		out.Point = &p
	}
	var lat deviceLatencySum
	s.Device, lat = mergeDevices(rs, sequential)
	if s.Device != nil {
		// The devices' latency, counted as their counts are, summarised
		// when every run measured it.
		if out.Histogram.Device == nil {
			lat.h = nil
		}
		out.Histogram.Device = lat.h
		s.Device.SetDeviceLatency(lat.h, lat.readBytes, lat.writeBytes, lat.discards, "not measured on every run merged ("+joinUnique(devWhy, "; ")+")")
		s.Device.SetUntimed(lat.untimed, lat.noStart)
	}

	s.SetFromHistograms(out.Histogram)
	if spans != nil {
		elapsedSum = 0
		for _, d := range spans {
			elapsedSum += d
		}
	}
	if sequential || spans != nil {
		s.ElapsedSeconds = elapsedSum
		s.SetRates()
	} else {
		s.ElapsedSeconds = elapsedMax
	}

	s.SetLineRates()

	// CPU: each host's time-weighted average, summed over hosts.
	w := CPUWork{Ops: s.Ops, IOPS: s.IOPS, MBPerSecond: s.MBPerSecond, ElapsedSeconds: s.ElapsedSeconds,
		ProcessUser: procUser, ProcessSystem: procSys, ProcessCPU: procUser + procSys}
	for _, name := range hostOrder {
		h := perHost[name]
		if h.elapsed <= 0 {
			continue
		}
		cores := h.busyCoresT / h.elapsed
		w.BusyCores += cores
		w.UtilizationPct += h.utilT / h.elapsed
		w.BusyHz += cores * h.host.ClockHz
	}
	s.CPU = DeriveCPU(w)
	s.HostOthers = mergeOthers(rs)
	s.setJobHistograms()
	s.SetJobFigures()

	out.Host = mergedHost(hostOrder, perHost)
	out.Status = status
	out.Message = joinUnique(messages, "; ")
	out.Intervals = mergeIntervals(rs, sequential || spans != nil)
	n := 0
	for _, r := range rs {
		n += runs(r)
	}
	sort.Strings(hosts)
	out.Merged = &MergeInfo{Runs: n, Hosts: slices.Compact(hosts), Periods: len(spans), Of: of, StorageDiffers: mergeStorageDiffers(rs)}
	return out, nil
}

// mergedHost describes the hosts: the one host, or their names joined,
// CPUs summed, and model, kernel and clock where they agree.
func mergedHost(order []string, per map[string]*hostCPU) Host {
	h := per[order[0]].host
	if len(order) == 1 {
		return h
	}
	var names []string
	for _, k := range order {
		if n := per[k].host.Hostname; !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	h.Hostname = strings.Join(names, ", ")
	h.LogicalCPUs = 0
	for _, name := range order {
		o := per[name].host
		if o.BootID != h.BootID {
			h.BootID = ""
		}
		h.LogicalCPUs += o.LogicalCPUs
		if o.CPUModel != h.CPUModel {
			h.CPUModel = ""
		}
		if o.Kernel != h.Kernel {
			h.Kernel = ""
		}
		if o.ClockHz != h.ClockHz {
			h.ClockHz = 0
		}
	}
	return h
}

func mergeIntervals(rs []*Result, sequential bool) []Interval {
	out := []Interval{}
	if sequential {
		offset := 0.0
		for _, r := range rs {
			for _, iv := range r.Intervals {
				iv.TSeconds += offset
				out = append(out, iv)
			}
			offset += r.Summary.ElapsedSeconds
		}
		return out
	}
	for _, r := range rs {
		for i, iv := range r.Intervals {
			if i == len(out) {
				out = append(out, Interval{})
			}
			o := &out[i]
			o.TSeconds = math.Max(o.TSeconds, iv.TSeconds)
			if total := o.IOPS + iv.IOPS; total > 0 {
				o.LatencyMeanSeconds = (o.LatencyMeanSeconds*o.IOPS + iv.LatencyMeanSeconds*iv.IOPS) / total
			}
			o.IOPS += iv.IOPS
			o.BytesPerSecond += iv.BytesPerSecond
			o.LatencyP99Seconds = math.Max(o.LatencyP99Seconds, iv.LatencyP99Seconds)
			o.Errors += iv.Errors
		}
	}
	return out
}

// worse orders statuses: errors over interrupted over ok.
func worse(a, b Status) Status {
	rank := map[Status]int{StatusOK: 0, "": 0, StatusInterrupted: 1, StatusErrors: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// commonStartAt is the --start-at instant every one of rs asked for, or
// zero when they did not all ask for the same one.
func commonStartAt(rs []*Result) time.Time {
	for _, r := range rs[1:] {
		if !r.StartAt.Equal(rs[0].StartAt) {
			return time.Time{}
		}
	}
	return rs[0].StartAt
}

// earliest is the first start time of rs (zero times ignored).
func earliest(rs []*Result) time.Time {
	var t time.Time
	for _, r := range rs {
		if !r.StartedAt.IsZero() && (t.IsZero() || r.StartedAt.Before(t)) {
			t = r.StartedAt
		}
	}
	return t
}
