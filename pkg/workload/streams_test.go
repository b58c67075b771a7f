package workload

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// followsPerDirection checks fio's rule on a stream of ops: each
// sequential I/O starts where the previous I/O of its direction ended
// (random or not), or at the region's start when that transfer would pass
// its end; it returns how many sequential reads and writes it checked and
// how many of them did NOT follow the previous I/O of any direction.
func followsPerDirection(t *testing.T, g *Generator, region Region, n int) (reads, writes, crossed int) {
	t.Helper()
	end := [2]int64{region.Start, region.Start} // as NewCursor(0, …): both streams start at the region's start
	var prevEnd int64 = -1
	var op Op
	for i := 0; i < n; i++ {
		g.Next(&op)
		d := 0
		if op.Write {
			d = 1
		}
		if !op.Random {
			want := end[d]
			if want+op.Len > region.Start+region.Len {
				want = region.Start
			}
			require.Equal(t, want, op.Offset, "I/O %d (write %v) must follow the previous I/O of its direction", i, op.Write)
			if op.Offset != prevEnd {
				crossed++
			}
			if op.Write {
				writes++
			} else {
				reads++
			}
		}
		end[d] = op.Offset + op.Len
		prevEnd = op.Offset + op.Len
	}
	return reads, writes, crossed
}

func TestSequentialStreamPerDirection(t *testing.T) {
	region := Region{Start: 8 * KiB, Len: 256 * KiB} // small: the streams wrap many times
	for _, c := range []struct {
		name string
		spec Spec
	}{
		{"rw 70% read", Spec{ReadPct: 70, RandomPct: 0}},
		{"randrw 40% random", Spec{ReadPct: 50, RandomPct: 40}},
		{"size mix", Spec{BlockSizes: []BlockSize{{4 * KiB, 1}, {16 * KiB, 1}}, ReadPct: 30, RandomPct: 0}},
		{"lines", Spec{Lines: []Line{
			{Bytes: 4 * KiB, Share: 60, ReadPct: 100, RandomPct: 0},
			{Bytes: 8 * KiB, Share: 40, ReadPct: 0, RandomPct: 50},
		}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := c.spec
			spec.Duration, spec.SequentialStreams = 1, StreamsDirection
			spec = spec.WithDefaults()
			require.NoError(t, spec.Validate())
			g, err := NewGenerator(&spec, region, NewCursor(0, spec.Alignment()), 5)
			require.NoError(t, err)
			reads, writes, crossed := followsPerDirection(t, g, region, 20_000)
			require.Greater(t, reads, 1000)
			require.Greater(t, writes, 1000)
			// Two interleaved streams: many sequential I/Os do not follow
			// the previous I/O, which Iometer's one stream would.
			require.Greater(t, crossed, 1000)
		})
	}
}

func TestSequentialOneStreamIsNotPerDirection(t *testing.T) {
	// The same mix in Iometer's mode fails the per-direction invariant: the
	// check above can tell the two apart.
	spec := Spec{ReadPct: 70, RandomPct: 0, Duration: 1}.WithDefaults()
	region := Region{Len: 256 * KiB}
	g, err := NewGenerator(&spec, region, nil, 5)
	require.NoError(t, err)
	var prev, op Op
	g.Next(&prev)
	for i := 0; i < 1000; i++ {
		g.Next(&op)
		want := prev.Offset + prev.Len
		if want+op.Len > region.Len {
			want = 0
		}
		require.Equal(t, want, op.Offset, "one stream: every I/O follows the previous one")
		prev = op
	}
}

func TestSequentialStreamsValidate(t *testing.T) {
	spec := Spec{ReadPct: 50, Duration: 1, SequentialStreams: "ddir"}.WithDefaults()
	err := spec.Validate()
	require.EqualError(t, err, `sequential_streams "ddir": must be empty (one stream per worker, Iometer's) or "direction" (one per direction, fio's)`)
}

func BenchmarkGeneratorNextPerDirection(b *testing.B) {
	bs, _ := ParseBlockSizes("4k:70,8k:20,64k:10")
	spec := Spec{BlockSizes: bs, ReadPct: 70, RandomPct: 50, Duration: 1, SequentialStreams: StreamsDirection}.WithDefaults()
	g, _ := NewGenerator(&spec, Region{Len: GiB}, nil, 1)
	var op Op
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		g.Next(&op)
	}
}
