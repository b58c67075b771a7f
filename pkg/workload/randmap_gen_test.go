package workload

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// passes runs g until it has issued the given number of passes over a
// region of blocks blocks of block bytes, and returns, per pass, how often
// each block was covered and the lengths issued. A pass ends when every
// block was covered (the map's meaning), so a block covered twice within
// a pass, or a pass that covers more than the region, fails the caller's
// checks.
func passes(t *testing.T, g *Generator, blocks, block int64, n int) ([][]int, [][]int64) {
	t.Helper()
	var covered [][]int
	var lens [][]int64
	var op Op
	for p := 0; p < n; p++ {
		cov := make([]int, blocks)
		var ls []int64
		var done int64
		for done < blocks*block {
			g.Next(&op)
			require.True(t, op.Random)
			require.Zero(t, op.Offset%block)
			require.LessOrEqual(t, op.Offset+op.Len, blocks*block)
			for b := op.Offset / block; b < (op.Offset+op.Len)/block; b++ {
				cov[b]++
			}
			ls = append(ls, op.Len)
			done += op.Len
		}
		covered, lens = append(covered, cov), append(lens, ls)
	}
	return covered, lens
}

// TestRandomMapOneSize: with fio's random map every block is read once
// per pass, in a random order, pass after pass.
func TestRandomMapOneSize(t *testing.T) {
	spec := Spec{ReadPct: 100, RandomPct: 100, Duration: 1, RandomMap: true}.WithDefaults()
	spec.QueueDepth = 1
	g, err := NewGenerator(&spec, Region{Len: 1000 * 4096}, nil, 5)
	require.NoError(t, err)
	covered, lens := passes(t, g, 1000, 4096, 3)
	for p := range covered {
		for b, c := range covered[p] {
			require.Equal(t, 1, c, "pass %d: block %d", p, b)
		}
		require.Len(t, lens[p], 1000)
	}
}

// TestRandomMapShortensAMix: with a size mix the map shortens an I/O to
// the free blocks from its start (mark_random_map), so each pass still
// covers every block exactly once, some 16 KiB I/Os run as 4, 8 or 12 KiB,
// and the mean transfer is below the mix's 10 KiB (fio 3.33 measured
// 8056 B for this mix: docs/fio.md).
func TestRandomMapShortensAMix(t *testing.T) {
	spec := Spec{BlockSizes: []BlockSize{{Bytes: 4096, Weight: 50}, {Bytes: 16384, Weight: 50}}, ReadPct: 70, RandomPct: 100,
		Duration: 1, RandomMap: true, QueueDepth: 1}.WithDefaults()
	const blocks = 4096
	g, err := NewGenerator(&spec, Region{Len: blocks * 4096}, nil, 11)
	require.NoError(t, err)
	covered, lens := passes(t, g, blocks, 4096, 4)
	sizes := map[int64]int{}
	var n, sum int64
	for p := range covered {
		for b, c := range covered[p] {
			require.Equal(t, 1, c, "pass %d: block %d", p, b)
		}
		for _, l := range lens[p] {
			sizes[l]++
			n++
			sum += l
		}
	}
	for l := range sizes {
		require.Contains(t, []int64{4096, 8192, 12288, 16384}, l)
	}
	require.Positive(t, sizes[8192]+sizes[12288], "some I/Os were shortened")
	mean := float64(sum) / float64(n)
	require.Less(t, mean, 10240.0*0.9)
	require.Greater(t, mean, 4096.0)
}

