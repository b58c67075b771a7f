package result

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// point builds a result of one point with the given figures; jitter sets
// the interval-to-interval variation of IOPS (0: steady), repeat the
// per-run IOPS of --repeat (nil: none).
func point(name, target string, iops, meanMs, p99Ms, cpuUs float64, jitter float64, repeat []float64) *Result {
	r := &Result{Schema: Schema, Host: Host{Hostname: "h"},
		Workload: Workload{Name: name, BlockSizes: []BlockSize{{Bytes: 4096, Weight: 1}}, ReadPct: 100, RandomPct: 100, QueueDepth: 16, Workers: 1},
		Point:    &Point{Name: name, Pattern: "Random Read", SizeBytes: 4096, Target: target, Section: "s"},
	}
	s := &r.Summary
	s.IOPS, s.MBPerSecond = iops, iops*4096/1e6
	s.Latency = Latency{MeanSeconds: meanMs / 1e3, Percentiles: map[string]float64{"99": p99Ms / 1e3}}
	s.CPU.HostCPUSecondsPerIO = cpuUs / 1e6
	s.CPU.ProcessCPUSecondsPerIO = cpuUs / 2e6
	for i := 0; i < 10; i++ {
		f := 1.0
		if i%2 == 1 {
			f += jitter
		} else {
			f -= jitter
		}
		r.Intervals = append(r.Intervals, Interval{TSeconds: float64(i + 1), IOPS: iops * f, BytesPerSecond: iops * f * 4096,
			LatencyMeanSeconds: meanMs / 1e3 / f, LatencyP99Seconds: p99Ms / 1e3 / f})
	}
	if repeat != nil {
		r.Spread = &Spread{Source: SpreadRepeat, Runs: len(repeat), IOPS: NewStat(repeat)}
	}
	return r
}

func TestCompareDeltas(t *testing.T) {
	cases := []struct {
		name        string
		base, other *Result
		metric      string
		pct         float64
		noise       bool
		better      bool
		worse       bool
		noiseKnown  bool
	}{
		{"faster, steady", point("p", "/a", 1000, 1, 2, 10, 0, nil), point("p", "/b", 1130, 0.9, 1.92, 10.9, 0, nil),
			MetricIOPS, 13, false, true, false, false},
		{"lower p99 is better", point("p", "/a", 1000, 1, 2, 10, 0.01, nil), point("p", "/b", 1130, 0.9, 1.92, 10.9, 0.01, nil),
			MetricLatencyP99, -4, false, true, false, true},
		{"more CPU per I/O is worse", point("p", "/a", 1000, 1, 2, 10, 0.001, nil), point("p", "/b", 1130, 0.9, 1.92, 10.9, 0.001, nil),
			MetricCPUPerIO, 9, false, false, true, true},
		{"within the interval spread is noise", point("p", "/a", 1000, 1, 2, 10, 0.05, nil), point("p", "/b", 1040, 1, 2, 10, 0.05, nil),
			MetricIOPS, 4, true, false, false, true},
		{"beyond the interval spread is not", point("p", "/a", 1000, 1, 2, 10, 0.01, nil), point("p", "/b", 1040, 1, 2, 10, 0.01, nil),
			MetricIOPS, 4, false, true, false, true},
		{"repeat spread wins over intervals", point("p", "/a", 1000, 1, 2, 10, 0, []float64{900, 1000, 1100}), point("p", "/b", 1100, 1, 2, 10, 0, []float64{1000, 1100, 1200}),
			MetricIOPS, 10, true, false, false, true},
		{"CPU noise follows IOPS without repeats", point("p", "/a", 1000, 1, 2, 10, 0.05, nil), point("p", "/b", 1000, 1, 2, 10.5, 0.05, nil),
			MetricCPUPerIO, 5, true, false, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmp, err := Compare([]*Result{c.base}, []*Result{c.other})
			require.NoError(t, err)
			require.Len(t, cmp.Points, 1)
			d := cmp.Points[0].Delta(c.metric)
			require.NotNil(t, d)
			require.True(t, d.Valid)
			require.InDelta(t, c.pct, d.Pct, 0.01)
			require.Equal(t, c.noise, d.Noise, "band ±%.2f%%", d.NoisePct)
			require.Equal(t, c.better, d.Better)
			require.Equal(t, c.worse, d.Worse)
			require.Equal(t, c.noiseKnown, d.NoisePct > 0)
		})
	}
}

