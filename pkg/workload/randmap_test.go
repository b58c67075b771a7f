package workload

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// naiveMap is the random map's meaning written out bit by bit.
type naiveMap []bool

func (n naiveMap) setRun(b, k uint64) uint64 {
	var done uint64
	for ; done < k && b+done < uint64(len(n)) && !n[b+done]; done++ {
		n[b+done] = true
	}
	return done
}

func (n naiveMap) nextFree(b uint64) (uint64, bool) {
	for i := b + 1; i < uint64(len(n)); i++ {
		if !n[i] {
			return i, true
		}
	}
	for i := uint64(0); i < uint64(len(n)); i++ {
		if !n[i] {
			return i, true
		}
	}
	return 0, false
}

// TestBlockMapAgainstNaive: every operation of the map, on sizes around
// the word and level boundaries, agrees with the bit-by-bit meaning until
// the map is full, and a reset empties it.
func TestBlockMapAgainstNaive(t *testing.T) {
	for _, n := range []uint64{1, 2, 63, 64, 65, 127, 4095, 4096, 4097, 64*64*64 + 3} {
		m, ref := newBlockMap(n), make(naiveMap, n)
		rng := rand.New(rand.NewPCG(n, 7))
		for pass := 0; pass < 2; pass++ {
			for steps := 0; !m.full(); steps++ {
				require.Less(t, steps, int(4*n)+100, "n=%d: the map never fills", n)
				b := rng.Uint64N(n)
				require.Equal(t, ref[b], m.isSet(b), "n=%d isSet(%d)", n, b)
				if m.isSet(b) {
					f, ok := m.nextFree(b)
					rf, rok := ref.nextFree(b)
					require.Equal(t, rok, ok)
					require.Equal(t, rf, f, "n=%d nextFree(%d)", n, b)
					b = f
				}
				k := 1 + rng.Uint64N(min(n, 200))
				require.Equal(t, ref.setRun(b, k), m.setRun(b, k), "n=%d setRun(%d, %d)", n, b, k)
			}
			for i := range ref {
				require.True(t, ref[i], "n=%d: full, yet block %d is free", n, i)
			}
			_, ok := m.nextFree(0)
			require.False(t, ok)
			m.reset()
			clear(ref)
			require.False(t, m.full())
			require.Zero(t, m.setRun(n, 1), "past the end")
		}
	}
}

// TestBlockMapSetRunStops: a run stops at the first block already set,
// within a word and across words (axmap_set_nr).
func TestBlockMapSetRunStops(t *testing.T) {
	m := newBlockMap(200)
	require.Equal(t, uint64(1), m.setRun(70, 1))
	require.Equal(t, uint64(10), m.setRun(60, 16), "stops before block 70")
	require.Zero(t, m.setRun(70, 4), "block 70 is set")
	require.Equal(t, uint64(129), m.setRun(71, 1000), "to the end of the map")
	f, ok := m.nextFree(199)
	require.True(t, ok)
	require.Equal(t, uint64(0), f, "wraps to the start")
	f, ok = m.nextFree(59)
	require.True(t, ok)
	require.Equal(t, uint64(0), f, "nothing free after 59: wraps")
}
