package result

import "time"

// run builds a result the way the runner does: histograms from recorded
// latencies, counts from the histograms, rates over the elapsed time.
func run(host string, cpus int, reads, writes []int64, elapsed, util float64) *Result {
	r := &Result{
		Schema: Schema, Version: "test", Status: StatusOK,
		StartedAt: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC),
		Host:      Host{Hostname: host, LogicalCPUs: cpus, ClockHz: 2e9, CPUModel: "EPYC", Kernel: "6.1"},
		Workload: Workload{Name: "oltp", BlockSizes: []BlockSize{{Bytes: 8192, Weight: 1}}, ReadPct: 67, RandomPct: 100,
			QueueDepth: 16, Workers: 1, DurationSeconds: elapsed},
		Targets:   []Target{{Path: "/dev/sdb", Kind: "block", Direct: true}},
		Histogram: Histograms{Read: NewHistogram(), Write: NewHistogram()},
		Point:     &Point{Suite: "business", Name: "oltp", Section: "Business", Pattern: "OLTP", SizeBytes: 8192, Target: "/dev/sdb", Index: 1},
	}
	for _, v := range reads {
		r.Histogram.Read.Record(v)
	}
	for _, v := range writes {
		r.Histogram.Write.Record(v)
	}
	s := &r.Summary
	s.ReadOps, s.WriteOps = r.Histogram.Read.Count(), r.Histogram.Write.Count()
	s.Ops = s.ReadOps + s.WriteOps
	s.ReadBytes, s.WriteBytes = s.ReadOps*8192, s.WriteOps*8192
	s.Bytes = s.ReadBytes + s.WriteBytes
	s.ElapsedSeconds = elapsed
	s.IOPS = float64(s.Ops) / elapsed
	s.ReadIOPS = float64(s.ReadOps) / elapsed
	s.WriteIOPS = float64(s.WriteOps) / elapsed
	s.ThroughputBytesPerSecond = float64(s.Bytes) / elapsed
	s.MBPerSecond = s.ThroughputBytesPerSecond / 1e6
	s.Latency = LatencyOf(r.Histogram.Combined())
	s.ReadLatency = LatencyOf(r.Histogram.Read)
	s.WriteLatency = LatencyOf(r.Histogram.Write)
	s.CPU = CPU{HostUtilizationPct: util, HostBusyCores: util / 100,
		ProcessUserSeconds: 1, ProcessSystemSeconds: 2}
	s.CPU.HostCPUSecondsPerIO = s.CPU.HostBusyCores * elapsed / float64(s.Ops)
	s.CPU.IOPSPerCPUPct = s.IOPS / util
	for i := 1; i <= int(elapsed); i++ {
		r.Intervals = append(r.Intervals, Interval{TSeconds: float64(i), IOPS: s.IOPS, BytesPerSecond: s.ThroughputBytesPerSecond,
			LatencyMeanSeconds: s.Latency.MeanSeconds, LatencyP99Seconds: s.Latency.Percentiles["99"]})
	}
	return r
}

func latencies(n int, base, spread int64, seed int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = base + int64((i*7919+seed*104729)%int(spread))
		if i%997 == 0 {
			out[i] *= 20 // a tail
		}
	}
	return out
}
