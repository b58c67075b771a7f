package check

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// TestEtcdRulesAreEtcdsGuidance: the thresholds, quantiles and metrics
// are etcd's, and the minimum of samples is the fewest with which a run
// can show a 99th percentile under a threshold at 95% confidence.
func TestEtcdRulesAreEtcdsGuidance(t *testing.T) {
	require.Equal(t, 10*time.Millisecond, EtcdWAL.Threshold)
	require.Equal(t, "etcd_disk_wal_fsync_duration_seconds", EtcdWAL.Metric)
	require.Equal(t, 25*time.Millisecond, EtcdBackend.Threshold)
	require.Equal(t, "etcd_disk_backend_commit_duration_seconds", EtcdBackend.Metric)
	for _, r := range []Rule{EtcdWAL, EtcdBackend} {
		require.Equal(t, 0.99, r.Quantile)
		require.Equal(t, uint64(MinSamples), r.MinSamples)
		require.Less(t, r.Margin, r.Threshold/2, "a margin, not a second threshold")
	}
	// All n samples under a true p99 at the threshold: 0.99^n.
	require.Less(t, math.Pow(0.99, MinSamples), 0.05)
	require.Greater(t, math.Pow(0.99, 298), 0.05, "300 is the round figure just past the first n that shows it")
	_, ok := Lookup("etcd")
	require.True(t, ok)
	_, ok = Lookup("postgres")
	require.False(t, ok)
}

// TestEtcdFrames: one append is an etcd frame (an 8-byte length, the
// record padded to 8 bytes) within a few bytes of the fio recipe's 2,300.
func TestEtcdFrames(t *testing.T) {
	require.Zero(t, RecordBytes%8, "no padding needed")
	require.Equal(t, 8+RecordBytes, FrameBytes)
	require.InDelta(t, 2300, FrameBytes, 8)
	require.Equal(t, 64_000_000, SegmentBytes)
}

func TestJudge(t *testing.T) {
	ms := time.Millisecond
	v := EtcdWAL.Judge(samples(1000, 20, ms, 2*ms), nil)
	require.Equal(t, Pass, v.Verdict)
	require.True(t, v.Pass)
	require.False(t, v.Borderline)
	require.Equal(t, uint64(1000), v.Samples)
	require.Equal(t, fmt.Sprintf("PASS: 99th percentile of 1000 fdatasyncs is %.3f ms, under etcd's 10 ms", v.Measured*1e3), v.Reason)

	v = EtcdWAL.Judge(samples(1000, 20, ms, 25*ms), nil)
	require.Equal(t, Fail, v.Verdict)
	require.False(t, v.Pass)
	require.False(t, v.Borderline)
	require.InDelta(t, 0.025, v.Measured, 0.025*0.01)
	require.Equal(t, fmt.Sprintf("FAIL: 99th percentile of 1000 fdatasyncs is %.3f ms, not under etcd's 10 ms", v.Measured*1e3), v.Reason)

	// Within the margin on either side: borderline, the verdict kept.
	v = EtcdWAL.Judge(samples(1000, 20, ms, 11*ms), nil)
	require.Equal(t, Fail, v.Verdict)
	require.True(t, v.Borderline)
	require.Equal(t, fmt.Sprintf("FAIL: 99th percentile of 1000 fdatasyncs is %.3f ms, not under etcd's 10 ms (borderline: within the 2.5 ms margin)", v.Measured*1e3), v.Reason)
	v = EtcdWAL.Judge(samples(1000, 20, ms, 9*ms), nil)
	require.Equal(t, Pass, v.Verdict)
	require.True(t, v.Borderline)
	// Outside the margin but the repeats straddle the threshold.
	v = EtcdWAL.Judge(samples(1000, 20, ms, 5*ms), []float64{0.005, 0.012})
	require.Equal(t, Pass, v.Verdict)
	require.True(t, v.Borderline)
	require.Contains(t, v.Reason, "the repeats' figures (5 ms to 12 ms) fall on both sides")
	v = EtcdWAL.Judge(samples(1000, 20, ms, 5*ms), []float64{0.005, 0.006})
	require.False(t, v.Borderline)

	// Below the minimum: no verdict either way, even when every sample
	// is over the threshold.
	for _, tail := range []time.Duration{ms, 50 * ms} {
		v = EtcdWAL.Judge(samples(MinSamples-1, (MinSamples-1)/50, tail, tail), nil)
		require.Equal(t, Inconclusive, v.Verdict)
		require.False(t, v.Pass)
		require.Zero(t, v.Measured)
		require.Equal(t, uint64(MinSamples-1), v.Samples)
		require.Equal(t, "INCONCLUSIVE: only 299 fdatasyncs; a 99th percentile against etcd's 10 ms needs at least 300 (a longer --duration)", v.Reason)
	}
	require.Equal(t, Pass, EtcdWAL.Judge(samples(MinSamples, MinSamples/50, ms, ms), nil).Verdict)
	v = EtcdBackend.Judge(nil, nil)
	require.Equal(t, Inconclusive, v.Verdict)
}

