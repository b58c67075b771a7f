package result

import (
	"math"
	"sort"
	"time"
)

// periods splits the runs to merge into periods that did not overlap in
// time and returns each period's length in seconds, in time order. A
// run's span is from its start through ramp-up to the end of its measured
// window; runs whose spans overlap are one period (concurrent load).
// Without a start time on every run nothing is known: one period.
func periods(rs []*Result) []float64 {
	type span struct {
		from, to time.Time
		measured float64
	}
	spans := make([]span, 0, len(rs))
	for _, r := range rs {
		if r.StartedAt.IsZero() {
			return nil
		}
		d := secondsDuration(r.Workload.RampSeconds + r.Summary.ElapsedSeconds)
		spans = append(spans, span{r.StartedAt, r.StartedAt.Add(d), r.Summary.ElapsedSeconds})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].from.Before(spans[j].from) })
	var out []float64
	var end time.Time
	for i, s := range spans {
		if i == 0 || !s.from.Before(end) {
			out = append(out, s.measured) // a new period
			end = s.to
			continue
		}
		out[len(out)-1] = max(out[len(out)-1], s.measured)
		if s.to.After(end) {
			end = s.to
		}
	}
	return out
}

// secondsDuration is a document's seconds as a time.Duration, saturated
// at its bounds: time.Duration(v * 1e9) of a figure past 292 years is
// whatever the machine gives (a span that ends before it starts).
func secondsDuration(v float64) time.Duration {
	ns := v * float64(time.Second)
	switch {
	case ns != ns:
		return 0
	case ns >= math.MaxInt64:
		return math.MaxInt64
	case ns <= math.MinInt64:
		return math.MinInt64
	}
	return time.Duration(ns)
}
