package workload

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func base() SuiteOptions {
	return SuiteOptions{Base: Spec{Duration: 2 * time.Second, Ramp: time.Second, RegionBytes: 256 * MiB, Engine: "auto"}, Targets: 1}
}

func names(s *Suite) []string {
	var out []string
	for _, p := range s.Points {
		out = append(out, p.Name)
	}
	return out
}

func TestCharacterizeIsTable1(t *testing.T) {
	s, err := BuildSuite("characterize", base())
	require.NoError(t, err)
	require.Len(t, s.Points, 20)
	require.Equal(t, "random-write-4k", s.Points[0].Name)
	require.Equal(t, "sequential-read-64k", s.Points[19].Name)
	cells := map[string]map[int64]bool{}
	for _, p := range s.Points {
		require.Len(t, p.Specs, 1)
		sp := p.Specs[0]
		require.Equal(t, 16, sp.QueueDepth)
		require.Equal(t, 1, sp.Workers)
		require.Equal(t, 2*time.Second, sp.Duration)
		require.Equal(t, time.Second, sp.Ramp)
		require.Equal(t, 256*MiB, sp.RegionBytes)
		require.Equal(t, p.Size, sp.MaxBlock())
		require.Equal(t, p.Name, sp.Name)
		require.Equal(t, SectionCharacterize, p.Section)
		if cells[p.Pattern] == nil {
			cells[p.Pattern] = map[int64]bool{}
		}
		cells[p.Pattern][p.Size] = true
	}
	require.Len(t, cells, 4)
	for pattern, sz := range cells {
		require.Len(t, sz, 5, pattern)
		for _, want := range []int64{4 * KiB, 8 * KiB, 16 * KiB, 32 * KiB, 64 * KiB} {
			require.True(t, sz[want], "%s %d", pattern, want)
		}
	}
	rw := s.Points[0].Specs[0]
	require.Equal(t, 0, rw.ReadPct)
	require.Equal(t, 100, rw.RandomPct)
}

func TestSuitesShapes(t *testing.T) {
	cases := []struct {
		name   string
		points int
		first  string
	}{
		{"protocols", 21, "sequential-read-1k"},
		{"peak-iops", 10 + 4 + 1, "random-read-512b-qd16"},
		{"business", 6, "file-server"},
		{"scaling", 12, "sequential-read-64k-w1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := BuildSuite(c.name, base())
			require.NoError(t, err)
			require.Len(t, s.Points, c.points, names(s))
			require.Equal(t, c.first, s.Points[0].Name)
			require.NotEmpty(t, s.Source)
		})
	}
}

func TestBusinessMixedRunsAllAtOnce(t *testing.T) {
	s, err := BuildSuite("business", base())
	require.NoError(t, err)
	mixed := s.Points[5]
	require.Equal(t, "mixed", mixed.Name)
	require.Len(t, mixed.Specs, 5)
	require.Zero(t, mixed.Size)
	want := map[string][3]int64{
		"file-server": {8 * KiB, 90, 75}, "oltp": {8 * KiB, 67, 100}, "exchange-db": {4 * KiB, 67, 100},
		"log": {64 * KiB, 0, 0}, "video-on-demand": {512 * KiB, 100, 0},
	}
	for i, sp := range mixed.Specs {
		w := want[sp.Name]
		require.Equal(t, w[0], sp.MaxBlock(), sp.Name)
		require.EqualValues(t, w[1], sp.ReadPct, sp.Name)
		require.EqualValues(t, w[2], sp.RandomPct, sp.Name)
		require.Equal(t, s.Points[i].Specs[0], sp, "the mixed run's groups are the single workloads")
	}
	require.True(t, mixed.WritesData())
	require.False(t, s.Points[4].WritesData())
}

func TestPeakIOPSScalesOverTargets(t *testing.T) {
	o := base()
	o.Targets = 6
	s, err := BuildSuite("peak-iops", o)
	require.NoError(t, err)
	var spans []int
	for _, p := range s.Points {
		if p.Section == SectionPeakTargets {
			spans = append(spans, p.Span)
			require.Equal(t, 16, p.Specs[0].QueueDepth)
		} else {
			require.Zero(t, p.Span)
		}
		if p.Section == SectionPeakWorkers {
			require.Equal(t, 32, p.Specs[0].QueueDepth)
		}
	}
	require.Equal(t, []int{1, 2, 4, 6}, spans)
}

