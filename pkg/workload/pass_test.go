package workload

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPassEndsAtRegionEnd: under loops a sequential stream of a size mix
// reads its region once over to the end, the last transfers drawn among
// the sizes that fit (fio's get_next_buflen), then says its pass is done;
// NewPass starts it at the region's start again. Without loops it wraps
// as soon as a transfer does not fit, as before (Iometer's stream).
func TestPassEndsAtRegionEnd(t *testing.T) {
	bs, err := ParseBlockSizes("4k:50,64k:50")
	require.NoError(t, err)
	region := Region{Start: 4 * MiB, Len: 1000 * KiB} // not a multiple of 64 KiB
	for seed := uint64(1); seed <= 20; seed++ {
		spec := Spec{BlockSizes: bs, ReadPct: 100, RandomPct: 0, Loops: 1, SequentialStreams: StreamsDirection}.WithDefaults()
		g, err := NewGenerator(&spec, region, NewCursor(0, spec.Alignment()), seed)
		require.NoError(t, err)
		for pass := 0; pass < 2; pass++ {
			next := region.Start
			for !g.PassDone() {
				var op Op
				g.Next(&op)
				require.Equal(t, next, op.Offset, "seed %d pass %d: one stream, no wrap", seed, pass)
				next += op.Len
			}
			require.Equal(t, region.Start+region.Len, next, "seed %d pass %d: to the region's end", seed, pass)
			g.NewPass()
			require.False(t, g.PassDone())
		}
	}

	spec := Spec{BlockSizes: bs, ReadPct: 100, RandomPct: 0, Duration: 1}.WithDefaults()
	g, err := NewGenerator(&spec, region, NewCursor(0, spec.Alignment()), 1)
	require.NoError(t, err)
	wrapped := false
	var op Op
	for i := 0; i < 1000 && !wrapped; i++ {
		g.Next(&op)
		wrapped = op.Offset == region.Start && i > 0
	}
	require.True(t, wrapped)
	require.False(t, g.PassDone(), "no loops: the stream has no pass that ends")
}

// TestPassDoneRandomMap: a random stream with the map is done once every
// block is drawn; without the map it never is.
func TestPassDoneRandomMap(t *testing.T) {
	spec := Spec{ReadPct: 100, RandomPct: 100, RandomMap: true, Loops: 1, QueueDepth: 1}.WithDefaults()
	g, err := NewGenerator(&spec, Region{Len: 64 * KiB}, nil, 3)
	require.NoError(t, err)
	var op Op
	for i := 0; i < 16; i++ {
		require.False(t, g.PassDone())
		g.Next(&op)
	}
	require.True(t, g.PassDone())
	g.NewPass()
	require.False(t, g.PassDone())

	spec.RandomMap = false
	g, err = NewGenerator(&spec, Region{Len: 64 * KiB}, nil, 3)
	require.NoError(t, err)
	for i := 0; i < 64; i++ {
		g.Next(&op)
	}
	require.False(t, g.PassDone())
}