func TestCompareNoiseBand(t *testing.T) {
	// Interval IOPS alternate ±5%: cv = 0.05·√(10/9); band = 2·√2·cv.
	cmp, err := Compare([]*Result{point("p", "/a", 1000, 1, 2, 10, 0.05, nil)}, []*Result{point("p", "/a", 1000, 1, 2, 10, 0.05, nil)})
	require.NoError(t, err)
	d := cmp.Points[0].Delta(MetricIOPS)
	require.InDelta(t, 2*1.41421356*0.05*1.05409255*100, d.NoisePct, 0.001)
	require.Equal(t, SpreadIntervals, cmp.Points[0].BaseSpread)
	require.True(t, d.Noise, "no difference is noise")
	require.False(t, d.Better || d.Worse)
}

func TestCompareInvalidBase(t *testing.T) {
	b := point("p", "/a", 0, 0, 0, 0, 0, nil)
	cmp, err := Compare([]*Result{b}, []*Result{point("p", "/a", 10, 1, 1, 1, 0, nil)})
	require.NoError(t, err)
	require.False(t, cmp.Points[0].Delta(MetricIOPS).Valid)
}

func TestComparePairing(t *testing.T) {
	one := func(target string, names ...string) []*Result {
		var out []*Result
		for _, n := range names {
			out = append(out, point(n, target, 1000, 1, 2, 10, 0, nil))
		}
		return out
	}
	// One target on each side: two devices compared, whatever their paths.
	cmp, err := Compare(one("/dev/sdb", "x", "y", "z"), one("/dev/sdc", "y", "x", "w"))
	require.NoError(t, err)
	require.Len(t, cmp.Points, 2)
	require.Equal(t, "x", cmp.Points[0].Point.Name, "base order")
	require.Equal(t, "/dev/sdb", cmp.Points[0].BaseSide)
	require.Equal(t, "/dev/sdc", cmp.Points[0].OtherSide)
	require.Equal(t, []string{"z on /dev/sdb"}, cmp.OnlyBase)
	require.Equal(t, []string{"w on /dev/sdc"}, cmp.OnlyOther)

	// Several targets on both sides: pair by target too.
	base := append(one("/dev/sdb", "x"), one("/dev/sdc", "x")...)
	other := append(one("/dev/sdc", "x"), one("/dev/sdd", "x")...)
	cmp, err = Compare(base, other)
	require.NoError(t, err)
	require.Len(t, cmp.Points, 1)
	require.Equal(t, "/dev/sdc", cmp.Points[0].BaseSide)

	// The same point twice on one side must be merged first.
	dup := one("/dev/sdb", "x", "x")
	_, err = Compare(dup, one("/dev/sdb", "x"))
	require.ErrorContains(t, err, "base holds point x on /dev/sdb twice")
	require.ErrorContains(t, err, "--merge")

	_, err = Compare(base, one("/dev/sdb", "x"))
	require.ErrorContains(t, err, "base measured 2 targets in turn and other 1")

	_, err = Compare(one("/a", "x"), one("/a", "y"))
	require.ErrorContains(t, err, "no point in common (base has x on /a; other has y on /a)")
}

func TestPointOfPlainRun(t *testing.T) {
	r := &Result{Workload: Workload{Name: "4KiB random read", BlockSizes: []BlockSize{{Bytes: 4096, Weight: 70}, {Bytes: 65536, Weight: 30}}, ReadPct: 100, RandomPct: 100},
		Targets: []Target{{Path: "/dev/sdb"}}}
	p := PointOf(r)
	require.Equal(t, Point{Name: "4KiB random read", Section: SectionRuns, Pattern: "Random Read", SizeBytes: 65536, Target: "/dev/sdb"}, p)
	r.Targets = append(r.Targets, Target{Path: "/dev/sdc"})
	require.Equal(t, 2, PointOf(r).Targets)
	require.Empty(t, PointOf(r).Side(), "several targets at once are no one side")
	r.Groups = []Workload{{}, {}}
	require.Equal(t, "Mixed", PointOf(r).Pattern)
}