func TestCyclingReplacesOrMultiplies(t *testing.T) {
	c, err := ParseCycle("qd=1..8*2")
	require.NoError(t, err)

	// characterize has no qd list: every point runs at every value.
	o := base()
	o.Cycles = []Cycle{c}
	s, err := BuildSuite("characterize", o)
	require.NoError(t, err)
	require.Len(t, s.Points, 80)
	require.Equal(t, []string{"random-write-4k-qd1", "random-write-4k-qd2", "random-write-4k-qd4", "random-write-4k-qd8"}, names(s)[:4])
	require.Equal(t, 8, s.Points[3].Specs[0].QueueDepth)

	// peak-iops has one: the cycle replaces 16 and 32.
	s, err = BuildSuite("peak-iops", o)
	require.NoError(t, err)
	require.Len(t, s.Points, 4*5+4*4+4*1)

	// scaling cycles workers itself.
	w, err := ParseCycle("workers=1..3+1")
	require.NoError(t, err)
	o.Cycles = []Cycle{w}
	s, err = BuildSuite("scaling", o)
	require.NoError(t, err)
	require.Equal(t, []string{"sequential-read-64k-w1", "sequential-read-64k-w2", "sequential-read-64k-w3",
		"random-read-8k-w1", "random-read-8k-w2", "random-read-8k-w3"}, names(s))

	// bs replaces characterize's sizes.
	bs, err := ParseCycle("bs=4k..1m*4")
	require.NoError(t, err)
	o.Cycles = []Cycle{bs}
	s, err = BuildSuite("characterize", o)
	require.NoError(t, err)
	require.Len(t, s.Points, 4*5)
	require.Equal(t, "random-write-1m", s.Points[4].Name)
	require.Equal(t, MiB, s.Points[4].Size)

	// Two dimensions multiply.
	o.Cycles = []Cycle{c, w}
	s, err = BuildSuite("business", o)
	require.NoError(t, err)
	require.Len(t, s.Points, 6*4*3)
	require.Equal(t, "file-server-qd1-w1", s.Points[0].Name)
	require.Equal(t, "mixed-qd8-w3", s.Points[len(s.Points)-1].Name)
	for _, sp := range s.Points[len(s.Points)-1].Specs {
		require.Equal(t, 8, sp.QueueDepth)
		require.Equal(t, 3, sp.Workers)
	}

	o.Cycles = []Cycle{c, c}
	_, err = BuildSuite("business", o)
	require.ErrorContains(t, err, "cycled twice")
}

func TestFixedQDKeepsNames(t *testing.T) {
	o := base()
	o.QueueDepth, o.Workers = 4, 2
	s, err := BuildSuite("characterize", o)
	require.NoError(t, err)
	require.Equal(t, "random-write-4k", s.Points[0].Name)
	require.Equal(t, 4, s.Points[0].Specs[0].QueueDepth)
	require.Equal(t, 2, s.Points[0].Specs[0].Workers)
}

func TestCustomSuite(t *testing.T) {
	o := base()
	sp := Spec{BlockSizes: one(4 * KiB), ReadPct: 70, RandomPct: 100, Duration: time.Second}.WithDefaults()
	o.Custom = &sp
	c, _ := ParseCycle("qd=1,4")
	o.Cycles = []Cycle{c}
	s, err := BuildSuite("custom", o)
	require.NoError(t, err)
	require.Equal(t, []string{"custom-qd1", "custom-qd4"}, names(s))
	require.Equal(t, "70% Read 100% Random", s.Points[0].Pattern)
	require.Equal(t, 4*KiB, s.Points[0].Size)

	_, err = BuildSuite("custom", base())
	require.Error(t, err)
}

func TestReadOnlyDropsWrites(t *testing.T) {
	o := base()
	o.ReadOnly = true
	s, err := BuildSuite("characterize", o)
	require.NoError(t, err)
	require.Len(t, s.Points, 10)
	for _, p := range s.Points {
		require.False(t, p.WritesData(), p.Name)
	}
}

func TestBuildSuiteBadInput(t *testing.T) {
	_, err := BuildSuite("tpcc", base())
	var fe *FieldError
	require.True(t, errors.As(err, &fe))
	require.Contains(t, err.Error(), "unknown suite (known: characterize, protocols")

	// 100MiB is not a multiple of 64KiB's alignment? It is; 100000k is not.
	o := base()
	o.Base.RegionBytes = 100000 * KiB
	_, err = BuildSuite("characterize", o)
	require.True(t, errors.As(err, &fe), "%v", err)
	require.Contains(t, err.Error(), "(in suite point random-write-64k)")
}

