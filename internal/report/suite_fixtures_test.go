package report

import (
	"fmt"
	"time"

	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Suite fixtures: results built the way the runner builds them (histograms
// of every I/O, counts from the histograms), with the figures of the
// reference reports, so the golden tables can be read against them.

const fixtureElapsed = 10.0

var esxHost = result.Host{Hostname: "esx-lab", Kernel: "6.8.0-45-generic", CPUModel: "Intel(R) Xeon(R) CPU E7-4870 @ 2.40GHz", LogicalCPUs: 4, ClockHz: 2.2e9}

// measured makes one point's result: iops I/Os per second over 10 s, mean
// latency from Little's law (outstanding ÷ IOPS) with a tail, host CPU at
// cpuPct (summed over CPUs).
func measured(h result.Host, p result.Point, wl result.Workload, iops, cpuPct float64, seed int) *result.Result {
	r := &result.Result{
		Schema: result.Schema, Version: "0.3.0", Status: result.StatusOK,
		StartedAt: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(p.Index) * 11 * time.Second),
		Host:      h, Workload: wl,
		Histogram: result.Histograms{Read: result.NewHistogram(), Write: result.NewHistogram()},
		Point:     &p,
	}
	if p.Target != "" {
		r.Targets = []result.Target{{Path: p.Target, Kind: "block", SizeBytes: 4 << 30, Direct: true, LogicalBlockBytes: 512, Device: "sd" + p.Target[len(p.Target)-1:]}}
	} else {
		for i := 0; i < max(p.Targets, 1); i++ {
			r.Targets = append(r.Targets, result.Target{Path: fmt.Sprintf("/dev/sd%c", 'b'+i), Kind: "block", SizeBytes: 4 << 30, Direct: true, LogicalBlockBytes: 512, Device: fmt.Sprintf("sd%c", 'b'+i)})
		}
	}
	ops := int(iops * fixtureElapsed)
	inflight := float64(wl.QueueDepth * wl.Workers * max(p.Targets, 1))
	meanNs := inflight / iops * 1e9
	size := int64(0)
	for _, b := range wl.BlockSizes {
		size = max(size, b.Bytes)
	}
	var readBytes, writeBytes uint64
	for i := 0; i < ops; i++ {
		u := float64((i*7919+seed*104729)%1000) / 1000 // 0 … 1
		v := meanNs * (0.55 + 0.8*u)
		if i%100 == 99 {
			v *= 3
		}
		if i%100 < wl.ReadPct {
			r.Histogram.Read.Record(int64(v))
			readBytes += uint64(size)
		} else {
			r.Histogram.Write.Record(int64(v))
			writeBytes += uint64(size)
		}
	}
	summarise(r, readBytes, writeBytes, fixtureElapsed)
	c := &r.Summary.CPU
	c.HostUtilizationPct = cpuPct
	c.HostBusyCores = cpuPct / 100
	c.ProcessUserSeconds = cpuPct / 100 * fixtureElapsed * 0.1
	c.ProcessSystemSeconds = cpuPct / 100 * fixtureElapsed * 0.5
	if r.Summary.Ops > 0 {
		o := float64(r.Summary.Ops)
		c.ProcessCPUSecondsPerIO = (c.ProcessUserSeconds + c.ProcessSystemSeconds) / o
		c.HostCPUSecondsPerIO = c.HostBusyCores * fixtureElapsed / o
		c.CyclesPerIO = c.HostCPUSecondsPerIO * h.ClockHz
	}
	if cpuPct > 0 {
		c.IOPSPerCPUPct = r.Summary.IOPS / cpuPct
		c.MBPerSecondPerCPUPct = r.Summary.MBPerSecond / cpuPct
	}
	for i := 1; i <= int(fixtureElapsed); i++ {
		j := 1 + 0.02*float64((i*37+seed)%5-2)/2
		r.Intervals = append(r.Intervals, result.Interval{TSeconds: float64(i), IOPS: r.Summary.IOPS * j,
			BytesPerSecond: r.Summary.ThroughputBytesPerSecond * j, LatencyMeanSeconds: r.Summary.Latency.MeanSeconds / j,
			LatencyP99Seconds: r.Summary.Latency.Percentiles["99"] / j})
	}
	return r
}

func wl(name string, bs int64, read, random, qd, workers int) result.Workload {
	return result.Workload{Name: name, BlockSizes: []result.BlockSize{{Bytes: bs, Weight: 1}}, ReadPct: read, RandomPct: random,
		QueueDepth: qd, Workers: workers, RampSeconds: 60, DurationSeconds: 180, Engine: "uring", EngineRequested: "auto"}
}

// esx2 Tables 2–5: IOPS and CPU % by size (rows) and pattern (columns:
// random write, random read, sequential write, sequential read).
var (
	lsiIOPS = [5][4]float64{{817, 1424, 9377, 4759}, {725, 1360, 9412, 12618}, {597, 1182, 7122, 10471}, {445, 960, 4199, 5566}, {340, 690, 1878, 2878}}
	lsiCPU  = [5][4]float64{{10.7, 20.4, 82.6, 49.7}, {9.8, 19.5, 82.3, 106.3}, {9.7, 17.7, 72.9, 107.2}, {7.7, 16.1, 53.2, 87.2}, {7.2, 12.3, 29.2, 51.5}}
	busIOPS = [5][4]float64{{813, 1449, 9402, 4683}, {731, 1358, 9058, 13264}, {595, 1185, 7095, 10511}, {448, 967, 4195, 5557}, {338, 690, 1896, 2877}}
	busCPU  = [5][4]float64{{11.1, 20.1, 81.7, 47.9}, {10.9, 20.6, 80.2, 107.8}, {9.8, 18.4, 72.4, 106.2}, {8.3, 16.4, 51.6, 81.7}, {6.6, 11.9, 27.9, 50.0}}
)

var characterizePatterns = []struct {
	slug, label  string
	read, random int
}{{"random-write", "Random Write", 0, 100}, {"random-read", "Random Read", 100, 100}, {"sequential-write", "Sequential Write", 0, 0}, {"sequential-read", "Sequential Read", 100, 0}}

func characterizeResults(target string, iops, cpu [5][4]float64) []*result.Result {
	var out []*result.Result
	for c, pat := range characterizePatterns {
		for row := 0; row < 5; row++ {
			bs := int64(4096) << row
			name := pat.slug + "-" + workload.SizeSlug(bs)
			p := result.Point{Suite: "characterize", Name: name, Section: workload.SectionCharacterize, Pattern: pat.label, SizeBytes: bs, Target: target, Index: c*5 + row}
			out = append(out, measured(esxHost, p, wl(name, bs, pat.read, pat.random, 16, 1), iops[row][c], cpu[row][c], c*5+row))
		}
	}
	return out
}

func suiteDoc(name string, rs []*result.Result) *result.Suite {
	return &result.Suite{Schema: result.SuiteSchema, Suite: name, Results: rs, Version: "0.3.0",
		StartedAt: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
}

// characterizeSuite: esx2 Tables 2 and 4 (LSI Logic) on one target.
func characterizeSuite() *result.Suite {
	s := suiteDoc("characterize", characterizeResults("/dev/sdb", lsiIOPS, lsiCPU))
	s.Source = "esx2-buslogic-vs-lsilogic: Table 1; Tables 2–5, Figures 2–9"
	return s
}

// twoTargetSuite: the same on two targets, LSI Logic and BusLogic side by
// side as the report's Tables 2 and 3.
func twoTargetSuite() *result.Suite {
	rs := append(characterizeResults("/dev/sdb", lsiIOPS, lsiCPU), characterizeResults("/dev/sdc", busIOPS, busCPU)...)
	s := suiteDoc("characterize", rs)
	s.Source = "esx2-buslogic-vs-lsilogic: Table 1; Tables 2–5, Figures 2–9"
	return s
}

// businessSuite: the esg workloads run three times each (the spread kept),
// the mixed run interrupted.
func businessSuite() *result.Suite {
	type bw struct {
		slug, label  string
		bs           int64
		read, random int
		iops, cpu    float64
	}
	ws := []bw{
		{"file-server", "File Server", 8192, 90, 75, 3100, 8.1},
		{"oltp", "OLTP", 8192, 67, 100, 2500, 7.4},
		{"exchange-db", "Exchange DB", 4096, 67, 100, 2900, 7.9},
		{"log", "Log", 65536, 0, 0, 1650, 12.5},
		{"video-on-demand", "Video on Demand", 524288, 100, 0, 190, 9.2},
	}
	var rs []*result.Result
	for i, w := range ws {
		p := result.Point{Suite: "business", Name: w.slug, Section: workload.SectionBusiness, Pattern: w.label, SizeBytes: w.bs, Target: "/dev/sdb", Index: i}
		var runs []*result.Result
		for k := 0; k < 3; k++ {
			runs = append(runs, measured(esxHost, p, wl(w.slug, w.bs, w.read, w.random, 16, 1), w.iops*(1+0.03*float64(k-1)), w.cpu, i*3+k))
		}
		m, err := result.MergeRepeats(runs...)
		if err != nil {
			panic(err)
		}
		rs = append(rs, m)
	}
	p := result.Point{Suite: "business", Name: "mixed", Section: workload.SectionBusiness, Pattern: "Mixed", Target: "/dev/sdb", Index: 5}
	mixed := measured(esxHost, p, wl("mixed", 8192, 67, 100, 16, 1), 4200, 14.2, 99)
	mixed.Status, mixed.Message = result.StatusInterrupted, "interrupted before the run time was over"
	rs = append(rs, mixed)
	s := suiteDoc("business", rs)
	s.Source = "esg-iscsi-vmware: appendix workloads, Figures 8–10, 13"
	s.Options = &result.SuiteOptions{Targets: []string{"/dev/sdb"}, Repeat: 3}
	return s
}

// scalingSuite: esx35 Figure 5 and vsphere5 Figure 2, workers down.
func scalingSuite() *result.Suite {
	var rs []*result.Result
	i := 0
	for _, p := range []struct {
		slug, label  string
		bs           int64
		read, random int
		iops         [6]float64
	}{
		{"sequential-read", "Sequential Read", 65536, 100, 0, [6]float64{2950, 2980, 2990, 2995, 2990, 2985}},
		{"random-read", "Random Read", 8192, 100, 100, [6]float64{1400, 2700, 5100, 9000, 14500, 18200}},
	} {
		for k, w := range []int{1, 2, 4, 8, 16, 32} {
			name := fmt.Sprintf("%s-%s-w%d", p.slug, workload.SizeSlug(p.bs), w)
			pt := result.Point{Suite: "scaling", Name: name, Section: workload.SectionScaling, Pattern: p.label, SizeBytes: p.bs, Target: "/dev/sdb", Index: i}
			rs = append(rs, measured(esxHost, pt, wl(name, p.bs, p.read, p.random, 16, w), p.iops[k], 5+float64(w), i))
			i++
		}
	}
	s := suiteDoc("scaling", rs)
	s.Source = "esx35-storage-protocols Figure 5, vsphere5-million-iops Figure 2"
	return s
}

var suiteFixtures = []struct {
	name  string
	suite func() *result.Suite
}{
	{"characterize", characterizeSuite},
	{"two_targets", twoTargetSuite},
	{"business", businessSuite},
	{"scaling", scalingSuite},
}
