package result

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"
)

// Histogram layout. Values are nanoseconds. Below 2^(subBits+1) every
// nanosecond has its own bucket; above, each power of two is split into
// 2^subBits linear sub-buckets, so a bucket is never wider than 1/128 of its
// lower bound and the midpoint is within 0.4% of any value in it. Values from
// 0 to 2^40 ns (18 minutes) are resolved; larger ones land in the last
// bucket (the exact maximum is kept separately).
const (
	subBits      = 7
	subCount     = 1 << subBits // 128 sub-buckets per power of two
	linearLimit  = 2 * subCount // values below are exact
	maxExp       = 40           // 2^40 ns
	NumBuckets   = linearLimit + (maxExp-subBits-1)*subCount
	HistogramTag = "log-linear-ns-128" // names the layout in JSON
)

// bucketIndex maps a value to its bucket.
func bucketIndex(v uint64) int {
	if v < linearLimit {
		return int(v)
	}
	e := bits.Len64(v) - 1 // v in [2^e, 2^(e+1))
	if e >= maxExp {
		return NumBuckets - 1
	}
	shift := e - subBits
	sub := int(v>>uint(shift)) & (subCount - 1)
	return linearLimit + (e-subBits-1)*subCount + sub
}

// BucketIndex is the bucket of a value in ns (a kernel program that
// records into this layout computes the same; see internal/devlat).
func BucketIndex(v uint64) int { return bucketIndex(v) }

// HistogramFromCounts builds a histogram from its bucket counts (counts[i]
// is bucket i's; at most NumBuckets) and the sum, min and max recorded
// beside them, as a kernel program records them (internal/devlat). The
// count is the buckets' total. Read while the recorder runs, min, max and
// sum may be a value ahead of or behind the buckets: min and max are then
// moved into the first and last non-empty buckets, so the histogram is
// always consistent.
func HistogramFromCounts(counts []uint64, sum, minNs, maxNs uint64) *Histogram {
	h := NewHistogram()
	first, last := -1, -1
	for i, c := range counts[:min(len(counts), NumBuckets)] {
		if c == 0 {
			continue
		}
		h.buckets[i] = c
		h.count += c
		if first < 0 {
			first = i
		}
		last = i
	}
	if h.count == 0 {
		return h
	}
	h.sum, h.min, h.max = sum, minNs, maxNs
	if bucketIndex(h.min) != first {
		h.min, _ = BucketBounds(first)
	}
	if bucketIndex(h.max) != last {
		_, top := BucketBounds(last)
		h.max = top - 1
	}
	return h
}

// BucketBounds returns the inclusive lower and exclusive upper bound, in ns,
// of bucket i.
func BucketBounds(i int) (lo, hi uint64) {
	if i < linearLimit {
		return uint64(i), uint64(i) + 1
	}
	j := i - linearLimit
	e := j/subCount + subBits + 1
	sub := uint64(j % subCount)
	shift := uint(e - subBits)
	lo = (subCount + sub) << shift
	return lo, lo + 1<<shift
}

// bucketValue is the value reported for bucket i: its midpoint.
func bucketValue(i int) float64 {
	lo, hi := BucketBounds(i)
	if hi-lo == 1 {
		return float64(lo)
	}
	return float64(lo) + float64(hi-lo-1)/2
}

// Histogram is a fixed-size latency histogram. Record and RecordAtomic are
// for the single goroutine that owns it; RecordAtomic lets other goroutines
// take a consistent-enough Snapshot while it runs (counters are read one by
// one, so a snapshot may miss the I/O being recorded at that instant, never
// corrupt). Merge is exact: merging histograms gives exactly the histogram of
// all their values.
type Histogram struct {
	count   uint64
	sum     uint64 // ns; overflows only after 584 years of summed latency
	min     uint64 // valid when count > 0
	max     uint64
	buckets [NumBuckets]uint64
}

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram { return &Histogram{} }

// Record adds one value (ns). Not safe against concurrent readers.
func (h *Histogram) Record(ns int64) {
	v := clampNs(ns)
	if h.count == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.count++
	h.sum += v
	h.buckets[bucketIndex(v)]++
}

