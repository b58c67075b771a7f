package result

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"reflect"
	"sort"
	"strings"
	"time"
)

// A result comes from a file or a host ioprobe does not control: one
// hostile or corrupt document must not falsify a report or a fleet's
// figures. Every count a merge adds is checked to add up without
// wrapping uint64, and every seconds, rate or latency figure to be a
// finite number that is not negative, before anything is merged; a
// histogram's buckets are checked against its count as it is read
// (Histogram.UnmarshalJSON).

// SumError is a result that does not add up: Index is the result (of
// those given) at which the check failed, Path the figure.
type SumError struct {
	Index int
	Path  string
	Msg   string
}

func (e *SumError) Error() string { return e.Path + ": " + e.Msg }

// checkResult refuses one result whose figures are impossible: a
// negative or non-finite seconds, rate or latency, op or byte totals that
// wrap, or op counts that differ from its histograms' counts.
func checkResult(r *Result) error {
	if err := checkSums([]*Result{r}); err != nil {
		return err
	}
	s, h := &r.Summary, r.Histogram
	// The workload's times are not added up (checkSums leaves the
	// workload alone), but they are times: a negative ramp-up is none.
	for _, f := range []struct {
		path string
		v    float64
	}{{"workload.ramp_seconds", r.Workload.RampSeconds}, {"workload.duration_seconds", r.Workload.DurationSeconds}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			return &SumError{Path: f.path, Msg: fmt.Sprintf("is %v: a time, rate or count is a finite number, not negative", f.v)}
		}
	}
	if _, c := bits.Add64(s.ReadOps, s.WriteOps, 0); c != 0 {
		return &SumError{Path: "summary.ops", Msg: "read_ops + write_ops wrap 64 bits"}
	}
	if _, c := bits.Add64(s.ReadBytes, s.WriteBytes, 0); c != 0 {
		return &SumError{Path: "summary.bytes", Msg: "read_bytes + write_bytes wrap 64 bits"}
	}
	if h.Read != nil && h.Read.Count() != s.ReadOps {
		return &SumError{Path: "summary.read_ops", Msg: fmt.Sprintf("is %d but the read histogram holds %d", s.ReadOps, h.Read.Count())}
	}
	if h.Write != nil && h.Write.Count() != s.WriteOps {
		return &SumError{Path: "summary.write_ops", Msg: fmt.Sprintf("is %d but the write histogram holds %d", s.WriteOps, h.Write.Count())}
	}
	return nil
}

// checkSums walks what a merge adds up (the summaries, histograms, queue
// depths, disk counters and intervals of rs) and refuses a figure whose
// total over rs wraps uint64, or that is negative or not finite.
func checkSums(rs []*Result) error {
	var w sumWalker
	for _, part := range []struct {
		name string
		get  func(r *Result) any
	}{
		{"summary", func(r *Result) any { return &r.Summary }},
		{"histogram", func(r *Result) any { return &r.Histogram }},
		{"iodepth", func(r *Result) any { return r.IODepth }},
		{"disk_util", func(r *Result) any { return r.DiskUtil }},
		{"intervals", func(r *Result) any { return r.Intervals }},
	} {
		vs := make([]reflect.Value, len(rs))
		for i, r := range rs {
			vs[i] = reflect.ValueOf(part.get(r))
		}
		if err := w.walk(part.name, vs); err != nil {
			return err
		}
	}
	return nil
}

type sumWalker struct{}

var (
	histogramType = reflect.TypeOf(Histogram{})
	timeType      = reflect.TypeOf(time.Time{})
	workloadType  = reflect.TypeOf(Workload{})
)

