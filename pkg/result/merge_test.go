package result

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

func TestMergeEqualsOneRunOfBoth(t *testing.T) {
	ra, wa := latencies(67_000, 80_000, 100_000, 1), latencies(33_000, 150_000, 300_000, 2)
	rb, wb := latencies(50_000, 400_000, 900_000, 3), latencies(25_000, 900_000, 2_000_000, 4)
	a := run("host-a", 8, ra, wa, 10, 12)
	b := run("host-b", 8, rb, wb, 10, 30)
	both := run("host-a, host-b", 16, append(append([]int64{}, ra...), rb...), append(append([]int64{}, wa...), wb...), 10, 42)

	m, err := Merge(a, b)
	require.NoError(t, err)

	// Counts are exact.
	require.Equal(t, both.Summary.Ops, m.Summary.Ops)
	require.Equal(t, both.Summary.ReadOps, m.Summary.ReadOps)
	require.Equal(t, both.Summary.WriteOps, m.Summary.WriteOps)
	require.Equal(t, both.Summary.Bytes, m.Summary.Bytes)
	require.Equal(t, both.Summary.ReadBytes, m.Summary.ReadBytes)
	// The merged histograms are the histograms of every I/O of both runs,
	// so every latency figure is the one-run figure, exactly.
	require.Equal(t, both.Histogram.Read, m.Histogram.Read)
	require.Equal(t, both.Histogram.Write, m.Histogram.Write)
	require.Equal(t, both.Summary.Latency, m.Summary.Latency)
	require.Equal(t, both.Summary.ReadLatency, m.Summary.ReadLatency)
	require.Equal(t, both.Summary.WriteLatency, m.Summary.WriteLatency)
	// ... and not any blend of the two runs' own percentiles.
	require.NotEqual(t, (a.Summary.Latency.Percentiles["99"]+b.Summary.Latency.Percentiles["99"])/2, m.Summary.Latency.Percentiles["99"])
	// Rates of concurrent hosts add up.
	require.InEpsilon(t, both.Summary.IOPS, m.Summary.IOPS, 1e-12)
	require.InEpsilon(t, both.Summary.ReadIOPS, m.Summary.ReadIOPS, 1e-12)
	require.InEpsilon(t, both.Summary.MBPerSecond, m.Summary.MBPerSecond, 1e-12)
	require.Equal(t, 10.0, m.Summary.ElapsedSeconds)
	// Host CPU adds up over hosts; per-I/O figures follow.
	require.InEpsilon(t, 42.0, m.Summary.CPU.HostUtilizationPct, 1e-12)
	require.InEpsilon(t, both.Summary.CPU.HostCPUSecondsPerIO, m.Summary.CPU.HostCPUSecondsPerIO, 1e-12)
	require.InEpsilon(t, both.Summary.CPU.IOPSPerCPUPct, m.Summary.CPU.IOPSPerCPUPct, 1e-12)
	require.InEpsilon(t, 6.0/float64(both.Summary.Ops), m.Summary.CPU.ProcessCPUSecondsPerIO, 1e-12)
	// It says what it merged.
	require.Equal(t, &MergeInfo{Runs: 2, Hosts: []string{"host-a", "host-b"}, Of: append(a.Runs(), b.Runs()...)}, m.Merged)
	require.Equal(t, "host-a, host-b", m.Host.Hostname)
	require.Equal(t, 16, m.Host.LogicalCPUs)
	require.Equal(t, "oltp", m.Point.Name)
	require.Len(t, m.Intervals, 10)
	require.InEpsilon(t, both.Summary.IOPS, m.Intervals[3].IOPS, 1e-12)
	require.Len(t, m.Targets, 1, "the same path on both hosts")

	// Merging is associative: a merged result merges again exactly.
	c := run("host-c", 4, ra[:1000], wa[:500], 10, 5)
	m2, err := Merge(m, c)
	require.NoError(t, err)
	m3, err := Merge(a, b, c)
	require.NoError(t, err)
	require.Equal(t, m3.Summary.Latency, m2.Summary.Latency)
	require.Equal(t, m3.Summary.Ops, m2.Summary.Ops)
	require.Equal(t, 3, m2.Merged.Runs)
	require.Equal(t, []string{"host-a", "host-b", "host-c"}, m2.Merged.Hosts)
}

