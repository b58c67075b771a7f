package check

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// The words of a verdict.
const (
	Pass         = "pass"
	Fail         = "fail"
	Inconclusive = "inconclusive"
)

// MinSamples is the fewest timed operations a stream's verdict rests on.
// etcd's guidance is a 99th percentile under a threshold. If the true
// 99th percentile were exactly at the threshold, each sample would be
// over it with probability 0.01, and n samples would all be under it
// with probability 0.99^n: 0.05 at n = 299. So only from 300 samples can
// a run show that the 99th percentile is under the threshold with 95%
// confidence even when not one sample is over it; with fewer, even a
// perfect run proves nothing, and a percentile taken from fewer than 100
// samples is merely the slowest one. Below it a stream is inconclusive.
const MinSamples = 300

// Rule judges one stream: a quantile of its timed operation against a
// published threshold.
type Rule struct {
	Stream   string // "wal", "backend"
	Label    string // "WAL", "backend": for text
	Noun     string // what a sample is, plural: "fdatasyncs", "commits"
	Figure   string // "fdatasync p99"
	Metric   string // the metric the source watches for the same thing
	Quantile float64
	// Threshold is the published limit; a measured figure within Margin
	// of it is borderline: repeated runs on the same storage can land on
	// either side (see EtcdWAL).
	Threshold, Margin time.Duration
	MinSamples        uint64
}

// StreamVerdict is one stream's answer with the figure behind it.
type StreamVerdict struct {
	Stream     string  `json:"stream"`
	Verdict    string  `json:"verdict"` // pass, fail, inconclusive
	Pass       bool    `json:"pass"`
	Borderline bool    `json:"borderline"`
	Figure     string  `json:"figure"`
	Metric     string  `json:"metric"`
	Measured   float64 `json:"measured"`  // seconds; 0 when inconclusive
	Threshold  float64 `json:"threshold"` // seconds
	Margin     float64 `json:"margin"`    // seconds
	Samples    uint64  `json:"samples"`
	MinSamples uint64  `json:"min_samples"`
	Reason     string  `json:"reason"` // one sentence: the verdict and why
	detail     string  // Reason without its first word, for Combine
}

// Judge reads a stream's verdict from the histogram of all its samples
// (every repeat's) and, with more than one repeat, each repeat's figure:
// repeats that fall on both sides of the threshold make it borderline.
func (r Rule) Judge(h *result.Histogram, repeats []float64) StreamVerdict {
	v := StreamVerdict{Stream: r.Stream, Figure: r.Figure, Metric: r.Metric,
		Threshold: r.Threshold.Seconds(), Margin: r.Margin.Seconds(), MinSamples: r.MinSamples}
	if h != nil {
		v.Samples = h.Count()
	}
	limit := fmtMs(v.Threshold)
	if v.Samples < r.MinSamples {
		v.Verdict = Inconclusive
		v.detail = fmt.Sprintf("only %d %s; a %s against etcd's %s needs at least %d (a longer --duration)",
			v.Samples, r.Noun, quantileName(r.Quantile), limit, r.MinSamples)
		v.Reason = "INCONCLUSIVE: " + v.detail
		return v
	}
	v.Measured = h.Quantile(r.Quantile) / 1e9
	v.Pass = v.Measured < v.Threshold
	word, rel := "PASS", "under"
	v.Verdict = Pass
	if !v.Pass {
		word, rel, v.Verdict = "FAIL", "not under", Fail
	}
	var why []string
	if math.Abs(v.Measured-v.Threshold) <= v.Margin {
		why = append(why, fmt.Sprintf("within the %s margin", fmtMs(v.Margin)))
	}
	if lo, hi, split := straddles(repeats, v.Threshold); split {
		why = append(why, fmt.Sprintf("the repeats' figures (%s to %s) fall on both sides", fmtMs(lo), fmtMs(hi)))
	}
	v.Borderline = len(why) > 0
	v.detail = fmt.Sprintf("%s of %d %s is %.3f ms, %s etcd's %s", quantileName(r.Quantile),
		v.Samples, r.Noun, v.Measured*1e3, rel, limit)
	if len(why) > 0 {
		v.detail += " (borderline: " + strings.Join(why, "; ") + ")"
	}
	v.Reason = word + ": " + v.detail
	return v
}

// straddles reports whether figures lie on both sides of threshold, and
// their range.
func straddles(figures []float64, threshold float64) (lo, hi float64, split bool) {
	if len(figures) < 2 {
		return 0, 0, false
	}
	lo, hi = figures[0], figures[0]
	for _, f := range figures[1:] {
		lo, hi = min(lo, f), max(hi, f)
	}
	return lo, hi, lo < threshold && hi >= threshold
}

// Verdict is a check's answer: failed when any stream fails, else
// inconclusive when any stream is, else passed. Figure, Measured,
// Threshold, Samples and MinSamples are the first stream's (the etcd
// WAL's, the figure etcd's guidance is best known for); every stream's
// own are in Streams.
type Verdict struct {
	Check      string          `json:"check"`
	Verdict    string          `json:"verdict"` // pass, fail, inconclusive
	Pass       bool            `json:"pass"`
	Borderline bool            `json:"borderline"` // any stream is
	Figure     string          `json:"figure"`
	Measured   float64         `json:"measured"`
	Threshold  float64         `json:"threshold"`
	Samples    uint64          `json:"samples"`
	MinSamples uint64          `json:"min_samples"`
	Reason     string          `json:"reason"`
	Streams    []StreamVerdict `json:"streams"`
}

// Combine makes a check's verdict from its streams' (labels name them in
// the reason).
func Combine(check string, labels []string, vs []StreamVerdict) Verdict {
	v := Verdict{Check: check, Verdict: Pass, Pass: true, Streams: vs}
	if len(vs) > 0 {
		f := vs[0]
		v.Figure, v.Measured, v.Threshold, v.Samples, v.MinSamples = f.Figure, f.Measured, f.Threshold, f.Samples, f.MinSamples
	}
	pick := func(word string) []string {
		var rs []string
		for i, s := range vs {
			if s.Verdict == word {
				rs = append(rs, labels[i]+": "+s.detail)
			}
		}
		return rs
	}
	for _, s := range vs {
		v.Borderline = v.Borderline || s.Borderline
	}
	switch fails, incs := pick(Fail), pick(Inconclusive); {
	case len(fails) > 0:
		v.Verdict, v.Pass = Fail, false
		v.Reason = "FAIL: " + strings.Join(fails, "; ")
	case len(incs) > 0:
		v.Verdict, v.Pass = Inconclusive, false
		v.Reason = "INCONCLUSIVE: " + strings.Join(incs, "; ")
	default:
		v.Reason = "PASS: " + strings.Join(pick(Pass), "; ")
	}
	return v
}

// quantileName is "99th percentile" for 0.99.
func quantileName(q float64) string {
	p := q * 100
	if p == math.Trunc(p) {
		return fmt.Sprintf("%.0fth percentile", p)
	}
	return fmt.Sprintf("%gth percentile", p)
}

// fmtMs writes seconds as milliseconds, without trailing zeros: "10 ms",
// "2.5 ms".
func fmtMs(s float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", s*1e3), "0"), ".") + " ms"
}