// Cycles multiply: past MaxSuitePoints the suite is refused before it is
// planned (peak-iops varies all three dimensions itself).
func TestCyclesBoundTheSuite(t *testing.T) {
	o := base()
	for _, c := range []string{"qd=1..64+1", "workers=1..64+1"} {
		cy, err := ParseCycle(c)
		require.NoError(t, err)
		o.Cycles = append(o.Cycles, cy)
	}
	s, err := BuildSuite("business", o)
	require.Nil(t, s)
	require.EqualError(t, err, "--cycle qd,workers: suite business would run 24576 points (at most 4096): cycle fewer values")
	_, err = BuildSuite("peak-iops", o)
	require.ErrorContains(t, err, "suite peak-iops would run 4480 points (at most 4096)")
	o.Cycles = o.Cycles[:1]
	s, err = BuildSuite("business", o)
	require.NoError(t, err)
	require.Len(t, s.Points, 6*64)
}

func TestParseCycle(t *testing.T) {
	ok := []struct {
		in   string
		dim  string
		want []int64
	}{
		{"qd=1,2,4,8", "qd", []int64{1, 2, 4, 8}},
		{"qd=1..32*2", "qd", []int64{1, 2, 4, 8, 16, 32}},
		{"qd=1..8+1", "qd", []int64{1, 2, 3, 4, 5, 6, 7, 8}},
		{"qd=1..20*4", "qd", []int64{1, 4, 16}},
		{"QD = 16", "qd", []int64{16}},
		{"workers=2..8+3", "workers", []int64{2, 5, 8}},
		{"bs=512..4k*2", "bs", []int64{512, 1024, 2048, 4096}},
		{"bs=4k..16k+4k", "bs", []int64{4096, 8192, 12288, 16384}},
		{"bs=64k,4k", "bs", []int64{65536, 4096}},
	}
	for _, c := range ok {
		got, err := ParseCycle(c.in)
		require.NoError(t, err, c.in)
		require.Equal(t, c.dim, got.Dim, c.in)
		require.Equal(t, c.want, got.Values, c.in)
	}
	c, _ := ParseCycle("bs=4k..16k*2")
	require.Equal(t, "bs=4KiB,8KiB,16KiB", c.String())

	bad := map[string]string{
		"qd":           "want DIM=VALUES",
		"depth=1,2":    `unknown dimension "depth"`,
		"qd=1..32":     "needs a step",
		"qd=1..32*1":   "factor must be at least 2",
		"qd=8..1*2":    "ends (1) before it starts (8)",
		"qd=0,1":       "qd 0 must be between 1 and 1024",
		"qd=1,1":       "listed twice",
		"qd=1..1000+1": "more than 64 values",
		"qd=a,b":       "not a whole number",
		"workers=2000": "between 1 and 1024",
		"bs=100":       "between 512B and 64MiB",
		"bs=1000":      "not a multiple of 512",
		"bs=4k..64k+0": "step must be at least 1",
		"qd=1..4+x":    "not a whole number",
	}
	for in, want := range bad {
		_, err := ParseCycle(in)
		var fe *FieldError
		require.True(t, errors.As(err, &fe), in)
		require.Equal(t, "--cycle", fe.Field)
		require.Contains(t, err.Error(), want, in)
	}
}

func TestPatternLabel(t *testing.T) {
	require.Equal(t, "Random Read", PatternLabel(100, 100))
	require.Equal(t, "Sequential Write", PatternLabel(0, 0))
	require.Equal(t, "90% Read 75% Random", PatternLabel(90, 75))
	require.Equal(t, "4k", SizeSlug(4096))
	require.Equal(t, "512b", SizeSlug(512))
	require.Equal(t, "1m", SizeSlug(MiB))
}

// TestSuiteCarriesFlushes: --fdatasync and --sync given to a suite reach
// every point (a read point then simply never flushes).
func TestSuiteCarriesFlushes(t *testing.T) {
	o := base()
	o.Base.Fdatasync, o.Base.Sync = 1, SyncDsync
	s, err := BuildSuite("characterize", o)
	require.NoError(t, err)
	require.NotEmpty(t, s.Points)
	for _, p := range s.Points {
		for _, sp := range p.Specs {
			require.Equal(t, 1, sp.Fdatasync, p.Name)
			require.Equal(t, SyncDsync, sp.Sync, p.Name)
			require.NoError(t, sp.Validate(), p.Name)
		}
	}
}
