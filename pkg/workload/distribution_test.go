package workload

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// drawn runs n random I/Os of spec over a region of blocks 4 KiB blocks
// and counts them per block.
func drawn(t *testing.T, spec Spec, blocks, n int) []int {
	t.Helper()
	spec = spec.WithDefaults()
	require.NoError(t, spec.Validate())
	g, err := NewGenerator(&spec, Region{Len: int64(blocks) * 4096}, nil, 42)
	require.NoError(t, err)
	counts := make([]int, blocks)
	var op Op
	for range n {
		g.Next(&op)
		require.Zero(t, op.Offset%4096)
		require.Less(t, op.Offset, int64(blocks)*4096)
		counts[op.Offset/4096]++
	}
	return counts
}

func distSpec(dist string) Spec {
	return Spec{ReadPct: 100, RandomPct: 100, QueueDepth: 1, Duration: 1, RandomDistribution: dist,
		BlockSizes: []BlockSize{{Bytes: 4096, Weight: 1}}}
}

// TestZipfIsFiosZipf: with the hot spot at the start (center 0) a rank
// lands where fio's hash puts it, (rank × fio's golden ratio) mod n, and
// the first ranks take the shares of fio's method (Gray et al.'s, as
// lib/zipf.c): 1/zeta(n), 0.5^theta/zeta(n).
func TestZipfIsFiosZipf(t *testing.T) {
	const n, draws = 4096, 200_000
	counts := drawn(t, distSpec("zipf:1.2:0"), n, draws)
	z := zeta(n, 1.2)
	for rank, want := range []float64{1 / z, math.Pow(0.5, 1.2) / z} {
		r := uint64(rank)
		b := r * goldenRatio64 % n
		p := float64(counts[b]) / draws
		sd := math.Sqrt(want * (1 - want) / draws)
		require.InDelta(t, want, p, 5*sd, "rank %d at block %d", rank, b)
	}
}

// TestDistributionsSpreadAsFio: pareto and normal keep their mass where
// fio's formulas put it, and zoned sends each zone its share.
func TestDistributionsSpreadAsFio(t *testing.T) {
	const n, draws = 1000, 100_000
	// Pareto: rank r takes the draws with (n-1)·u^(log h/log(1-h)) in
	// [r, r+1) (lib/zipf.c: pareto_next).
	p := drawn(t, distSpec("pareto:0.9:0"), n, draws)
	pow := math.Log(0.9) / math.Log(0.1)
	want0 := math.Pow(1/float64(n-1), 1/pow) // u below this gives rank 0
	require.InDelta(t, want0, float64(p[0])/draws, 5*math.Sqrt(want0/draws))
	// Normal: ranks near the middle are the likely ones; rank r lands at
	// (r × golden ratio) mod n, the middle rank's block the busiest.
	g := drawn(t, distSpec("normal:0:0.5"), n, draws)
	hash := func(r uint64) uint64 { return r * goldenRatio64 % n }
	mid, far := hash(n/2), hash(10)
	require.Greater(t, g[mid], 10*max(g[far], 1), "the middle rank's block %d against rank 10's %d", mid, far)
	// Zoned: 60% of I/Os in the first 10% of blocks, 30% in the next
	// 20%, 10% in the rest.
	zc := drawn(t, distSpec("zoned:60/10:30/20:10/70"), n, draws)
	share := func(from, to int) float64 {
		s := 0
		for _, c := range zc[from:to] {
			s += c
		}
		return float64(s) / draws
	}
	require.InDelta(t, 0.6, share(0, 100), 0.01)
	require.InDelta(t, 0.3, share(100, 300), 0.01)
	require.InDelta(t, 0.1, share(300, n), 0.01)
}

