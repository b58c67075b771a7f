package exporter

import (
	"math"
	"math/rand/v2"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// nativeUpper is the upper bound of native bucket i, in seconds.
func nativeUpper(i int) float64 { return math.Exp2(float64(i) / (1 << nativeSchema)) }

// expand decodes native spans and deltas into index → count.
func expand(h *dto.Histogram) map[int]uint64 {
	out := map[int]uint64{}
	idx, count := 0, int64(0)
	d := 0
	for i, sp := range h.PositiveSpan {
		if i == 0 {
			idx = int(sp.GetOffset())
		} else {
			idx += int(sp.GetOffset())
		}
		for range sp.GetLength() {
			count += h.PositiveDelta[d]
			d++
			if count != 0 {
				out[idx] = uint64(count)
			}
			idx++
		}
	}
	return out
}

func TestNativeIndexMatchesSchema(t *testing.T) {
	for _, v := range []float64{1e-9, 3.3e-6, 1e-3, 0.75, 1, 1.0001, 2, 37.5} {
		i := nativeIndex(v)
		require.Greater(t, v, nativeUpper(i-1)*(1-1e-12), "v=%v index %d", v, i)
		require.LessOrEqual(t, v, nativeUpper(i)*(1+1e-12), "v=%v index %d", v, i)
	}
	require.Equal(t, 0, nativeIndex(1), "1s is the upper bound of bucket 0")
	require.Equal(t, 8, nativeIndex(2))
}

// Counts and sums are exact; every value lands in the native and classic
// bucket of its own bucket's largest value: never lower than the truth, and
// at most one of our buckets (1/128) higher.
func TestHistogramConversion(t *testing.T) {
	h := result.NewHistogram()
	rng := rand.New(rand.NewPCG(1, 2))
	var values []int64
	for range 20000 {
		// 20 µs .. 200 ms, log-uniform.
		v := int64(math.Exp(math.Log(20e3) + rng.Float64()*math.Log(1e4)))
		values = append(values, v)
		h.Record(v)
	}
	h.Record(0)
	values = append(values, 0)
	d := toDTO(h)
	require.EqualValues(t, len(values), d.GetSampleCount())
	require.InDelta(t, float64(h.Sum())/1e9, d.GetSampleSum(), 1e-12)
	require.EqualValues(t, 1, d.GetZeroCount())
	require.EqualValues(t, nativeSchema, d.GetSchema())

	native := expand(d)
	var total uint64
	for _, c := range native {
		total += c
	}
	require.EqualValues(t, len(values)-1, total, "every value but the zero is in a native bucket")

	// Each value's true native bucket is the reported one, or the one below
	// it when the value is within 1/128 of the boundary.
	want := map[int]uint64{}
	for _, v := range values[:len(values)-1] {
		want[nativeIndex(float64(v)/1e9)]++
	}
	var moved uint64
	for i, c := range want {
		if native[i] < c {
			moved += c - native[i]
		}
	}
	require.Less(t, float64(moved), 0.05*float64(total), "only values near a boundary move")
	lo, hi := 0, 0
	for i := range want {
		lo, hi = min(lo, i), max(hi, i)
	}
	require.Less(t, lo, -100, "20 µs is near 2^(-125/8) s")
	cumWant, cumGot := uint64(0), uint64(0)
	for i := lo - 1; i <= hi+1; i++ {
		cumWant += want[i]
		cumGot += native[i]
		require.LessOrEqual(t, cumGot, cumWant, "bucket %d: reported faster than measured", i)
	}

	// Classic buckets: cumulative, never more than the true count below a
	// bound, and no less than the true count below the bound shrunk by 1/128.
	require.Len(t, d.Bucket, len(classicBounds))
	for i, b := range d.Bucket {
		var exact, shrunk uint64
		for _, v := range values {
			s := float64(v) / 1e9
			if s <= b.GetUpperBound() {
				exact++
			}
			if s <= b.GetUpperBound()*(1-1.0/128) {
				shrunk++
			}
		}
		require.LessOrEqual(t, b.GetCumulativeCount(), exact, "le=%v", b.GetUpperBound())
		require.GreaterOrEqual(t, b.GetCumulativeCount(), shrunk, "le=%v", b.GetUpperBound())
		if i > 0 {
			require.GreaterOrEqual(t, b.GetCumulativeCount(), d.Bucket[i-1].GetCumulativeCount())
		}
	}
}

func TestEmptyHistogramIsStillNative(t *testing.T) {
	d := toDTO(result.NewHistogram())
	require.Zero(t, d.GetSampleCount())
	require.Len(t, d.PositiveSpan, 1)
	require.NotZero(t, d.GetZeroThreshold())
	require.Len(t, d.Bucket, len(classicBounds))
}

func TestSpanBuilderGaps(t *testing.T) {
	var sb spanBuilder
	sb.add(-3, 1)
	sb.add(-3, 1) // same bucket: summed
	sb.add(-1, 5) // gap of 1: zero-filled
	sb.add(10, 2) // gap of 10: new span
	spans, deltas := sb.finish()
	require.Len(t, spans, 2)
	require.EqualValues(t, -3, spans[0].GetOffset())
	require.EqualValues(t, 3, spans[0].GetLength())
	require.EqualValues(t, 10, spans[1].GetOffset())
	require.EqualValues(t, 1, spans[1].GetLength())
	require.Equal(t, []int64{2, -2, 5, -3}, deltas)
	require.Equal(t, map[int]uint64{-3: 2, -1: 5, 10: 2}, expand(&dto.Histogram{PositiveSpan: spans, PositiveDelta: deltas}))
}

func TestQuantileLabel(t *testing.T) {
	for p, q := range map[string]string{"50": "0.5", "90": "0.9", "99": "0.99", "99.9": "0.999", "99.99": "0.9999", "5": "0.05"} {
		require.Equal(t, q, quantileLabel(p), p)
	}
}
