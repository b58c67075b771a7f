package exporter

import (
	"math"
	"sort"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// Latency histograms are exported with native (sparse) and classic buckets
// side by side, both built from ioprobe's own log-linear histogram
// (result.Histogram: integer nanoseconds, exact below 256 ns, above that
// 128 linear sub-buckets per power of two, so a bucket is at most 1/128 of
// its lower bound wide).
//
// Neither Prometheus layout has boundaries on ours: native boundaries are
// powers of 2^(2^-schema) seconds, and a second is not a power of two of
// nanoseconds. So every one of our buckets goes, whole, to the Prometheus
// bucket that holds its largest value. That is conservative: an I/O is
// never reported faster than it was. It is also close: an I/O lands one
// bucket too high only when it lies within one of our buckets (< 0.79%) of
// a boundary, so every reported bucket bound is within 0.79% of the truth
// and quantiles estimated from them carry that error on top of the
// Prometheus bucket's own width. Counts and sums are exact.

// nativeSchema 3: 8 buckets per power of two, each 9.05% wide, the same
// resolution as client_golang's usual NativeHistogramBucketFactor of 1.1.
// A run's latencies span a few powers of two, so a series carries a few
// dozen buckets.
const nativeSchema = 3

// classicBounds are the classic buckets' upper bounds in seconds: 50 µs
// (a fast NVMe read) to 10 s (a device that is failing).
var classicBounds = []float64{
	50e-6, 100e-6, 250e-6, 500e-6,
	1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 500e-3,
	1, 2.5, 5, 10,
}

// nativeBounds are the mantissas (in [0.5, 1)) at which the buckets of
// nativeSchema start, as client_golang computes keys.
var nativeBounds = func() []float64 {
	n := 1 << nativeSchema
	b := make([]float64, n)
	for j := range b {
		b[j] = math.Exp2(float64(j)/float64(n) - 1)
	}
	return b
}()

// nativeIndex is the index of the native bucket (lower, upper] that holds
// v > 0 seconds: bucket i has upper bound 2^(i / 2^schema).
func nativeIndex(v float64) int {
	frac, exp := math.Frexp(v)
	return sort.SearchFloat64s(nativeBounds, frac) + (exp-1)*len(nativeBounds)
}

// toDTO converts h into a Prometheus histogram with both layouts.
func toDTO(h *result.Histogram) *dto.Histogram {
	count := h.Count()
	sum := float64(h.Sum()) / 1e9
	schema := int32(nativeSchema)
	zeroThreshold := prometheus.DefNativeHistogramZeroThreshold
	var zero uint64
	out := &dto.Histogram{
		SampleCount:   &count,
		SampleSum:     &sum,
		Schema:        &schema,
		ZeroThreshold: &zeroThreshold,
	}

	classic := make([]uint64, len(classicBounds))
	var sp spanBuilder
	h.Buckets(func(lo, hi, c uint64) {
		top := hi - 1 // the bucket's largest value, ns
		v := float64(top) / 1e9
		if top == 0 {
			zero += c
		} else {
			sp.add(nativeIndex(v), int64(c))
		}
		for i := sort.SearchFloat64s(classicBounds, v); i < len(classic); i++ {
			classic[i] += c
		}
	})
	out.ZeroCount = &zero
	out.PositiveSpan, out.PositiveDelta = sp.finish()
	if len(out.PositiveSpan) == 0 {
		// An empty native histogram still says it is one.
		out.PositiveSpan = []*dto.BucketSpan{{Offset: new(int32(0)), Length: new(uint32(0))}}
	}
	for i, b := range classicBounds {
		out.Bucket = append(out.Bucket, &dto.Bucket{CumulativeCount: new(classic[i]), UpperBound: new(b)})
	}
	return out
}

// spanBuilder encodes ascending (index, count) pairs as native spans and
// count deltas. Gaps of up to two empty buckets are filled with zeros
// rather than opening a new span (as client_golang does).
type spanBuilder struct {
	spans  []*dto.BucketSpan
	deltas []int64
	last   int   // index of the last bucket written
	prev   int64 // count of the last bucket written
	cur    int   // index being accumulated
	count  int64
	have   bool
}

func (s *spanBuilder) add(idx int, c int64) {
	if s.have && idx == s.cur {
		s.count += c
		return
	}
	if s.have {
		s.flush()
	}
	s.cur, s.count, s.have = idx, c, true
}

func (s *spanBuilder) flush() {
	gap := s.cur - s.last - 1
	switch {
	case len(s.spans) == 0:
		s.spans = append(s.spans, &dto.BucketSpan{Offset: new(int32(s.cur)), Length: new(uint32(0))})
	case gap > 2:
		s.spans = append(s.spans, &dto.BucketSpan{Offset: new(int32(gap)), Length: new(uint32(0))})
	default:
		for range gap {
			s.emit(0)
		}
	}
	s.emit(s.count)
	s.last = s.cur
}

func (s *spanBuilder) emit(c int64) {
	*s.spans[len(s.spans)-1].Length++
	s.deltas = append(s.deltas, c-s.prev)
	s.prev = c
}

func (s *spanBuilder) finish() ([]*dto.BucketSpan, []int64) {
	if s.have {
		s.flush()
		s.have = false
	}
	return s.spans, s.deltas
}

// histogramMetric is a const metric carrying a dto.Histogram with both
// layouts. client_golang's const histograms carry one layout or the
// other, never both.
type histogramMetric struct {
	desc   *prometheus.Desc
	labels []*dto.LabelPair
	h      *dto.Histogram
}

func newHistogramMetric(desc *prometheus.Desc, h *result.Histogram, labelValues ...string) prometheus.Metric {
	return &histogramMetric{desc: desc, labels: prometheus.MakeLabelPairs(desc, labelValues), h: toDTO(h)}
}

func (m *histogramMetric) Desc() *prometheus.Desc { return m.desc }

func (m *histogramMetric) Write(out *dto.Metric) error {
	out.Label = m.labels
	out.Histogram = m.h
	return nil
}