func TestCombine(t *testing.T) {
	ms := time.Millisecond
	labels := []string{"WAL", "backend"}
	pass := EtcdWAL.Judge(samples(1000, 20, ms, 2*ms), nil)
	fail := EtcdBackend.Judge(samples(1000, 20, ms, 40*ms), nil)
	inc := EtcdBackend.Judge(samples(10, 0, ms, ms), nil)
	border := EtcdBackend.Judge(samples(1000, 20, ms, 24*ms), nil)

	v := Combine("etcd", labels, []StreamVerdict{pass, fail})
	require.Equal(t, Fail, v.Verdict)
	require.False(t, v.Pass)
	require.Equal(t, fmt.Sprintf("FAIL: backend: 99th percentile of 1000 commits is %.3f ms, not under etcd's 25 ms", fail.Measured*1e3), v.Reason)
	require.Equal(t, pass.Measured, v.Measured, "the WAL's figure")
	require.Equal(t, pass.Samples, v.Samples)
	require.Len(t, v.Streams, 2)

	v = Combine("etcd", labels, []StreamVerdict{pass, inc})
	require.Equal(t, Inconclusive, v.Verdict)
	require.False(t, v.Pass)
	require.Contains(t, v.Reason, "INCONCLUSIVE: backend: only 10 commits")

	// A conclusive failure decides, whatever the other stream lacks.
	walFail := EtcdWAL.Judge(samples(1000, 20, ms, 30*ms), nil)
	v = Combine("etcd", labels, []StreamVerdict{walFail, inc})
	require.Equal(t, Fail, v.Verdict)
	require.Contains(t, v.Reason, "FAIL: WAL: 99th percentile of 1000 fdatasyncs is ")
	require.NotContains(t, v.Reason, "backend")

	v = Combine("etcd", labels, []StreamVerdict{pass, border})
	require.Equal(t, Pass, v.Verdict)
	require.True(t, v.Pass)
	require.True(t, v.Borderline)
	require.Equal(t, fmt.Sprintf("PASS: WAL: 99th percentile of 1000 fdatasyncs is %.3f ms, under etcd's 10 ms; backend: 99th percentile of 1000 commits is %.3f ms, under etcd's 25 ms (borderline: within the 6.25 ms margin)", pass.Measured*1e3, border.Measured*1e3), v.Reason)

	v = Combine("etcd", labels[:1], []StreamVerdict{pass})
	require.Equal(t, Pass, v.Verdict)
	require.False(t, v.Borderline)
}

func TestFmtMs(t *testing.T) {
	require.Equal(t, "10 ms", fmtMs(0.010))
	require.Equal(t, "2.5 ms", fmtMs(0.0025))
	require.Equal(t, "0.125 ms", fmtMs(0.000125))
	require.Equal(t, "99th percentile", quantileName(0.99))
	require.Equal(t, "99.9th percentile", quantileName(0.999))
}

