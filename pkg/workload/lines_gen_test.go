package workload

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// within5Sigma asserts that k successes out of n match probability p within
// five binomial standard deviations (a fixed seed keeps the test stable;
// five sigma keeps it meaningful whatever the seed).
func within5Sigma(t *testing.T, k, n int, p float64, what string) {
	t.Helper()
	sigma := math.Sqrt(float64(n) * p * (1 - p))
	require.InDelta(t, p*float64(n), float64(k), 5*sigma+1, "%s: %d of %d, expected %.0f", what, k, n, p*float64(n))
}

func TestGeneratorFollowsEachLine(t *testing.T) {
	spec := lineSpec(
		Line{Bytes: 512, Share: 10, ReadPct: 100, RandomPct: 0},
		Line{Bytes: 4 * KiB, Share: 30, ReadPct: 67, RandomPct: 100, Align: 8 * KiB},
		Line{Bytes: 64 * KiB, Share: 60, ReadPct: 0, RandomPct: 50},
	)
	require.NoError(t, spec.Validate())
	region := Region{Start: 64 * KiB, Len: 16 * MiB}
	g, err := NewGenerator(&spec, region, nil, 42)
	require.NoError(t, err)
	const n = 300_000
	var ops, reads, random [3]int
	var op Op
	for i := 0; i < n; i++ {
		g.Next(&op)
		l := spec.Lines[op.Line]
		require.Equal(t, l.Bytes, op.Len)
		require.Zero(t, op.DelayNs)
		require.GreaterOrEqual(t, op.Offset, region.Start)
		require.LessOrEqual(t, op.Offset+op.Len, region.Start+region.Len)
		if op.Random {
			require.Zero(t, (op.Offset-region.Start)%lineAlign(l, 512), "line %d's random offsets keep its alignment", op.Line)
		}
		ops[op.Line]++
		if !op.Write {
			reads[op.Line]++
		}
		if op.Random {
			random[op.Line]++
		}
	}
	for i, l := range spec.Lines {
		within5Sigma(t, ops[i], n, float64(l.Share)/100, "share")
		within5Sigma(t, reads[i], ops[i], float64(l.ReadPct)/100, "reads")
		within5Sigma(t, random[i], ops[i], float64(l.RandomPct)/100, "random")
	}
}

func TestGeneratorBursts(t *testing.T) {
	spec := lineSpec(
		Line{Bytes: 4 * KiB, Share: 50, ReadPct: 100, RandomPct: 100, DelayMs: 7, Burst: 3},
		Line{Bytes: 8 * KiB, Share: 50, ReadPct: 0, RandomPct: 100},
	)
	g, err := NewGenerator(&spec, Region{Len: MiB}, nil, 5)
	require.NoError(t, err)
	var op Op
	var seq []Op
	for i := 0; i < 10_000; i++ {
		g.Next(&op)
		seq = append(seq, op)
	}
	// Line 0 comes in bursts of exactly 3 whose first I/O carries the
	// delay; line 1 (burst 1, no delay) never does.
	bursts := 0
	for i := 0; i < len(seq); {
		if seq[i].Line == 1 {
			require.Zero(t, seq[i].DelayNs)
			i++
			continue
		}
		require.Equal(t, int64(7e6), seq[i].DelayNs, "I/O %d starts a burst", i)
		for j := 1; j < 3 && i+j < len(seq); j++ {
			require.Equal(t, 0, seq[i+j].Line, "I/O %d is inside a burst", i+j)
			require.Zero(t, seq[i+j].DelayNs)
		}
		bursts++
		i += 3
	}
	// Iometer picks a line per burst: half of the bursts are line 0's.
	within5Sigma(t, bursts, bursts+countLine(seq, 1), 0.5, "bursts of line 0")
}

func countLine(ops []Op, line int) int {
	n := 0
	for _, o := range ops {
		if o.Line == line {
			n++
		}
	}
	return n
}

func TestSequentialFollowsThePreviousIO(t *testing.T) {
	// Iometer and fio: a sequential I/O starts where the worker's previous
	// I/O on the target ended, random or not.
	spec := lineSpec(
		Line{Bytes: 4 * KiB, Share: 50, ReadPct: 100, RandomPct: 100},
		Line{Bytes: 4 * KiB, Share: 50, ReadPct: 100, RandomPct: 0},
	)
	g, err := NewGenerator(&spec, Region{Start: 4 * KiB, Len: 4 * MiB}, nil, 9)
	require.NoError(t, err)
	var prev, op Op
	followed := 0
	for i := 0; i < 5000; i++ {
		g.Next(&op)
		if i > 0 && !op.Random {
			want := prev.Offset + prev.Len
			if want+op.Len > 4*KiB+4*MiB {
				want = 4 * KiB
			}
			require.Equal(t, want, op.Offset, "I/O %d", i)
			followed++
		}
		prev = op
	}
	require.Greater(t, followed, 1000)
}

func TestSequentialRoundsUpToTheLineAlignment(t *testing.T) {
	spec := lineSpec(
		Line{Bytes: 512, Share: 50, ReadPct: 100, RandomPct: 0},
		Line{Bytes: 4 * KiB, Share: 50, ReadPct: 100, RandomPct: 0, Align: 4 * KiB},
	)
	g, err := NewGenerator(&spec, Region{Len: MiB}, nil, 1)
	require.NoError(t, err)
	var op Op
	var end int64
	for i := 0; i < 5000; i++ {
		g.Next(&op)
		if op.Line == 1 {
			require.Zero(t, op.Offset%(4*KiB), "I/O %d", i)
		}
		if op.Offset != 0 { // not a wrap
			require.GreaterOrEqual(t, op.Offset, end, "sequential never goes back but to wrap")
			require.Less(t, op.Offset-end, 4*KiB, "it rounds up to the next boundary, no further")
		}
		end = op.Offset + op.Len
	}
}

func BenchmarkGeneratorNextLines(b *testing.B) {
	spec := lineSpec(
		Line{Bytes: 4 * KiB, Share: 70, ReadPct: 70, RandomPct: 50},
		Line{Bytes: 8 * KiB, Share: 20, ReadPct: 100, RandomPct: 100},
		Line{Bytes: 64 * KiB, Share: 10, ReadPct: 0, RandomPct: 0},
	)
	g, _ := NewGenerator(&spec, Region{Len: GiB}, nil, 1)
	var op Op
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		g.Next(&op)
	}
}