// TestLFSRVisitsEveryBlockOncePerPass: fio's random_generator=lfsr, with
// no map: each pass touches every block once, and the next pass is the
// same order.
func TestLFSRVisitsEveryBlockOncePerPass(t *testing.T) {
	for _, blocks := range []int{1, 2, 3, 1000, 4096, 4097} {
		spec := distSpec("")
		spec.RandomGenerator = GeneratorLFSR
		spec = spec.WithDefaults()
		require.NoError(t, spec.Validate())
		g, err := NewGenerator(&spec, Region{Len: int64(blocks) * 4096}, nil, 7)
		require.NoError(t, err)
		var first []int64
		for pass := range 2 {
			seen := map[int64]bool{}
			var op Op
			for i := range blocks {
				g.Next(&op)
				require.False(t, seen[op.Offset], "blocks=%d pass %d: %d twice", blocks, pass, op.Offset)
				seen[op.Offset] = true
				if pass == 0 {
					first = append(first, op.Offset)
				} else {
					require.Equal(t, first[i], op.Offset, "the same order each pass, as fio's lfsr_reset")
				}
			}
			require.Len(t, seen, blocks)
		}
	}
}

// TestDistributionRefusals: what fio refuses or ioprobe cannot run
// with fio's meaning.
func TestDistributionRefusals(t *testing.T) {
	requireFieldErrors(t, func() Spec { return distSpec("zipf:1.2").WithDefaults() }, []fieldCase{
		{"theta 1", func(s *Spec) { s.RandomDistribution = "zipf:1" }, "not 1"},
		{"pareto out of range", func(s *Spec) { s.RandomDistribution = "pareto:1" }, "between 0 and 1"},
		{"center", func(s *Spec) { s.RandomDistribution = "normal:5:2" }, "center"},
		{"zones short", func(s *Spec) { s.RandomDistribution = "zoned:50/10:40/90" }, "add up to 90"},
		{"with the map", func(s *Spec) { s.RandomMap = true }, "no random map"},
		{"lfsr and zones", func(s *Spec) {
			s.RandomDistribution, s.RandomGenerator = "zoned:100/100", GeneratorLFSR
		}, "whole region"},
		{"blockalign", func(s *Spec) { s.Align = 8192 }, "aligned to the smallest"},
		{"zones past the region", func(s *Spec) {
			s.RandomDistribution, s.RegionBytes = "zoned_abs:50/1048576:50/1048576", 1<<20
		}, "past the region"},
	})
	for _, s := range []string{"zipf:1.2", "zipf:0.8:0.25", "pareto:0.2", "normal:0", "zoned:100/100", "zoned_abs:60/4096:40/8192"} {
		d, err := ParseDistribution(s)
		require.NoError(t, err, s)
		require.Equal(t, s, d.String())
	}
}

// BenchmarkGeneratorNextDistribution: fio's distributions on the hot path,
// allocation free (zeta(n) is computed before the timer).
func BenchmarkGeneratorNextDistribution(b *testing.B) {
	for _, c := range []struct{ dist, gen string }{
		{"", ""}, {"zipf:1.2", ""}, {"pareto:0.9", ""}, {"normal:5", ""}, {"zoned:60/10:30/20:10/70", ""}, {"", GeneratorLFSR},
	} {
		name := c.dist + c.gen
		if name == "" {
			name = "uniform"
		}
		b.Run(name, func(b *testing.B) {
			spec := distSpec(c.dist)
			spec.RandomGenerator = c.gen
			spec = spec.WithDefaults()
			benchGeneratorNext(b, &spec)
		})
	}
}

// TestZonesInBlocksOfBlockalign: fio's zones count blocks of blockalign
// (last_block), so offsets are its multiples, each zone its share.
func TestZonesInBlocksOfBlockalign(t *testing.T) {
	spec := distSpec("zoned:50/5:50/95")
	spec.BlockSizes = []BlockSize{{Bytes: 512, Weight: 1}, {Bytes: 4096, Weight: 1}}
	spec.Align = 8192
	spec = spec.WithDefaults()
	require.NoError(t, spec.Validate())
	g, err := NewGenerator(&spec, Region{Len: 1000 * 8192}, nil, 3)
	require.NoError(t, err)
	var op Op
	first := 0
	for range 20000 {
		g.Next(&op)
		require.Zero(t, op.Offset%8192)
		if op.Offset < 50*8192 {
			first++
		}
	}
	require.InDelta(t, 0.5, float64(first)/20000, 0.02, "half the I/Os in the first 5%% of the blocks")
}