func TestMergeSameHostCountsItsCPUOnce(t *testing.T) {
	a := run("h", 8, latencies(1000, 1000, 100, 1), nil, 10, 20)
	b := run("h", 8, latencies(1000, 1000, 100, 2), nil, 10, 20)
	m, err := Merge(a, b)
	require.NoError(t, err)
	require.InEpsilon(t, 20.0, m.Summary.CPU.HostUtilizationPct, 1e-12)
	require.Equal(t, []string{"h"}, m.Merged.Hosts)
	require.Equal(t, 8, m.Host.LogicalCPUs)
}

func TestMergeRepeatsKeepsTheSpread(t *testing.T) {
	r1 := run("h", 2, latencies(1000, 100_000, 10_000, 1), nil, 2, 10)
	r2 := run("h", 2, latencies(1200, 100_000, 10_000, 2), nil, 2, 10)
	r3 := run("h", 2, latencies(1400, 100_000, 10_000, 3), nil, 4, 10)
	m, err := MergeRepeats(r1, r2, r3)
	require.NoError(t, err)
	require.EqualValues(t, 3600, m.Summary.Ops)
	require.Equal(t, 8.0, m.Summary.ElapsedSeconds, "repeats follow each other")
	require.InEpsilon(t, 3600.0/8, m.Summary.IOPS, 1e-12)
	require.InEpsilon(t, 10.0, m.Summary.CPU.HostUtilizationPct, 1e-12)
	sp := m.Spread
	require.NotNil(t, sp)
	require.Equal(t, SpreadRepeat, sp.Source)
	require.Equal(t, 3, sp.Runs)
	require.Equal(t, []float64{500, 600, 350}, sp.IOPS.Values)
	require.Equal(t, 350.0, sp.IOPS.Min)
	require.Equal(t, 600.0, sp.IOPS.Max)
	require.InDelta(t, 483.333, sp.IOPS.Mean, 0.001)
	require.InDelta(t, 125.831, sp.IOPS.Stddev, 0.001)
	require.Len(t, m.Intervals, 8)
	require.Equal(t, 8.0, m.Intervals[7].TSeconds)
	require.Equal(t, 3, m.Merged.Runs)
}

func TestMergeRefusesDifferentWorkloads(t *testing.T) {
	a := run("a", 2, latencies(100, 1000, 10, 1), nil, 1, 1)
	b := run("b", 2, latencies(100, 1000, 10, 1), nil, 1, 1)
	b.Workload.QueueDepth = 32
	_, err := Merge(a, b)
	require.ErrorContains(t, err, "QD/workers differ (16/1 and 32/1)")
	b = run("b", 2, latencies(100, 1000, 10, 1), nil, 1, 1)
	b.Point.Name = "file-server"
	_, err = Merge(a, b)
	require.ErrorContains(t, err, `points "oltp" and "file-server" differ`)
	b = run("b", 2, latencies(100, 1000, 10, 1), nil, 1, 1)
	b.Workload.Fdatasync = 1
	_, err = Merge(a, b)
	require.ErrorContains(t, err, `durable writes differ (fsync 0, fdatasync 0, sync "" and fsync 0, fdatasync 1, sync "")`)
	b = run("b", 2, latencies(100, 1000, 10, 1), nil, 1, 1)
	b.Histogram.Read = nil
	_, err = Merge(a, b)
	require.ErrorContains(t, err, "no latency histogram")
	_, err = Merge()
	require.Error(t, err)
}

func TestMergeByPoint(t *testing.T) {
	mk := func(host, name, target string) *Result {
		r := run(host, 2, latencies(100, 1000, 10, 1), nil, 1, 1)
		r.Point.Name, r.Point.Target = name, target
		r.Workload.Name = name
		return r
	}
	rs := []*Result{mk("a", "x", "/dev/sdb"), mk("a", "y", "/dev/sdb"), mk("b", "x", "/dev/sdc"), mk("b", "y", "/dev/sdc")}
	m, err := MergeByPoint(rs, false)
	require.NoError(t, err)
	require.Len(t, m, 2)
	require.Equal(t, "x", m[0].Point.Name)
	require.Equal(t, "/dev/sdb+/dev/sdc", m[0].Point.Target)
	require.EqualValues(t, 200, m[0].Summary.Ops)
	m, err = MergeByPoint(rs, true)
	require.NoError(t, err)
	require.Len(t, m, 4)
}

