package check

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

func TestEtcdSpecIsEtcdsFioJob(t *testing.T) {
	c, ok := Lookup("etcd")
	require.True(t, ok)
	s := c.Spec(c.DefaultDuration)
	require.NoError(t, s.Validate())
	require.Equal(t, 0, s.ReadPct, "writes only")
	require.Equal(t, 0, s.RandomPct, "sequential")
	require.Equal(t, 1, s.QueueDepth, "one outstanding")
	require.Equal(t, 1, s.Workers)
	n, datasync := s.FlushEvery()
	require.Equal(t, 1, n, "a flush after every write")
	require.True(t, datasync, "fdatasync, as etcd's WAL")
	require.Equal(t, int64(22<<20), s.RegionBytes, "etcd's --size=22m")
}

func TestEtcdJudge(t *testing.T) {
	c, _ := Lookup("etcd")
	res := func(p99 time.Duration) *result.Result {
		h := result.NewHistogram()
		for i := 0; i < 980; i++ {
			h.Record(int64(time.Millisecond))
		}
		for i := 0; i < 20; i++ { // 2%: the p99 falls among them {
			h.Record(int64(p99))
		}
		r := &result.Result{Histogram: result.Histograms{Read: result.NewHistogram(), Write: result.NewHistogram(), Sync: h}}
		r.Summary.SetFromHistograms(r.Histogram)
		return r
	}
	v := c.Judge(res(2 * time.Millisecond))
	require.True(t, v.Pass, v.Reason)
	require.Equal(t, uint64(1000), v.Samples)
	require.Contains(t, v.Reason, "PASS")

	v = c.Judge(res(25 * time.Millisecond))
	require.False(t, v.Pass, v.Reason)
	require.InDelta(t, 0.025, v.Measured, 0.025*0.01)
	require.Contains(t, v.Reason, "FAIL: 99th percentile of 1000 fdatasyncs is 2")
	require.Contains(t, v.Reason, "not under etcd's 10 ms")

	v = c.Judge(&result.Result{})
	require.False(t, v.Pass)
	require.Zero(t, v.Samples)
	_, ok := Lookup("postgres")
	require.False(t, ok)
}