// TestJudgeRules: each stream's rule, case by case — the minimum of
// samples, the flip at the threshold, the borderline margin on both
// sides, the repeats' spread — on histograms built to the figure (no
// timing: the samples are made, not measured).
func TestJudgeRules(t *testing.T) {
	ms := time.Millisecond
	us := time.Microsecond
	for _, c := range []struct {
		name       string
		rule       Rule
		h          *result.Histogram
		repeats    []float64
		verdict    string
		borderline bool
	}{
		// The minimum: below 300 samples no verdict, whatever they say.
		{"WAL, no histogram", EtcdWAL, nil, nil, Inconclusive, false},
		{"WAL, no samples", EtcdWAL, result.NewHistogram(), nil, Inconclusive, false},
		{"WAL, 299 fast", EtcdWAL, samples(299, 0, ms, ms), nil, Inconclusive, false},
		{"WAL, 299 all slow", EtcdWAL, samples(299, 299, 50*ms, 50*ms), nil, Inconclusive, false},
		{"WAL, 300 fast", EtcdWAL, samples(300, 0, ms, ms), nil, Pass, false},
		{"WAL, 300 with 3 slow (the 297th is fast)", EtcdWAL, samples(300, 3, ms, 50*ms), nil, Pass, false},
		{"WAL, 300 with 4 slow (the 297th is slow)", EtcdWAL, samples(300, 4, ms, 50*ms), nil, Fail, false},
		{"backend, 299 slow", EtcdBackend, samples(299, 299, 100*ms, 100*ms), nil, Inconclusive, false},
		{"backend, 300 slow", EtcdBackend, samples(300, 300, 100*ms, 100*ms), nil, Fail, false},

		// The 99th percentile flips with the share of slow samples: 1%
		// of 1000 is 10.
		{"WAL, 1000 with 10 over", EtcdWAL, samples(1000, 10, ms, 40*ms), nil, Pass, false},
		{"WAL, 1000 with 11 over", EtcdWAL, samples(1000, 11, ms, 40*ms), nil, Fail, false},
		// ... and with the tail's figure at the threshold.
		{"WAL, p99 9.8 ms", EtcdWAL, samples(1000, 20, ms, 9800*us), nil, Pass, true},
		{"WAL, p99 10.2 ms", EtcdWAL, samples(1000, 20, ms, 10200*us), nil, Fail, true},
		{"backend, p99 24.5 ms", EtcdBackend, samples(1000, 20, ms, 24500*us), nil, Pass, true},
		{"backend, p99 25.5 ms", EtcdBackend, samples(1000, 20, ms, 25500*us), nil, Fail, true},

		// The margin: a quarter of the threshold either side.
		{"WAL, 7 ms: outside", EtcdWAL, samples(1000, 20, ms, 7*ms), nil, Pass, false},
		{"WAL, 8 ms: inside", EtcdWAL, samples(1000, 20, ms, 8*ms), nil, Pass, true},
		{"WAL, 12 ms: inside", EtcdWAL, samples(1000, 20, ms, 12*ms), nil, Fail, true},
		{"WAL, 13 ms: outside", EtcdWAL, samples(1000, 20, ms, 13*ms), nil, Fail, false},
		{"backend, 18 ms: outside", EtcdBackend, samples(1000, 20, ms, 18*ms), nil, Pass, false},
		{"backend, 19 ms: inside", EtcdBackend, samples(1000, 20, ms, 19*ms), nil, Pass, true},
		{"backend, 31 ms: inside", EtcdBackend, samples(1000, 20, ms, 31*ms), nil, Fail, true},
		{"backend, 32 ms: outside", EtcdBackend, samples(1000, 20, ms, 32*ms), nil, Fail, false},
		// A WAL figure in the backend's margin is no WAL borderline.
		{"WAL, 4 ms", EtcdWAL, samples(1000, 20, ms, 4*ms), nil, Pass, false},

		// Repeats on both sides of the threshold: borderline, the verdict
		// the merged samples give.
		{"WAL, repeats 5 and 12 ms", EtcdWAL, samples(1000, 20, ms, 5*ms), []float64{0.005, 0.012}, Pass, true},
		{"WAL, repeats 11 and 30 ms", EtcdWAL, samples(1000, 20, ms, 30*ms), []float64{0.011, 0.030}, Fail, false},
		{"WAL, repeats 3 and 9 ms", EtcdWAL, samples(1000, 20, ms, 5*ms), []float64{0.003, 0.009}, Pass, false},
		{"WAL, one repeat over", EtcdWAL, samples(1000, 20, ms, 5*ms), []float64{0.012}, Pass, false},
		{"backend, repeats 20 and 40 ms", EtcdBackend, samples(1000, 20, ms, 40*ms), []float64{0.020, 0.040}, Fail, true},
		{"inconclusive stays so whatever the repeats", EtcdWAL, samples(100, 0, ms, ms), []float64{0.005, 0.012}, Inconclusive, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := c.rule.Judge(c.h, c.repeats)
			require.Equal(t, c.verdict, v.Verdict, v.Reason)
			require.Equal(t, c.borderline, v.Borderline, v.Reason)
			require.Equal(t, c.verdict == Pass, v.Pass)
			require.Equal(t, c.rule.Stream, v.Stream)
			require.Equal(t, c.rule.Threshold.Seconds(), v.Threshold)
			require.Equal(t, c.rule.Margin.Seconds(), v.Margin)
			require.Equal(t, uint64(MinSamples), v.MinSamples)
			if c.h != nil {
				require.Equal(t, c.h.Count(), v.Samples)
			}
			n := fmt.Sprint(v.Samples)
			switch c.verdict {
			case Inconclusive:
				require.Zero(t, v.Measured, "no figure without a verdict")
				require.Regexp(t, `^INCONCLUSIVE: only `+n+` `+c.rule.Noun+`; a 99th percentile against etcd's \d+ ms needs at least 300`, v.Reason)
			case Pass:
				require.Less(t, v.Measured, v.Threshold)
				require.Regexp(t, `^PASS: 99th percentile of `+n+` `+c.rule.Noun+` is [0-9.]+ ms, under etcd's \d+ ms`, v.Reason)
			case Fail:
				require.GreaterOrEqual(t, v.Measured, v.Threshold)
				require.Regexp(t, `^FAIL: 99th percentile of `+n+` `+c.rule.Noun+` is [0-9.]+ ms, not under etcd's \d+ ms`, v.Reason)
			}
			if c.verdict != Inconclusive {
				require.Equal(t, c.h.Quantile(0.99)/1e9, v.Measured, "the 99th percentile of every sample")
			}
			require.Equal(t, c.borderline, strings.Contains(v.Reason, "(borderline: "), v.Reason)
		})
	}
}

