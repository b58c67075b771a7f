package report

import (
	"bytes"
	"encoding/json"
	"math"
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

// TestFioJSONSync: fio's sync section is the flushes — total_ios and
// lat_ns.N are the flush count, the bins hold every flush, percentiles are
// read from the sync histogram — and stays out of the I/O figures (fio's
// latency_* maps count data I/Os only); a run without flushes has a zero
// section with no bins.
func TestFioJSONSync(t *testing.T) {
	r := mixedResult()
	r.Workload.ReadPct, r.Workload.Fdatasync, r.Workload.Sync = 0, 4, "dsync"
	r.Histogram.Sync = histogram(61_111, func(i int) int64 { return 400_000 + int64(i*7919%2_000_000) })
	r.Summary.SetFromHistograms(r.Histogram)
	plain := readResult()
	var b bytes.Buffer
	require.NoError(t, WriteFioJSON(&b, []*result.Result{r, plain}))
	var doc struct {
		Jobs []struct {
			Opts map[string]string `json:"job options"`
			Sync struct {
				TotalIOs uint64 `json:"total_ios"`
				Lat      struct {
					Min, Max, N uint64
					Pct         map[string]uint64 `json:"percentile"`
					Bins        map[string]uint64 `json:"bins"`
				} `json:"lat_ns"`
			} `json:"sync"`
			Ms map[string]float64 `json:"latency_ms"`
		} `json:"jobs"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &doc))
	require.Len(t, doc.Jobs, 2)
	s := doc.Jobs[0].Sync
	require.NotNil(t, r.Summary.Sync)
	require.Equal(t, uint64(61_111), r.Summary.Sync.Ops)
	require.Equal(t, r.Summary.Sync.Ops, s.TotalIOs)
	require.Equal(t, r.Summary.Sync.Ops, s.Lat.N)
	require.Equal(t, r.Histogram.Sync.Min(), s.Lat.Min)
	require.Equal(t, r.Histogram.Sync.Max(), s.Lat.Max)
	var n uint64
	for _, c := range s.Lat.Bins {
		n += c
	}
	require.Equal(t, r.Summary.Sync.Ops, n)
	require.Len(t, s.Lat.Pct, len(fioPercentiles))
	require.Equal(t, uint64(math.Round(r.Histogram.Sync.Quantile(0.99))), s.Lat.Pct["99.000000"])
	require.Equal(t, "4", doc.Jobs[0].Opts["fdatasync"])
	require.Equal(t, "dsync", doc.Jobs[0].Opts["sync"])
	require.NotContains(t, doc.Jobs[0].Opts, "fsync")
	// Flushes of 0.4–2.4 ms would move latency_ms["4"] if they counted.
	var ms float64
	for _, v := range doc.Jobs[0].Ms {
		ms += v
	}
	wantMs := 0.0
	r.Histogram.Combined().Buckets(func(lo, hi, c uint64) {
		if fioBinValue(lo, hi) >= 1_000_000 {
			wantMs += 100 * float64(c) / float64(r.Summary.Ops)
		}
	})
	require.InDelta(t, wantMs, ms, 1e-6)
	p := doc.Jobs[1].Sync
	require.Zero(t, p.TotalIOs)
	require.Zero(t, p.Lat.N)
	require.Nil(t, p.Lat.Bins)
	require.Nil(t, p.Lat.Pct)
	require.NotContains(t, doc.Jobs[1].Opts, "sync")
}

// TestFioJSONBudgetOptions: a run with a stop-after budget carries it in
// fio's job options as fio prints a job without time_based: io_size,
// number_ios, loops, and no runtime unless one capped it.
func TestFioJSONBudgetOptions(t *testing.T) {
	opts := func(r *result.Result) map[string]string {
		var b bytes.Buffer
		require.NoError(t, WriteFioJSON(&b, []*result.Result{r}))
		var doc struct {
			Jobs []struct {
				Opts map[string]string `json:"job options"`
			} `json:"jobs"`
		}
		require.NoError(t, json.Unmarshal(b.Bytes(), &doc))
		return doc.Jobs[0].Opts
	}
	r := readResult()
	require.Contains(t, opts(r), "runtime")
	r.Workload.IOBytes, r.Workload.IOCount, r.Workload.Loops, r.Workload.DurationSeconds = 1<<20, 500, 3, 31536000
	o := opts(r)
	require.NotContains(t, o, "runtime")
	require.Equal(t, "1048576", o["io_size"])
	require.Equal(t, "500", o["number_ios"])
	require.Equal(t, "3", o["loops"])
	r.Workload.DurationSeconds = 30
	require.Equal(t, "30", opts(r)["runtime"])
}