func TestIntervalSpread(t *testing.T) {
	r := &Result{Intervals: []Interval{
		{TSeconds: 1, IOPS: 100, BytesPerSecond: 1e6, LatencyMeanSeconds: 0.001},
		{TSeconds: 2, IOPS: 110, BytesPerSecond: 1.1e6, LatencyMeanSeconds: 0.001},
		{TSeconds: 3, IOPS: 90, BytesPerSecond: 0.9e6, LatencyMeanSeconds: 0.001},
		{TSeconds: 3.1, IOPS: 5000, BytesPerSecond: 5e7}, // a short last interval: left out
	}}
	sp := IntervalSpread(r)
	require.NotNil(t, sp)
	require.Equal(t, SpreadIntervals, sp.Source)
	require.Equal(t, 3, sp.Runs)
	require.Equal(t, []float64{100, 110, 90}, sp.IOPS.Values)
	cv, ok := sp.IOPS.Relative()
	require.True(t, ok)
	require.InDelta(t, 0.1, cv, 1e-9)
	require.Equal(t, sp, SpreadOf(r))
	require.Nil(t, IntervalSpread(&Result{Intervals: r.Intervals[:2]}))
	_, ok = sp.HostCPUSecondsPerIO.Relative()
	require.False(t, ok)
}

func TestMergeKeepsACommonStartAt(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	a := run("host-a", 8, latencies(1000, 80_000, 100_000, 1), nil, 10, 12)
	b := run("host-b", 8, latencies(1000, 80_000, 100_000, 2), nil, 10, 12)
	a.StartAt, b.StartAt = at, at
	m, err := Merge(a, b)
	require.NoError(t, err)
	require.True(t, m.StartAt.Equal(at), "hosts started at one requested instant")
	b.StartAt = at.Add(time.Second)
	m, err = Merge(a, b)
	require.NoError(t, err)
	require.True(t, m.StartAt.IsZero(), "no common request, none recorded")
}

// The latency from the intended start merges exactly when every run was
// rate-limited, and is left out when one was not: its percentiles would
// describe only some of the merged I/Os.
func TestMergeIntendedLatencyOnlyWhenEveryRunHasIt(t *testing.T) {
	paced := func(host string, seed int) *Result {
		r := run(host, 4, latencies(500, 100_000, 50_000, seed), nil, 10, 20)
		r.Histogram.Intended = NewHistogram()
		for _, v := range latencies(500, 150_000, 3_000_000, seed+1) {
			r.Histogram.Intended.Record(v)
		}
		r.Summary.SetFromHistograms(r.Histogram)
		require.NotNil(t, r.Summary.IntendedLatency)
		return r
	}
	a, b := paced("h1", 1), paced("h2", 2)
	m, err := Merge(a, b)
	require.NoError(t, err)
	both := NewHistogram()
	both.Merge(a.Histogram.Intended)
	both.Merge(b.Histogram.Intended)
	require.Equal(t, both, m.Histogram.Intended)
	require.Equal(t, LatencyOf(both), *m.Summary.IntendedLatency)
	require.Equal(t, m.Summary.Ops, m.Histogram.Intended.Count(), "one intended latency per I/O")

	m, err = Merge(a, run("h3", 4, latencies(500, 100_000, 50_000, 3), nil, 10, 20))
	require.NoError(t, err)
	require.Nil(t, m.Histogram.Intended)
	require.Nil(t, m.Summary.IntendedLatency)
}

