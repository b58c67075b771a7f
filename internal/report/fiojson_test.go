package report

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

type fioTestDir struct {
	TotalIOs uint64 `json:"total_ios"`
	Clat     struct {
		N    uint64            `json:"N"`
		Bins map[string]uint64 `json:"bins"`
		Pct  map[string]uint64 `json:"percentile"`
	} `json:"clat_ns"`
}

// TestFioJSONJobPerResult: a suite is a job per result in order; each
// direction's bins hold exactly its ops; the latency_* maps share out
// 100% of the I/Os; an empty direction has no bins (fio leaves them out).
func TestFioJSONJobPerResult(t *testing.T) {
	rs := []*result.Result{mixedResult(), readResult(), emptyResult()}
	var b bytes.Buffer
	require.NoError(t, WriteFioJSON(&b, rs))
	var doc struct {
		Jobs []struct {
			JobName string             `json:"jobname"`
			GroupID int                `json:"groupid"`
			Opts    map[string]string  `json:"job options"`
			Read    fioTestDir         `json:"read"`
			Write   fioTestDir         `json:"write"`
			Ns      map[string]float64 `json:"latency_ns"`
			Us      map[string]float64 `json:"latency_us"`
			Ms      map[string]float64 `json:"latency_ms"`
		} `json:"jobs"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &doc))
	require.Len(t, doc.Jobs, 3)
	for i, j := range doc.Jobs {
		r := rs[i]
		require.Equal(t, i, j.GroupID)
		require.Equal(t, result.PointOf(r).Name, j.JobName)
		require.Equal(t, strconv.Itoa(r.Workload.QueueDepth), j.Opts["iodepth"])
		for _, c := range []struct {
			d   fioTestDir
			ops uint64
		}{{j.Read, r.Summary.ReadOps}, {j.Write, r.Summary.WriteOps}} {
			require.Equal(t, c.ops, c.d.TotalIOs)
			require.Equal(t, c.ops, c.d.Clat.N)
			var n uint64
			for _, v := range c.d.Clat.Bins {
				n += v
			}
			require.Equal(t, c.ops, n)
			if c.ops == 0 {
				require.Nil(t, c.d.Clat.Bins)
				require.Nil(t, c.d.Clat.Pct)
			} else {
				require.Len(t, c.d.Clat.Pct, len(fioPercentiles))
			}
		}
		var share float64
		for _, m := range []map[string]float64{j.Ns, j.Us, j.Ms} {
			for _, v := range m {
				share += v
			}
		}
		if r.Summary.Ops > 0 {
			require.InDelta(t, 100, share, 1e-6)
		} else {
			require.Zero(t, share)
		}
	}
	require.Equal(t, "randrw", fioRW(67, 100))
	require.Equal(t, "rw", fioRW(50, 0))
	require.Equal(t, "read", fioRW(100, 0))
	require.Equal(t, "randwrite", fioRW(0, 25))
}

// TestFioLatencyKeys: fio's ranges, a key being the exclusive upper bound
// in its unit.
func TestFioLatencyKeys(t *testing.T) {
	h := result.NewHistogram()
	for _, ns := range []int64{1, 3, 999, 1000, 1999, 2500, 900_000, 1_100_000, 1_500_000, 3_000_000_000} {
		h.Record(ns)
	}
	ns, us, ms := fioLatencyMaps(h)
	require.InDelta(t, 10, float64(ns["2"]), 1e-9)
	require.InDelta(t, 10, float64(ns["4"]), 1e-9)
	require.InDelta(t, 10, float64(ns["1000"]), 1e-9)
	require.InDelta(t, 20, float64(us["2"]), 1e-9)
	require.InDelta(t, 10, float64(us["4"]), 1e-9)
	require.InDelta(t, 10, float64(us["1000"]), 1e-9)
	require.InDelta(t, 20, float64(ms["2"]), 1e-9)
	require.InDelta(t, 10, float64(ms[">=2000"]), 1e-9)
}