// RecordAtomic adds one value (ns) so that concurrent Snapshot calls are
// safe. Only one goroutine may record into a histogram.
func (h *Histogram) RecordAtomic(ns int64) {
	v := clampNs(ns)
	if atomic.LoadUint64(&h.count) == 0 || v < atomic.LoadUint64(&h.min) {
		atomic.StoreUint64(&h.min, v)
	}
	if v > atomic.LoadUint64(&h.max) {
		atomic.StoreUint64(&h.max, v)
	}
	atomic.AddUint64(&h.buckets[bucketIndex(v)], 1)
	atomic.AddUint64(&h.sum, v)
	atomic.AddUint64(&h.count, 1)
}

func clampNs(ns int64) uint64 {
	if ns < 0 {
		return 0
	}
	return uint64(ns)
}

// SnapshotInto copies h into dst with atomic loads, touching only the
// buckets between the recorded minimum and maximum (a run's latencies span a
// few powers of two, so a snapshot copies a few kilobytes, not 35).
func (h *Histogram) SnapshotInto(dst *Histogram) {
	count := atomic.LoadUint64(&h.count)
	dst.Reset()
	if count == 0 {
		return
	}
	dst.min = atomic.LoadUint64(&h.min)
	dst.max = atomic.LoadUint64(&h.max)
	dst.sum = atomic.LoadUint64(&h.sum)
	lo, hi := bucketIndex(dst.min), bucketIndex(dst.max)
	var n uint64
	for i := lo; i <= hi; i++ {
		c := atomic.LoadUint64(&h.buckets[i])
		dst.buckets[i] = c
		n += c
	}
	// Count from the buckets, so that count and buckets always agree even
	// when a record lands between the loads above.
	dst.count = n
}

// Reset empties the histogram.
func (h *Histogram) Reset() {
	if h.count == 0 && h.max == 0 {
		return
	}
	lo, hi := bucketIndex(h.min), bucketIndex(h.max)
	if h.count == 0 {
		lo, hi = 0, NumBuckets-1
	}
	clear(h.buckets[lo : hi+1])
	h.count, h.sum, h.min, h.max = 0, 0, 0, 0
}

// Merge adds every value of o into h.
func (h *Histogram) Merge(o *Histogram) {
	if o.count == 0 {
		return
	}
	if h.count == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	h.count += o.count
	h.sum += o.sum
	lo, hi := bucketIndex(o.min), bucketIndex(o.max)
	for i := lo; i <= hi; i++ {
		h.buckets[i] += o.buckets[i]
	}
}