// TestMergeCountsSharedDevicesOnce: three runs on one machine (one boot
// id: three daemons in its network namespaces) measured the same disk at
// the same time; each counted every I/O of all three. Merged, the
// kernel's counts are taken once, the machine's CPU too, and the result
// says which devices were shared. A run of another machine adds its own;
// runs one after another on that disk add up.
func TestMergeCountsSharedDevicesOnce(t *testing.T) {
	var rs []*Result
	for i := range 3 {
		r := run("node1", 4, latencies(1000*(i+1), 100_000, 10_000, i+1), nil, 10, 30)
		r.RunID = fmt.Sprintf("run-%d", i)
		r.Host.BootID = "boot-1"
		r.StartedAt = r.StartedAt.Add(time.Duration(i) * time.Millisecond)
		r.Summary.Device = &DeviceStats{Devices: []string{"vdb"}, ReadOps: 6000 + uint64(i), ReadBytes: 6000 * 4096, FlushOps: 2}
		rs = append(rs, r)
	}
	other := run("node2", 4, latencies(500, 100_000, 10_000, 9), nil, 10, 30)
	other.RunID, other.Host.BootID = "run-other", "boot-2"
	other.Summary.Device = &DeviceStats{Devices: []string{"vdb"}, ReadOps: 500, ReadBytes: 500 * 4096}

	m, err := Merge(append(slices.Clone(rs), other)...)
	require.NoError(t, err)
	d := m.Summary.Device
	require.EqualValues(t, 6002+500, d.ReadOps, "node1's disk once (the largest count), node2's added")
	require.EqualValues(t, 6000*4096+500*4096, d.ReadBytes)
	require.EqualValues(t, 2, d.FlushOps)
	require.Equal(t, []SharedDevices{{Hosts: []string{"node1"}, Devices: []string{"vdb"}, Runs: 3}}, d.Shared)
	require.Equal(t, "node1:vdb:3", FigDeviceShared.Figure().Text(&m.Summary))
	require.InEpsilon(t, 60.0, m.Summary.CPU.HostUtilizationPct, 1e-12, "each machine's CPU once: node1's 30% and node2's")

	// The same disk one run after another: nothing overlaps, all counted.
	rs[1].StartedAt = rs[0].StartedAt.Add(time.Minute)
	rs[2].StartedAt = rs[0].StartedAt.Add(2 * time.Minute)
	m, err = Merge(rs...)
	require.NoError(t, err)
	require.EqualValues(t, 6000+6001+6002, m.Summary.Device.ReadOps)
	require.Empty(t, m.Summary.Device.Shared)
}

// TestMergeRefusesTheSameRunTwice: a result merged with itself, or a
// merged result with one of the runs it holds, would count those I/Os
// twice; the error names the run and both results.
func TestMergeRefusesTheSameRunTwice(t *testing.T) {
	a := run("h1", 4, latencies(1000, 100_000, 10_000, 1), nil, 10, 30)
	b := run("h2", 4, latencies(1000, 100_000, 10_000, 2), nil, 10, 30)
	a.RunID, b.RunID = "run-a", "run-b"
	_, err := Merge(a, a)
	var dup *DuplicateRunError
	require.ErrorAs(t, err, &dup)
	require.Equal(t, "run-a", dup.Run.RunID)
	require.Contains(t, err.Error(), "host h1")

	m, err := Merge(a, b)
	require.NoError(t, err)
	require.Equal(t, []string{"run-a", "run-b"}, []string{m.Merged.Of[0].RunID, m.Merged.Of[1].RunID})
	_, err = Merge(m, b)
	require.ErrorAs(t, err, &dup)
	require.Same(t, m, dup.First)
	require.Same(t, b, dup.Second)
	require.Equal(t, "run-b", dup.Run.RunID)

	// A copy of a result written before run ids is still the same run;
	// another run of the same host at the same instant is not.
	a.RunID, b.RunID = "", ""
	c := *a
	_, err = Merge(a, &c)
	require.ErrorAs(t, err, &dup)
	require.True(t, strings.HasPrefix(dup.Run.RunID, LegacyRunIDPrefix))
	b.Host = a.Host
	b.StartedAt = a.StartedAt
	_, err = Merge(a, b)
	require.NoError(t, err)
}

