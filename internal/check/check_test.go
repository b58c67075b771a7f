package check

import (
	"fmt"
	"math"
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

// hist makes n samples: all at base but the slowest 2%, at tail, so the
// 99th percentile falls among them.
func hist(n int, base, tail time.Duration) *result.Histogram {
	h := result.NewHistogram()
	slow := n / 50
	for i := 0; i < n-slow; i++ {
		h.Record(int64(base))
	}
	for i := 0; i < slow; i++ {
		h.Record(int64(tail))
	}
	return h
}

func TestJudge(t *testing.T) {
	ms := time.Millisecond
	v := EtcdWAL.Judge(hist(1000, ms, 2*ms), nil)
	require.Equal(t, Pass, v.Verdict)
	require.True(t, v.Pass)
	require.False(t, v.Borderline)
	require.Equal(t, uint64(1000), v.Samples)
	require.Equal(t, fmt.Sprintf("PASS: 99th percentile of 1000 fdatasyncs is %.3f ms, under etcd's 10 ms", v.Measured*1e3), v.Reason)

	v = EtcdWAL.Judge(hist(1000, ms, 25*ms), nil)
	require.Equal(t, Fail, v.Verdict)
	require.False(t, v.Pass)
	require.False(t, v.Borderline)
	require.InDelta(t, 0.025, v.Measured, 0.025*0.01)
	require.Equal(t, fmt.Sprintf("FAIL: 99th percentile of 1000 fdatasyncs is %.3f ms, not under etcd's 10 ms", v.Measured*1e3), v.Reason)

	// Within the margin on either side: borderline, the verdict kept.
	v = EtcdWAL.Judge(hist(1000, ms, 11*ms), nil)
	require.Equal(t, Fail, v.Verdict)
	require.True(t, v.Borderline)
	require.Equal(t, fmt.Sprintf("FAIL: 99th percentile of 1000 fdatasyncs is %.3f ms, not under etcd's 10 ms (borderline: within the 2.5 ms margin)", v.Measured*1e3), v.Reason)
	v = EtcdWAL.Judge(hist(1000, ms, 9*ms), nil)
	require.Equal(t, Pass, v.Verdict)
	require.True(t, v.Borderline)
	// Outside the margin but the repeats straddle the threshold.
	v = EtcdWAL.Judge(hist(1000, ms, 5*ms), []float64{0.005, 0.012})
	require.Equal(t, Pass, v.Verdict)
	require.True(t, v.Borderline)
	require.Contains(t, v.Reason, "the repeats' figures (5 ms to 12 ms) fall on both sides")
	v = EtcdWAL.Judge(hist(1000, ms, 5*ms), []float64{0.005, 0.006})
	require.False(t, v.Borderline)

	// Below the minimum: no verdict either way, even when every sample
	// is over the threshold.
	for _, tail := range []time.Duration{ms, 50 * ms} {
		v = EtcdWAL.Judge(hist(MinSamples-1, tail, tail), nil)
		require.Equal(t, Inconclusive, v.Verdict)
		require.False(t, v.Pass)
		require.Zero(t, v.Measured)
		require.Equal(t, uint64(MinSamples-1), v.Samples)
		require.Equal(t, "INCONCLUSIVE: only 299 fdatasyncs; a 99th percentile against etcd's 10 ms needs at least 300 (a longer --duration)", v.Reason)
	}
	require.Equal(t, Pass, EtcdWAL.Judge(hist(MinSamples, ms, ms), nil).Verdict)
	v = EtcdBackend.Judge(nil, nil)
	require.Equal(t, Inconclusive, v.Verdict)
}

func TestCombine(t *testing.T) {
	ms := time.Millisecond
	labels := []string{"WAL", "backend"}
	pass := EtcdWAL.Judge(hist(1000, ms, 2*ms), nil)
	fail := EtcdBackend.Judge(hist(1000, ms, 40*ms), nil)
	inc := EtcdBackend.Judge(hist(10, ms, ms), nil)
	border := EtcdBackend.Judge(hist(1000, ms, 24*ms), nil)

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
	walFail := EtcdWAL.Judge(hist(1000, ms, 30*ms), nil)
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