// walk checks the values at one path, one per result (invalid or nil
// where a result has none).
func (w sumWalker) walk(path string, vs []reflect.Value) error {
	var t reflect.Type
	live := vs[:0:0]
	for _, v := range vs {
		for v.IsValid() && (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) {
			if v.IsNil() {
				v = reflect.Value{}
				break
			}
			v = v.Elem()
		}
		if v.IsValid() {
			t = v.Type()
		}
		live = append(live, v)
	}
	if t == nil {
		return nil
	}
	switch {
	case t == histogramType:
		return w.histograms(path, live)
	case t == timeType || t == workloadType:
		return nil // not added up
	}
	switch t.Kind() {
	case reflect.Uint64:
		var sum uint64
		for i, v := range live {
			if !v.IsValid() {
				continue
			}
			var c uint64
			if sum, c = bits.Add64(sum, v.Uint(), 0); c != 0 {
				return &SumError{Index: i, Path: path, Msg: "the counts add up to more than 2^64 (a count wrapped, or is not one)"}
			}
		}
	case reflect.Float64:
		sum := 0.0
		for i, v := range live {
			if !v.IsValid() {
				continue
			}
			f := v.Float()
			if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
				return &SumError{Index: i, Path: path, Msg: fmt.Sprintf("is %v: a time, rate or count is a finite number, not negative", f)}
			}
			if sum += f; math.IsInf(sum, 0) {
				return &SumError{Index: i, Path: path, Msg: "the figures add up to more than a float64 holds"}
			}
		}
	case reflect.Struct:
		for f := 0; f < t.NumField(); f++ {
			sf := t.Field(f)
			name := strings.Split(sf.Tag.Get("json"), ",")[0]
			if name == "-" {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			sub := path + "." + name
			if sf.Anonymous {
				sub = path
			}
			fs := make([]reflect.Value, len(live))
			for i, v := range live {
				if v.IsValid() {
					fs[i] = v.Field(f)
				}
			}
			if err := w.walk(sub, fs); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		n := 0
		for _, v := range live {
			if v.IsValid() {
				n = max(n, v.Len())
			}
		}
		for k := 0; k < n; k++ {
			es := make([]reflect.Value, len(live))
			for i, v := range live {
				if v.IsValid() && k < v.Len() {
					es[i] = v.Index(k)
				}
			}
			if err := w.walk(fmt.Sprintf("%s[%d]", path, k), es); err != nil {
				return err
			}
		}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil
		}
		keys := map[string]bool{}
		for _, v := range live {
			if v.IsValid() {
				for _, k := range v.MapKeys() {
					keys[k.String()] = true
				}
			}
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			es := make([]reflect.Value, len(live))
			for i, v := range live {
				if v.IsValid() {
					es[i] = v.MapIndex(reflect.ValueOf(k).Convert(t.Key()))
				}
			}
			if err := w.walk(path+"."+k, es); err != nil {
				return err
			}
		}
	}
	return nil
}

// histograms checks that the histograms at one path can be merged: their
// counts, sums and every bucket add up without wrapping.
func (sumWalker) histograms(path string, vs []reflect.Value) error {
	var total Histogram
	for i, v := range vs {
		if !v.IsValid() {
			continue
		}
		h := v.Addr().Interface().(*Histogram)
		if err := total.canMerge(h); err != nil {
			return &SumError{Index: i, Path: path, Msg: err.Error()}
		}
		total.Merge(h)
	}
	return nil
}

// canMerge says whether o can be merged into h without a count, the sum
// or a bucket wrapping uint64.
func (h *Histogram) canMerge(o *Histogram) error {
	if o.count == 0 {
		return nil
	}
	if _, c := bits.Add64(h.count, o.count, 0); c != 0 {
		return fmt.Errorf("the histograms' counts add up to more than 2^64")
	}
	if _, c := bits.Add64(h.sum, o.sum, 0); c != 0 {
		return fmt.Errorf("the histograms' sums (sum_ns) add up to more than 2^64 ns")
	}
	lo, hi := bucketIndex(o.min), bucketIndex(o.max)
	for i := lo; i <= hi; i++ {
		if _, c := bits.Add64(h.buckets[i], o.buckets[i], 0); c != 0 {
			return fmt.Errorf("the histograms' bucket %d adds up to more than 2^64", i)
		}
	}
	return nil
}

// UnmarshalJSON decodes a result and refuses one that does not add up
// (checkResult): every reader of results (report, compare, the fleet's
// hosts' answers) gets only results whose figures are possible.
func (r *Result) UnmarshalJSON(b []byte) error {
	type plain Result
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	if err := checkResult(r); err != nil {
		return fmt.Errorf("the result does not add up: %w", err)
	}
	return nil
}

// MergeSumError is a merge refused because its results do not add up:
// Result is the one at which the check failed (a reader names its file
// or host).
type MergeSumError struct {
	Result *Result
	Err    *SumError
}

func (e *MergeSumError) Error() string {
	return fmt.Sprintf("cannot merge %s from %s: the results do not add up: %v", PointOf(e.Result).Name, e.Result.Host.Hostname, e.Err)
}

func (e *MergeSumError) Unwrap() error { return e.Err }
