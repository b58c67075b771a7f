package result

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// logUniform draws n latencies spread evenly over six decades, 100 ns to 100 ms.
func logUniform(r *rand.Rand, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(math.Pow(10, 2+6*r.Float64()))
	}
	return out
}

func exactQuantile(sorted []int64, q float64) float64 {
	rank := int(math.Ceil(q * float64(len(sorted))))
	if rank < 1 {
		rank = 1
	}
	return float64(sorted[rank-1])
}

func TestQuantilesAgainstExactSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vals := logUniform(r, 1_000_000)
	h := NewHistogram()
	for _, v := range vals {
		h.Record(v)
	}
	sorted := append([]int64(nil), vals...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	for _, q := range []float64{0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 0.99999} {
		want := exactQuantile(sorted, q)
		got := h.Quantile(q)
		require.InEpsilon(t, want, got, 0.01, "q=%v", q)
	}
	require.Equal(t, uint64(sorted[0]), h.Min())
	require.Equal(t, uint64(sorted[len(sorted)-1]), h.Max())
	var sum float64
	for _, v := range vals {
		sum += float64(v)
	}
	require.InEpsilon(t, sum/float64(len(vals)), h.Mean(), 1e-12)
	var ss float64
	mean := sum / float64(len(vals))
	for _, v := range vals {
		ss += (float64(v) - mean) * (float64(v) - mean)
	}
	require.InEpsilon(t, math.Sqrt(ss/float64(len(vals))), h.Stddev(), 0.01)
}

func TestRelativeErrorBoundEverywhere(t *testing.T) {
	// Every value from 100 ns to 60 s is reported within 1% by its bucket.
	for v := uint64(100); v <= 60e9; v = v*1001/1000 + 1 {
		i := bucketIndex(v)
		lo, hi := BucketBounds(i)
		require.True(t, lo <= v && v < hi, "value %d not in bucket %d [%d,%d)", v, i, lo, hi)
		require.Less(t, math.Abs(bucketValue(i)-float64(v))/float64(v), 0.01, "value %d", v)
	}
}

func TestBucketsAreContiguous(t *testing.T) {
	_, prevHi := BucketBounds(0)
	for i := 1; i < NumBuckets; i++ {
		lo, hi := BucketBounds(i)
		require.Equal(t, prevHi, lo, "gap before bucket %d", i)
		require.Equal(t, i, bucketIndex(lo))
		require.Equal(t, i, bucketIndex(hi-1))
		prevHi = hi
	}
	require.Equal(t, NumBuckets-1, bucketIndex(math.MaxUint64))
}

func TestMergeEqualsOneHistogramOfBoth(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	a, b, both := NewHistogram(), NewHistogram(), NewHistogram()
	for _, v := range logUniform(r, 300_000) {
		a.Record(v)
		both.Record(v)
	}
	for _, v := range logUniform(r, 200_000) {
		v *= 3 // a different distribution
		b.Record(v)
		both.Record(v)
	}
	merged := NewHistogram()
	merged.Merge(a)
	merged.Merge(b)
	require.Equal(t, *both, *merged)
	for _, q := range []float64{0.5, 0.99, 0.9999} {
		require.Equal(t, both.Quantile(q), merged.Quantile(q))
	}
}

func TestJSONRoundTripIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	h := NewHistogram()
	for _, v := range logUniform(r, 50_000) {
		h.Record(v)
	}
	data, err := json.Marshal(h)
	require.NoError(t, err)
	var back Histogram
	require.NoError(t, json.Unmarshal(data, &back))
	require.Equal(t, *h, back)

	for _, bad := range []string{
		`{"layout":"hdr","count":0,"buckets":[]}`,
		`{"layout":"log-linear-ns-128","count":5,"min_ns":1,"max_ns":1,"buckets":[[1,4]]}`,
		`{"layout":"log-linear-ns-128","count":1,"min_ns":1,"max_ns":1,"buckets":[[99999,1]]}`,
		`{"layout":"log-linear-ns-128","count":1,"min_ns":1,"max_ns":1,"buckets":[[7,1]]}`,
	} {
		var x Histogram
		require.Error(t, json.Unmarshal([]byte(bad), &x), bad)
	}
}

func TestSnapshotAndSub(t *testing.T) {
	h := NewHistogram()
	for i := int64(1); i <= 1000; i++ {
		h.RecordAtomic(i * 1000)
	}
	var s1 Histogram
	h.SnapshotInto(&s1)
	require.Equal(t, uint64(1000), s1.Count())
	for i := int64(1); i <= 500; i++ {
		h.RecordAtomic(5_000_000 + i)
	}
	var s2 Histogram
	h.SnapshotInto(&s2)
	s2.Sub(&s1)
	require.Equal(t, uint64(500), s2.Count())
	require.InEpsilon(t, 5_000_250.5, s2.Mean(), 1e-12)
	require.InEpsilon(t, 5_000_250, s2.Quantile(0.5), 0.01)
	lo, _ := BucketBounds(bucketIndex(5_000_001))
	require.Equal(t, lo, s2.Min())
}

func TestEmpty(t *testing.T) {
	h := NewHistogram()
	require.Zero(t, h.Quantile(0.99))
	require.Zero(t, h.Mean())
	require.Zero(t, h.Stddev())
	l := LatencyOf(h)
	require.Len(t, l.Percentiles, len(PercentileKeys))
}

func BenchmarkRecordAtomic(b *testing.B) {
	h := NewHistogram()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h.RecordAtomic(int64(i&0xfffff) + 1000)
	}
}