// TestRandomMapNewPass: the I/O that starts a new pass is flagged for a
// buffered run (fio drops the cache then: invalidate=1), and not when the
// cache is kept or the run is direct.
func TestRandomMapNewPass(t *testing.T) {
	for _, c := range []struct {
		buffered, keep, want bool
	}{{true, false, true}, {true, true, false}, {false, false, false}} {
		spec := Spec{ReadPct: 100, RandomPct: 100, Duration: 1, RandomMap: true, QueueDepth: 1, Buffered: c.buffered, KeepCache: c.keep}.WithDefaults()
		g, err := NewGenerator(&spec, Region{Len: 64 * 4096}, nil, 5)
		require.NoError(t, err)
		var op Op
		flagged := 0
		for i := 0; i < 64*3; i++ {
			g.Next(&op)
			if op.DropCache {
				flagged++
				require.Zero(t, i%64, "only the first I/O of a pass")
			}
		}
		want := 0
		if c.want {
			want = 2
		}
		require.Equal(t, want, flagged, "%+v", c)
	}
}

// TestSequentialWrapDropsCache: a buffered sequential stream flags the
// I/O that wraps to the region's start.
func TestSequentialWrapDropsCache(t *testing.T) {
	spec := Spec{ReadPct: 100, RandomPct: 0, Duration: 1, Buffered: true, QueueDepth: 1}.WithDefaults()
	g, err := NewGenerator(&spec, Region{Len: 8 * 4096}, nil, 5)
	require.NoError(t, err)
	var op Op
	for i := 0; i < 24; i++ {
		g.Next(&op)
		require.Equal(t, i > 0 && i%8 == 0, op.DropCache, "I/O %d at %d", i, op.Offset)
	}
}

// TestRandomMapNeedsOneStream: the map is one worker's per target; the
// sync engine's several streams per target cannot share it.
func TestRandomMapNeedsOneStream(t *testing.T) {
	spec := Spec{ReadPct: 100, RandomPct: 100, Duration: 1, RandomMap: true, QueueDepth: 4, Engine: EngineSync}.WithDefaults()
	require.ErrorContains(t, spec.Validate(), "random_map")
	spec.Engine = EngineURing
	require.NoError(t, spec.Validate())
}

func BenchmarkGeneratorNextRandomMap(b *testing.B) {
	for _, c := range []struct {
		name string
		bs   []BlockSize
		rmap bool
	}{
		{"4k", []BlockSize{{Bytes: 4096, Weight: 1}}, false},
		{"4k-map", []BlockSize{{Bytes: 4096, Weight: 1}}, true},
		{"mix", []BlockSize{{Bytes: 4096, Weight: 50}, {Bytes: 16384, Weight: 50}}, false},
		{"mix-map", []BlockSize{{Bytes: 4096, Weight: 50}, {Bytes: 16384, Weight: 50}}, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			spec := Spec{BlockSizes: c.bs, ReadPct: 70, RandomPct: 100, Duration: 1, RandomMap: c.rmap, QueueDepth: 1}.WithDefaults()
			benchGeneratorNext(b, &spec)
		})
	}
}

// TestLoopsStartOver: a budget's loops start as fio's do, with an empty
// map (clear_io_state reopens the files): the 6 I/Os of each loop over 8
// blocks are 6 different blocks, for every seed (a map carried over would
// fill after 8 and repeat blocks within the second loop); a buffered run
// flags each loop's first I/O to drop the cache.
func TestLoopsStartOver(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		spec := Spec{ReadPct: 100, RandomPct: 100, Duration: 1, RandomMap: true, QueueDepth: 1, Loops: 3, IOBytes: 6 * 4096, Buffered: true}.WithDefaults()
		g, err := NewGenerator(&spec, Region{Len: 8 * 4096}, nil, seed)
		require.NoError(t, err)
		var op Op
		for loop := 0; loop < 3; loop++ {
			seen := map[int64]bool{}
			for i := 0; i < 6; i++ {
				g.Next(&op)
				require.False(t, seen[op.Offset], "seed %d loop %d: block %d twice", seed, loop, op.Offset/4096)
				seen[op.Offset] = true
				require.Equal(t, loop > 0 && i == 0, op.DropCache, "seed %d loop %d I/O %d", seed, loop, i)
			}
		}
	}
}