// Sub sets h to h minus o, where o is an earlier snapshot of the same
// histogram (interval deltas). Min and max of the difference are
// re-derived from the buckets, so they are bucket-accurate, not exact.
func (h *Histogram) Sub(o *Histogram) {
	if o.count == 0 {
		return
	}
	lo, hi := bucketIndex(o.min), bucketIndex(o.max)
	for i := lo; i <= hi; i++ {
		h.buckets[i] -= o.buckets[i]
	}
	h.count -= o.count
	h.sum -= o.sum
	h.min, h.max = 0, 0
	if h.count == 0 {
		h.sum = 0
		return
	}
	first, last := -1, -1
	for i := range h.buckets {
		if h.buckets[i] != 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	h.min, _ = BucketBounds(first)
	_, top := BucketBounds(last)
	h.max = top - 1
}

// Count is the number of recorded values.
func (h *Histogram) Count() uint64 { return h.count }

// Sum is the sum of recorded values in ns.
func (h *Histogram) Sum() uint64 { return h.sum }

// Min is the smallest recorded value in ns (0 when empty).
func (h *Histogram) Min() uint64 { return h.min }

// Max is the largest recorded value in ns (0 when empty).
func (h *Histogram) Max() uint64 { return h.max }

// Mean is the exact mean in ns.
func (h *Histogram) Mean() float64 {
	if h.count == 0 {
		return 0
	}
	return float64(h.sum) / float64(h.count)
}

// Stddev is the population standard deviation in ns, computed from the
// bucket midpoints around the exact mean (within 0.4% of the exact figure).
func (h *Histogram) Stddev() float64 {
	if h.count < 2 {
		return 0
	}
	mean := h.Mean()
	var acc float64
	h.each(func(i int, c uint64) {
		d := bucketValue(i) - mean
		acc += d * d * float64(c)
	})
	return math.Sqrt(acc / float64(h.count))
}

// Quantile returns the value at quantile q in [0,1], in ns: the midpoint of
// the bucket holding the value of rank ceil(q*count) (the nearest-rank
// definition), clamped to the exact min and max.
func (h *Histogram) Quantile(q float64) float64 {
	if h.count == 0 {
		return 0
	}
	if q <= 0 {
		return float64(h.min)
	}
	if q >= 1 {
		return float64(h.max)
	}
	rank := uint64(math.Ceil(q * float64(h.count)))
	if rank == 0 {
		rank = 1
	}
	var seen uint64
	lo, hi := bucketIndex(h.min), bucketIndex(h.max)
	for i := lo; i <= hi; i++ {
		seen += h.buckets[i]
		if seen >= rank {
			v := bucketValue(i)
			return math.Min(math.Max(v, float64(h.min)), float64(h.max))
		}
	}
	return float64(h.max)
}

// each calls f for every non-empty bucket in ascending order.
func (h *Histogram) each(f func(i int, c uint64)) {
	if h.count == 0 {
		return
	}
	lo, hi := bucketIndex(h.min), bucketIndex(h.max)
	for i := lo; i <= hi; i++ {
		if c := h.buckets[i]; c != 0 {
			f(i, c)
		}
	}
}

// Buckets calls f for every non-empty bucket with its bounds in ns (lower
// inclusive, upper exclusive) and count, in ascending order. Exporters use it
// to build classic and native Prometheus buckets.
func (h *Histogram) Buckets(f func(lo, hi uint64, count uint64)) {
	h.each(func(i int, c uint64) {
		lo, hi := BucketBounds(i)
		f(lo, hi, c)
	})
}

// histogramJSON is the sparse wire form: only non-empty buckets, as
// [index, count] pairs, with the layout named so that a reader can refuse a
// layout it does not know.
type histogramJSON struct {
	Layout  string      `json:"layout"`
	Count   uint64      `json:"count"`
	SumNs   uint64      `json:"sum_ns"`
	MinNs   uint64      `json:"min_ns"`
	MaxNs   uint64      `json:"max_ns"`
	Buckets [][2]uint64 `json:"buckets"`
}

// MarshalJSON writes the sparse form.
func (h *Histogram) MarshalJSON() ([]byte, error) {
	j := histogramJSON{Layout: HistogramTag, Count: h.count, SumNs: h.sum, MinNs: h.min, MaxNs: h.max, Buckets: [][2]uint64{}}
	h.each(func(i int, c uint64) { j.Buckets = append(j.Buckets, [2]uint64{uint64(i), c}) })
	return json.Marshal(j)
}

// UnmarshalJSON reads the sparse form and checks that it is consistent.
func (h *Histogram) UnmarshalJSON(b []byte) error {
	var j histogramJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if j.Layout != HistogramTag {
		return fmt.Errorf("histogram layout %q is not %q", j.Layout, HistogramTag)
	}
	*h = Histogram{}
	var n uint64
	lo, hi := uint64(bucketIndex(j.MinNs)), uint64(bucketIndex(j.MaxNs))
	for _, p := range j.Buckets {
		if p[0] >= NumBuckets || p[0] < lo || p[0] > hi {
			return fmt.Errorf("histogram bucket %d lies outside min_ns..max_ns", p[0])
		}
		if h.buckets[p[0]] != 0 {
			return fmt.Errorf("histogram bucket %d is given twice", p[0])
		}
		// Counts that wrap uint64 could add up to any count: two buckets
		// of 2^63 each sum back to 0.
		var c uint64
		if n, c = bits.Add64(n, p[1], 0); c != 0 {
			return fmt.Errorf("histogram buckets hold more than 2^64 values (a count wrapped, or is not one)")
		}
		h.buckets[p[0]] = p[1]
	}
	if n != j.Count {
		return fmt.Errorf("histogram buckets hold %d values but count is %d", n, j.Count)
	}
	if n > 0 && (bucketIndex(j.MinNs) > bucketIndex(j.MaxNs) || h.buckets[bucketIndex(j.MinNs)] == 0 || h.buckets[bucketIndex(j.MaxNs)] == 0) {
		return fmt.Errorf("histogram min_ns/max_ns do not match its buckets")
	}
	h.count, h.sum, h.min, h.max = j.Count, j.SumNs, j.MinNs, j.MaxNs
	return nil
}
