package workload

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGeneratorMixAndBounds(t *testing.T) {
	bs, _ := ParseBlockSizes("4k:70,64k:30")
	spec := Spec{BlockSizes: bs, ReadPct: 67, RandomPct: 75, Duration: 1}.WithDefaults()
	region := Region{Start: 8 * MiB, Len: 64 * MiB}
	g, err := NewGenerator(&spec, region, NewCursor(0, 4096), 99)
	require.NoError(t, err)
	const n = 200_000
	var op Op
	reads, random, small := 0, 0, 0
	for i := 0; i < n; i++ {
		g.Next(&op)
		require.GreaterOrEqual(t, op.Offset, region.Start)
		require.LessOrEqual(t, op.Offset+op.Len, region.Start+region.Len)
		require.Zero(t, (op.Offset-region.Start)%4096)
		if !op.Write {
			reads++
		}
		if op.Random {
			random++
		}
		if op.Len == 4096 {
			small++
		}
	}
	require.InDelta(t, 0.67, float64(reads)/n, 0.01)
	require.InDelta(t, 0.75, float64(random)/n, 0.01)
	require.InDelta(t, 0.70, float64(small)/n, 0.01)
}

func TestGeneratorRandomCoversRegion(t *testing.T) {
	spec := Spec{ReadPct: 100, RandomPct: 100, Duration: 1}.WithDefaults()
	region := Region{Len: 64 * 4096}
	g, err := NewGenerator(&spec, region, nil, 3)
	require.NoError(t, err)
	seen := map[int64]int{}
	var op Op
	for i := 0; i < 64*200; i++ {
		g.Next(&op)
		seen[op.Offset]++
	}
	require.Len(t, seen, 64, "every slot, first and last included, is reachable")
	for off, c := range seen {
		require.InDelta(t, 200, c, 80, "offset %d drawn %d times", off, c)
	}
}

func TestCursorSharedIsSequential(t *testing.T) {
	spec := Spec{ReadPct: 100, RandomPct: 0, Duration: 1}.WithDefaults()
	region := Region{Len: 1 * MiB}
	cur := NewCursor(4096*3+100, 4096)
	var mu sync.Mutex
	var offs []int64
	var wg sync.WaitGroup
	for l := 0; l < 8; l++ {
		g, err := NewGenerator(&spec, region, cur, uint64(l))
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var op Op
			for i := 0; i < 1000; i++ {
				g.Next(&op)
				mu.Lock()
				offs = append(offs, op.Offset)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	count := map[int64]int{}
	for _, o := range offs {
		count[o]++
	}
	// 8000 I/Os over a 256-block region starting at block 3: every block
	// is read 31 or 32 times, never skipped, never doubled.
	for b := int64(0); b < 256; b++ {
		c := count[b*4096]
		require.True(t, c == 31 || c == 32, "block %d read %d times", b, c)
	}
}

func BenchmarkGeneratorNext(b *testing.B) {
	bs, _ := ParseBlockSizes("4k:70,8k:20,64k:10")
	spec := Spec{BlockSizes: bs, ReadPct: 70, RandomPct: 50, Duration: 1}.WithDefaults()
	g, _ := NewGenerator(&spec, Region{Len: GiB}, nil, 1)
	var op Op
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		g.Next(&op)
	}
}