// TestCombineRules: the check's verdict from its streams' — a
// conclusive failure decides, then any inconclusive stream, then pass;
// borderline when any stream is; the WAL's figure heads it.
func TestCombineRules(t *testing.T) {
	ms := time.Millisecond
	walPass := EtcdWAL.Judge(samples(1000, 0, ms, ms), nil)
	walBorder := EtcdWAL.Judge(samples(1000, 20, ms, 9*ms), nil)
	walFail := EtcdWAL.Judge(samples(1000, 20, ms, 30*ms), nil)
	walInc := EtcdWAL.Judge(samples(10, 0, ms, ms), nil)
	bePass := EtcdBackend.Judge(samples(1000, 0, ms, ms), nil)
	beFail := EtcdBackend.Judge(samples(1000, 20, ms, 60*ms), nil)
	beInc := EtcdBackend.Judge(samples(30, 30, 60*ms, 60*ms), nil)
	for _, c := range []struct {
		name       string
		streams    []StreamVerdict
		verdict    string
		borderline bool
		names      []string // the streams the reason names
	}{
		{"both pass", []StreamVerdict{walPass, bePass}, Pass, false, []string{"WAL", "backend"}},
		{"WAL alone passes", []StreamVerdict{walPass}, Pass, false, []string{"WAL"}},
		{"a borderline pass", []StreamVerdict{walBorder, bePass}, Pass, true, []string{"WAL", "backend"}},
		{"backend fails", []StreamVerdict{walPass, beFail}, Fail, false, []string{"backend"}},
		{"WAL fails", []StreamVerdict{walFail, bePass}, Fail, false, []string{"WAL"}},
		{"both fail", []StreamVerdict{walFail, beFail}, Fail, false, []string{"WAL", "backend"}},
		{"a conclusive WAL failure beside too few commits", []StreamVerdict{walFail, beInc}, Fail, false, []string{"WAL"}},
		{"a pass beside too few commits", []StreamVerdict{walPass, beInc}, Inconclusive, false, []string{"backend"}},
		{"too few of both", []StreamVerdict{walInc, beInc}, Inconclusive, false, []string{"WAL", "backend"}},
		{"a failure beside a borderline pass", []StreamVerdict{walBorder, beFail}, Fail, true, []string{"backend"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			labels := []string{"WAL", "backend"}[:len(c.streams)]
			v := Combine("etcd", labels, c.streams)
			require.Equal(t, c.verdict, v.Verdict, v.Reason)
			require.Equal(t, c.verdict == Pass, v.Pass)
			require.Equal(t, c.borderline, v.Borderline)
			require.Equal(t, c.streams, v.Streams)
			require.Equal(t, c.streams[0].Measured, v.Measured, "the WAL's figure heads the verdict")
			require.Equal(t, c.streams[0].Samples, v.Samples)
			require.True(t, strings.HasPrefix(v.Reason, strings.ToUpper(c.verdict)+": "), v.Reason)
			for _, l := range labels {
				require.Equal(t, slices.Contains(c.names, l), strings.Contains(v.Reason, l+": "), "%s in %q", l, v.Reason)
			}
		})
	}
}
