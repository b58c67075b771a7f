package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// Two buckets raised by 2^63 each sum back to the count: refused as read.
func TestWrappedBucketsRefused(t *testing.T) {
	h := NewHistogram()
	for _, v := range []int64{1000, 2000, 50_000} {
		h.Record(v)
	}
	b, err := json.Marshal(h)
	require.NoError(t, err)
	var j histogramJSON
	require.NoError(t, json.Unmarshal(b, &j))
	j.Buckets[0][1] += 1 << 63
	j.Buckets[len(j.Buckets)-1][1] += 1 << 63
	b, err = json.Marshal(j)
	require.NoError(t, err)
	var back Histogram
	require.EqualError(t, json.Unmarshal(b, &back), "histogram buckets hold more than 2^64 values (a count wrapped, or is not one)")

	j.Buckets = append(j.Buckets, j.Buckets[0])
	j.Buckets[0][1], j.Buckets[len(j.Buckets)-1][1] = 1, 1
	b, err = json.Marshal(j)
	require.NoError(t, err)
	require.ErrorContains(t, json.Unmarshal(b, &back), "is given twice")
}

// Each result adds up; their sum does not: the merge is refused naming
// the result at which it wraps, before anything is merged.
func TestMergeRefusesSumsThatWrap(t *testing.T) {
	a := run("host-a", 8, latencies(100, 80_000, 100_000, 1), nil, 10, 12)
	b := run("host-b", 8, latencies(100, 80_000, 100_000, 2), nil, 10, 12)
	b.Summary.ReadBytes = math.MaxUint64 - 10
	_, err := Merge(a, b)
	var se *MergeSumError
	require.True(t, errors.As(err, &se), "%v", err)
	require.Same(t, b, se.Result)
	require.Equal(t, "summary.read_bytes", se.Err.Path)

	for _, bad := range []float64{-1, math.Inf(1), math.NaN()} {
		c := run("host-c", 8, latencies(100, 80_000, 100_000, 3), nil, 10, 12)
		c.Summary.ElapsedSeconds = bad
		_, err = Merge(a, c)
		require.True(t, errors.As(err, &se), "%v", err)
		require.Same(t, c, se.Result)
		require.Equal(t, "summary.elapsed_seconds", se.Err.Path, fmt.Sprint(bad))
	}
}

// A result whose op counts are not its histograms' is refused as read.
func TestResultThatDoesNotAddUpRefused(t *testing.T) {
	r := run("host-a", 8, latencies(100, 80_000, 100_000, 1), nil, 10, 12)
	r.Summary.ReadOps++
	b, err := json.Marshal(r)
	require.NoError(t, err)
	var back Result
	require.EqualError(t, json.Unmarshal(b, &back), "the result does not add up: summary.read_ops: is 101 but the read histogram holds 100")

	r.Summary.ReadOps--
	r.Intervals = []Interval{{TSeconds: 1, IOPS: -5}}
	b, err = json.Marshal(r)
	require.NoError(t, err)
	require.EqualError(t, json.Unmarshal(b, &back), "the result does not add up: intervals[0].iops: is -5: a time, rate or count is a finite number, not negative")
}
