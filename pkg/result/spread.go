package result

import (
	"math"
	"sort"
)

// Spread sources.
const (
	SpreadRepeat    = "repeat"    // between the runs of a point run several times (--repeat)
	SpreadIntervals = "intervals" // between the intervals of one run
)

// MinSpreadSamples is the fewest runs or whole intervals a spread is
// computed from; with fewer, the spread is unknown.
const MinSpreadSamples = 3

// Spread is how much a point's figures varied: between runs (--repeat,
// stored in the result) or between the intervals of one run (derived on
// demand by SpreadOf, never stored).
type Spread struct {
	Source string `json:"source"`
	// Runs is the number of runs (or intervals) the statistics are over.
	Runs                   int  `json:"runs"`
	IOPS                   Stat `json:"iops"`
	MBPerSecond            Stat `json:"mb_per_second"`
	LatencyMeanSeconds     Stat `json:"latency_mean_seconds"`
	LatencyP99Seconds      Stat `json:"latency_p99_seconds"`
	HostCPUSecondsPerIO    Stat `json:"host_cpu_seconds_per_io"`
	ProcessCPUSecondsPerIO Stat `json:"process_cpu_seconds_per_io"`
}

// Stat summarises one figure over runs.
type Stat struct {
	Mean float64 `json:"mean"`
	// Stddev is the sample standard deviation (n − 1), 0 for fewer than 2 values.
	Stddev float64   `json:"stddev"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	Values []float64 `json:"values"` // per run, in the order they ran
}

// NewStat summarises values.
func NewStat(values []float64) Stat {
	s := Stat{Values: append([]float64{}, values...)}
	if len(values) == 0 {
		return s
	}
	s.Min, s.Max = values[0], values[0]
	var sum float64
	for _, v := range values {
		sum += v
		s.Min, s.Max = math.Min(s.Min, v), math.Max(s.Max, v)
	}
	s.Mean = sum / float64(len(values))
	if len(values) > 1 {
		var acc float64
		for _, v := range values {
			acc += (v - s.Mean) * (v - s.Mean)
		}
		s.Stddev = math.Sqrt(acc / float64(len(values)-1))
	}
	return s
}

// Relative is the coefficient of variation, stddev ÷ mean, and whether it
// is known (two values or more, and a positive mean).
func (s Stat) Relative() (float64, bool) {
	if len(s.Values) < 2 || s.Mean <= 0 {
		return 0, false
	}
	return s.Stddev / s.Mean, true
}

// spreadFields binds each figure of ViewSpread to the field of Spread
// that holds its statistics: the JSON's names.
var spreadFields = map[FigureID]func(s *Spread) *Stat{
	FigIOPS:         func(s *Spread) *Stat { return &s.IOPS },
	FigMBPerSecond:  func(s *Spread) *Stat { return &s.MBPerSecond },
	FigLatencyMean:  func(s *Spread) *Stat { return &s.LatencyMeanSeconds },
	FigLatencyP99:   func(s *Spread) *Stat { return &s.LatencyP99Seconds },
	FigHostCPUIO:    func(s *Spread) *Stat { return &s.HostCPUSecondsPerIO },
	FigProcessCPUIO: func(s *Spread) *Stat { return &s.ProcessCPUSecondsPerIO },
}

// stat is the field of s that holds id's statistics (nil: s keeps none
// for it).
func (s *Spread) stat(id FigureID) *Stat {
	if f := spreadFields[id]; f != nil {
		return f(s)
	}
	return nil
}

// Stat is the statistics of figure id (nil: the spread keeps none for it).
func (s *Spread) Stat(id FigureID) *Stat { return s.stat(id) }

// repeatSpread is the spread between the runs of one point. A run that is
// itself a merge of repeats contributes its own runs.
func repeatSpread(rs []*Result) *Spread {
	values := make([][]float64, len(ViewSpread))
	for _, r := range rs {
		for i, id := range ViewSpread {
			if sp := r.Spread; sp != nil && sp.Source == SpreadRepeat {
				values[i] = append(values[i], sp.stat(id).Values...)
			} else {
				values[i] = append(values[i], Value(id, &r.Summary))
			}
		}
	}
	out := &Spread{Source: SpreadRepeat, Runs: len(values[0])}
	for i, id := range ViewSpread {
		*out.stat(id) = NewStat(values[i])
	}
	return out
}

// IntervalSpread is the interval-to-interval variation of one run: the
// statistics of its whole intervals (a last interval shorter than half the
// usual one is left out, as are the latencies of intervals that completed
// nothing). Each interval stands for a short run, so the spread is an
// upper bound of what a repeated run of the same length would vary by.
// CPU is sampled only at the ends of the window, so the CPU statistics
// are empty. It returns nil with fewer than MinSpreadSamples intervals.
func IntervalSpread(r *Result) *Spread {
	ivs := r.Intervals
	if len(ivs) < MinSpreadSamples {
		return nil
	}
	lengths := make([]float64, len(ivs))
	prev := 0.0
	for i, iv := range ivs {
		lengths[i] = iv.TSeconds - prev
		prev = iv.TSeconds
	}
	sorted := append([]float64(nil), lengths...)
	sort.Float64s(sorted)
	median := sorted[len(sorted)/2]
	// The figures intervals carry; a latency only from intervals that
	// completed something.
	var ids []FigureID
	for _, id := range ViewSpread {
		if id.Figure().Interval != nil {
			ids = append(ids, id)
		}
	}
	values := make([][]float64, len(ids))
	ops := FigIOPS.Figure().Interval
	for i := range ivs {
		if lengths[i] < median/2 {
			continue
		}
		for j, id := range ids {
			f := id.Figure()
			if f.Unit == UnitLatency && ops(&ivs[i]) <= 0 {
				continue
			}
			values[j] = append(values[j], f.Interval(&ivs[i]))
		}
	}
	if len(values[0]) < MinSpreadSamples {
		return nil
	}
	out := &Spread{Source: SpreadIntervals, Runs: len(values[0])}
	for j, id := range ids {
		*out.stat(id) = NewStat(values[j])
	}
	return out
}

// SpreadOf is the spread compare judges noise by: the runs of --repeat
// when there were several, else the intervals of the run (nil when
// neither is known).
func SpreadOf(r *Result) *Spread {
	if r.Spread != nil && r.Spread.Runs >= 2 {
		return r.Spread
	}
	return IntervalSpread(r)
}