// TestMergeDeviceLatencyOnlyWhenEveryRunMeasuredIt: a merge of a run
// that measured its device's latency with one that could not has none,
// and says why.
func TestMergeDeviceLatencyOnlyWhenEveryRunMeasuredIt(t *testing.T) {
	a := run("h1", 8, latencies(300, 100_000, 50_000, 1), latencies(100, 300_000, 90_000, 2), 4, 30)
	b := run("h2", 8, latencies(200, 120_000, 40_000, 3), latencies(50, 250_000, 70_000, 4), 5, 12)
	a.Histogram.Device = NewDeviceHistograms()
	a.Histogram.Device.Read.Record(40_000)
	a.Summary.Device = &DeviceStats{Devices: []string{"sdb"}}
	a.Summary.Device.SetDeviceLatency(a.Histogram.Device, 4096, 0, 0, "")
	b.Summary.Device = &DeviceStats{Devices: []string{"sdb"}, LatencyUnavailable: "not permitted to load BPF programs"}
	m, err := Merge(a, b)
	require.NoError(t, err)
	require.Nil(t, m.Histogram.Device)
	require.Nil(t, m.Summary.Device.Latency)
	require.Equal(t, "not measured on every run merged (h2: not permitted to load BPF programs)", m.Summary.Device.LatencyUnavailable)

	c := *a // another machine's run of the same shape
	c.RunID, c.Host.Hostname = "run-c", "h3"
	m, err = Merge(a, &c)
	require.NoError(t, err)
	require.Equal(t, uint64(2), m.Summary.Device.Latency.Read.Count)
	require.Equal(t, uint64(8192), m.Summary.Device.Latency.Read.Bytes)
	require.Empty(t, m.Summary.Device.LatencyUnavailable)
}

// TestMergeSharedDeviceLatencyOnce: runs that measured one machine's disk
// at the same time each timed every request of it (the programs see the
// device, not the process): the merged histogram.device is one run's
// (the one that timed the most), as the kernel's counts are taken once;
// another machine's adds up.
func TestMergeSharedDeviceLatencyOnce(t *testing.T) {
	withDevice := func(host, boot, id string, reads int, shift time.Duration) *Result {
		r := run(host, 4, latencies(1000, 100_000, 10_000, 7), nil, 10, 30)
		r.RunID, r.Host.BootID = id, boot
		r.StartedAt = r.StartedAt.Add(shift)
		r.Histogram.Device = NewDeviceHistograms()
		for range reads {
			r.Histogram.Device.Read.Record(50_000)
		}
		r.Summary.Device = &DeviceStats{Devices: []string{"vdb"}, ReadOps: uint64(reads)}
		r.Summary.Device.SetDeviceLatency(r.Histogram.Device, uint64(reads)*4096, 0, 0, "")
		return r
	}
	a := withDevice("node1", "boot-1", "run-a", 300, 0)
	b := withDevice("node1", "boot-1", "run-b", 310, time.Millisecond)
	c := withDevice("node2", "boot-2", "run-c", 40, 0)
	m, err := Merge(a, b, c)
	require.NoError(t, err)
	require.EqualValues(t, 310+40, m.Histogram.Device.Read.Count(), "node1's disk once, node2's added")
	require.EqualValues(t, (310+40)*4096, m.Summary.Device.Latency.Read.Bytes)
	require.EqualValues(t, 310+40, m.Summary.Device.ReadOps)

	// One after another, every request counts.
	b.StartedAt = a.StartedAt.Add(time.Hour)
	m, err = Merge(a, b, c)
	require.NoError(t, err)
	require.EqualValues(t, 300+310+40, m.Histogram.Device.Read.Count())
}

// TestDecodeReadsOldSectionTitlesAsToday: a suite file written when the
// CPU-cost section said "8KB" pairs with one written since.
func TestDecodeReadsOldSectionTitlesAsToday(t *testing.T) {
	doc := `{"schema":"ioprobe.suite/v1","suite":"protocols","results":[{"schema":"ioprobe.result/v1",` +
		`"point":{"suite":"protocols","name":"cpu-cost-8k","section":"CPU cost of an 8KB 50% read 50% random mix (esx35 Figure 6)","pattern":"50% Read 50% Random","size_bytes":8192,"index":20}}]}`
	_, rs, err := Decode(strings.NewReader(doc))
	require.NoError(t, err)
	require.Equal(t, workload.SectionCPUCost, rs[0].Point.Section)
	require.Contains(t, workload.SectionCPUCost, "8 KiB")
}
