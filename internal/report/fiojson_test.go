package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testjson"
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
	v := func(o fioObject, k string) float64 { return float64(o.get(k).(fioFloat)) }
	require.InDelta(t, 10, v(ns, "2"), 1e-9)
	require.InDelta(t, 10, v(ns, "4"), 1e-9)
	require.InDelta(t, 10, v(ns, "1000"), 1e-9)
	require.InDelta(t, 20, v(us, "2"), 1e-9)
	require.InDelta(t, 10, v(us, "4"), 1e-9)
	require.InDelta(t, 10, v(us, "1000"), 1e-9)
	require.InDelta(t, 20, v(ms, "2"), 1e-9)
	require.InDelta(t, 10, v(ms, ">=2000"), 1e-9)
	// fio writes a share under 0.01% of a range that is not empty as 0.01.
	for i := 0; i < 100_000; i++ {
		h.Record(5000)
	}
	ns, _, _ = fioLatencyMaps(h)
	require.Equal(t, 0.01, v(ns, "2"))
	require.Zero(t, v(ns, "10"))
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

// jsonKeys returns the keys of the object at path in data, in the order
// the document has them.
func jsonKeys(t *testing.T, data []byte, path ...string) []string {
	t.Helper()
	keys, err := testjson.Keys(data, path...)
	require.NoError(t, err)
	return keys
}

// TestFioJSONAsFioWritesItLocally: keys in fio 3.33's order (jobs, the
// percentiles 1, 5, 10 …, bins by value, the latency and depth ranges), no
// hostname for a run on this host (fio's client/server output has one,
// and fio-plot reads a file with one as such), fio's depth figures from
// the result's counts and its latency_target defaults, and disk_util from
// the kernel's counters.
func TestFioJSONAsFioWritesItLocally(t *testing.T) {
	r := readResult()
	r.Merged = nil
	r.IODepth = &result.Depth{Level: [7]uint64{1, 2, 4, 8, 16, 99_969, 0}, Submit: [7]uint64{0, 100_000}, Complete: [7]uint64{0, 99_000, 500}}
	r.DiskUtil = []result.DiskUtil{{Name: "loop3", ReadIOs: 86_000, ReadMerges: 2, ReadTicksMs: 29_000, InQueueMs: 29_500, IOTicksMs: 15_000, WindowMs: 30_000}}
	var b bytes.Buffer
	require.NoError(t, WriteFioJSON(&b, []*result.Result{r}))
	data := b.Bytes()
	require.Equal(t, []string{"fio version", "timestamp", "timestamp_ms", "time", "global options", "jobs", "disk_util"}, jsonKeys(t, data))
	require.Equal(t, []string{"jobname", "groupid", "error", "eta", "elapsed", "job options", "read", "write", "trim", "sync",
		"job_runtime", "usr_cpu", "sys_cpu", "ctx", "majf", "minf", "iodepth_level", "iodepth_submit", "iodepth_complete",
		"latency_ns", "latency_us", "latency_ms", "latency_depth", "latency_target", "latency_percentile", "latency_window"},
		jsonKeys(t, data, "jobs", "0"), "a local run: no hostname")
	var pct []string
	for _, p := range fioPercentiles {
		pct = append(pct, strconv.FormatFloat(p, 'f', 6, 64))
	}
	require.Equal(t, pct, jsonKeys(t, data, "jobs", "0", "read", "clat_ns", "percentile"))
	bins := jsonKeys(t, data, "jobs", "0", "read", "clat_ns", "bins")
	require.NotEmpty(t, bins)
	for i := 1; i < len(bins); i++ {
		a, _ := strconv.ParseUint(bins[i-1], 10, 64)
		c, _ := strconv.ParseUint(bins[i], 10, 64)
		require.Less(t, a, c, "bins in increasing order")
	}
	require.Equal(t, []string{"2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"}, jsonKeys(t, data, "jobs", "0", "latency_us"))
	require.Equal(t, []string{"2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000"}, jsonKeys(t, data, "jobs", "0", "latency_ms"))
	require.Equal(t, []string{"1", "2", "4", "8", "16", "32", ">=64"}, jsonKeys(t, data, "jobs", "0", "iodepth_level"))
	require.Equal(t, []string{"0", "4", "8", "16", "32", "64", ">=64"}, jsonKeys(t, data, "jobs", "0", "iodepth_submit"))
	require.Contains(t, b.String(), `">=64"`, "not escaped")

	var doc struct {
		Jobs []struct {
			Level, Submit, Complete map[string]float64
			Depth                   int     `json:"latency_depth"`
			Target                  int64   `json:"latency_target"`
			Percentile              float64 `json:"latency_percentile"`
			Window                  int64   `json:"latency_window"`
		} `json:"jobs"`
		Disks []map[string]any `json:"disk_util"`
	}
	data = bytes.ReplaceAll(data, []byte(`"iodepth_level"`), []byte(`"level"`))
	data = bytes.ReplaceAll(data, []byte(`"iodepth_submit"`), []byte(`"submit"`))
	data = bytes.ReplaceAll(data, []byte(`"iodepth_complete"`), []byte(`"complete"`))
	require.NoError(t, json.Unmarshal(data, &doc))
	j := doc.Jobs[0]
	require.Equal(t, 0.1, j.Level["1"], "fio writes a share under 0.1% that is not empty as 0.1")
	require.InDelta(t, 99.969, j.Level["32"], 1e-9)
	require.Equal(t, 100.0, j.Submit["4"])
	require.InDelta(t, 100*99_000/99_500.0, j.Complete["4"], 1e-6)
	require.InDelta(t, 100*500/99_500.0, j.Complete["8"], 1e-6)
	require.Equal(t, r.Workload.QueueDepth, j.Depth, "fio's latency_depth is the job's iodepth without latency_target")
	require.Zero(t, j.Target)
	require.Equal(t, 100.0, j.Percentile)
	require.Zero(t, j.Window)
	require.Len(t, doc.Disks, 1)
	require.Equal(t, []string{"name", "read_ios", "write_ios", "read_merges", "write_merges", "read_ticks", "write_ticks", "in_queue", "util"},
		jsonKeys(t, b.Bytes(), "disk_util", "0"))
	require.Equal(t, "loop3", doc.Disks[0]["name"])
	require.EqualValues(t, 2, doc.Disks[0]["read_merges"])
	require.EqualValues(t, 50, doc.Disks[0]["util"])

	// A merged result of two hosts is fio's client/server shape: each job
	// names its hosts.
	m := readResult()
	m.Merged = &result.MergeInfo{Runs: 2, Hosts: []string{"a", "b"}}
	b.Reset()
	require.NoError(t, WriteFioJSON(&b, []*result.Result{m}))
	require.Contains(t, jsonKeys(t, b.Bytes(), "jobs", "0"), "hostname")
}
