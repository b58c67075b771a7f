package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// fio's json+ output (fio 3.x, --output-format=json+), filled from
// ioprobe's own measurements so that the tools that read fio's JSON
// (fio-plot, fio_jsonplus_clat2csv, …) read ioprobe's results. Each result
// is one fio job; docs/output.md maps every field to what fills it and says
// which are zero because ioprobe does not measure them.

// fioFloat is a JSON number written as fio writes its floats ("%f"), so
// that a zero stays a float for readers that check types.
type fioFloat float64

// MarshalJSON writes f with six decimals, as fio does.
func (f fioFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		v = 0
	}
	return []byte(strconv.FormatFloat(v, 'f', 6, 64)), nil
}

type fioDoc struct {
	FioVersion    string            `json:"fio version"`
	Timestamp     int64             `json:"timestamp"`
	TimestampMs   int64             `json:"timestamp_ms"`
	Time          string            `json:"time"`
	GlobalOptions map[string]string `json:"global options"`
	Jobs          []fioJob          `json:"jobs"`
}

type fioJob struct {
	JobName    string              `json:"jobname"`
	GroupID    int                 `json:"groupid"`
	Hostname   string              `json:"hostname"`
	Error      int                 `json:"error"`
	Elapsed    int64               `json:"elapsed"`
	JobOptions map[string]string   `json:"job options"`
	Read       fioDir              `json:"read"`
	Write      fioDir              `json:"write"`
	Trim       fioDir              `json:"trim"`
	Sync       fioSync             `json:"sync"`
	JobRuntime int64               `json:"job_runtime"`
	UsrCPU     fioFloat            `json:"usr_cpu"`
	SysCPU     fioFloat            `json:"sys_cpu"`
	Ctx        int64               `json:"ctx"`
	Majf       int64               `json:"majf"`
	Minf       int64               `json:"minf"`
	LatencyNs  map[string]fioFloat `json:"latency_ns"`
	LatencyUs  map[string]fioFloat `json:"latency_us"`
	LatencyMs  map[string]fioFloat `json:"latency_ms"`
}

type fioDir struct {
	IOBytes     uint64   `json:"io_bytes"`
	IOKBytes    uint64   `json:"io_kbytes"`
	BWBytes     uint64   `json:"bw_bytes"`
	BW          uint64   `json:"bw"`
	IOPS        fioFloat `json:"iops"`
	Runtime     int64    `json:"runtime"`
	TotalIOs    uint64   `json:"total_ios"`
	ShortIOs    uint64   `json:"short_ios"`
	DropIOs     uint64   `json:"drop_ios"`
	Slat        fioLat   `json:"slat_ns"`
	Clat        fioLat   `json:"clat_ns"`
	Lat         fioLat   `json:"lat_ns"`
	BWMin       uint64   `json:"bw_min"`
	BWMax       uint64   `json:"bw_max"`
	BWAgg       fioFloat `json:"bw_agg"`
	BWMean      fioFloat `json:"bw_mean"`
	BWDev       fioFloat `json:"bw_dev"`
	BWSamples   int      `json:"bw_samples"`
	IOPSMin     uint64   `json:"iops_min"`
	IOPSMax     uint64   `json:"iops_max"`
	IOPSMean    fioFloat `json:"iops_mean"`
	IOPSStddev  fioFloat `json:"iops_stddev"`
	IOPSSamples int      `json:"iops_samples"`
}

type fioSync struct {
	TotalIOs uint64 `json:"total_ios"`
	Lat      fioLat `json:"lat_ns"`
}

// fioLat is one latency distribution in ns. Percentile and Bins are
// present only when there are values (fio leaves them out otherwise, and
// fio_jsonplus_clat2csv cannot read empty bins).
type fioLat struct {
	Min        uint64            `json:"min"`
	Max        uint64            `json:"max"`
	Mean       fioFloat          `json:"mean"`
	Stddev     fioFloat          `json:"stddev"`
	N          uint64            `json:"N"`
	Percentile map[string]uint64 `json:"percentile,omitempty"`
	Bins       map[string]uint64 `json:"bins,omitempty"`
}

// fioPercentiles is fio's default percentile_list.
var fioPercentiles = []float64{1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99}

// WriteFioJSON writes results as one fio json+ document, a job per result.
func WriteFioJSON(w io.Writer, results []*result.Result) error {
	doc := fioDoc{GlobalOptions: map[string]string{"direct": "1"}, Jobs: []fioJob{}}
	version := ""
	for i, r := range results {
		if i == 0 {
			version = r.Version
			doc.Timestamp = r.StartedAt.Unix()
			doc.TimestampMs = r.StartedAt.UnixMilli()
			doc.Time = r.StartedAt.UTC().Format("Mon Jan _2 15:04:05 2006")
		}
		doc.Jobs = append(doc.Jobs, fioJobOf(r, i))
		if r.Workload.Buffered {
			// fio's default, direct=0: said per job (fioOptions) and
			// not claimed for all of them.
			delete(doc.GlobalOptions, "direct")
		}
	}
	doc.FioVersion = "ioprobe-" + strings.TrimPrefix(version, "ioprobe-")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

func fioJobOf(r *result.Result, group int) fioJob {
	s := &r.Summary
	runtimeMs := int64(math.Round(s.ElapsedSeconds * 1000))
	j := fioJob{
		JobName:    result.PointOf(r).Name,
		GroupID:    group,
		Hostname:   r.Host.Hostname,
		Elapsed:    int64(math.Round(s.ElapsedSeconds + r.Workload.RampSeconds)),
		JobOptions: fioJobOptions(r),
		JobRuntime: runtimeMs,
		Trim:       fioDir{},
		Sync:       fioSyncOf(r.Histogram.Sync),
	}
	if r.Merged != nil && len(r.Merged.Hosts) > 0 {
		j.Hostname = strings.Join(r.Merged.Hosts, ",")
	}
	if s.Errors > 0 {
		j.Error = 5 // EIO: fio's job error is an errno
	}
	single := s.ReadOps == 0 || s.WriteOps == 0
	j.Read = fioDirOf(r, r.Histogram.Read, s.ReadBytes, s.ReadIOPS, runtimeMs, single && s.ReadOps > 0)
	j.Write = fioDirOf(r, r.Histogram.Write, s.WriteBytes, s.WriteIOPS, runtimeMs, single && s.WriteOps > 0)
	if s.ElapsedSeconds > 0 {
		j.UsrCPU = fioFloat(100 * s.CPU.ProcessUserSeconds / s.ElapsedSeconds)
		j.SysCPU = fioFloat(100 * s.CPU.ProcessSystemSeconds / s.ElapsedSeconds)
	}
	j.LatencyNs, j.LatencyUs, j.LatencyMs = fioLatencyMaps(r.Histogram.Combined())
	return j
}

// fioJobOptions describes the access specification in fio's job options
// (strings, as fio prints them).
func fioJobOptions(r *result.Result) map[string]string {
	w := r.Workload
	paths := make([]string, 0, len(r.Targets))
	for _, t := range r.Targets {
		paths = append(paths, t.Path)
	}
	o := map[string]string{
		"name":     result.PointOf(r).Name,
		"filename": strings.Join(paths, ":"),
		"rw":       fioRW(w.ReadPct, w.RandomPct),
		"iodepth":  strconv.Itoa(w.QueueDepth),
		"numjobs":  strconv.Itoa(w.Workers),
		"runtime":  strconv.FormatFloat(w.DurationSeconds, 'f', -1, 64),
		"ioengine": fioEngine(w.Engine),
	}
	if w.Loops > 0 {
		// A job without time_based, as fio prints one: no runtime
		// unless it capped the job (ioprobe's uncapped cap is a year).
		if w.DurationSeconds >= workload.MaxDuration.Seconds() {
			delete(o, "runtime")
		}
		if w.IOBytes > 0 {
			o["io_size"] = strconv.FormatInt(w.IOBytes, 10)
		}
		if w.IOCount > 0 {
			o["number_ios"] = strconv.FormatInt(w.IOCount, 10)
		}
		if w.Loops > 1 {
			o["loops"] = strconv.Itoa(w.Loops)
		}
	}
	if w.RampSeconds > 0 {
		o["ramp_time"] = strconv.FormatFloat(w.RampSeconds, 'f', -1, 64)
	}
	if w.RegionBytes > 0 {
		o["size"] = strconv.FormatInt(w.RegionBytes, 10)
	}
	if w.ReadPct > 0 && w.ReadPct < 100 {
		o["rwmixread"] = strconv.Itoa(w.ReadPct)
	}
	if w.RandomPct > 0 && w.RandomPct < 100 {
		o["percentage_random"] = strconv.Itoa(w.RandomPct)
	}
	if w.RateIOPS > 0 {
		o["rate_iops"] = strconv.Itoa(w.RateIOPS)
	}
	if w.Buffered {
		o["direct"] = "0"
		if w.KeepCache {
			o["invalidate"] = "0"
		}
	}
	if w.RateReadBPS > 0 || w.RateWriteBPS > 0 {
		// fio's rate= per direction (bytes per second of each job clone).
		per := int64(max(w.Workers, 1))
		o["rate"] = strconv.FormatInt(w.RateReadBPS/per, 10) + "," + strconv.FormatInt(w.RateWriteBPS/per, 10)
		if w.RateProcess != "" {
			o["rate_process"] = w.RateProcess
		}
	}
	if w.RandomPct > 0 && !w.RandomMap {
		o["norandommap"] = "1"
	}
	if w.Fsync > 0 {
		o["fsync"] = strconv.Itoa(w.Fsync)
	}
	if w.Fdatasync > 0 {
		o["fdatasync"] = strconv.Itoa(w.Fdatasync)
	}
	if w.Sync != "" {
		o["sync"] = w.Sync
	}
	if len(w.BlockSizes) > 0 {
		o["bs"] = strconv.FormatInt(w.BlockSizes[0].Bytes, 10)
	}
	if len(w.BlockSizes) > 1 {
		parts := make([]string, len(w.BlockSizes))
		for i, b := range w.BlockSizes {
			parts[i] = fmt.Sprintf("%d/%d", b.Bytes, b.Weight)
		}
		o["bssplit"] = strings.Join(parts, ":")
	}
	return o
}

// fioRW is fio's rw= for a % read and % random (a partly random mix is
// the random form with percentage_random).
func fioRW(readPct, randomPct int) string {
	rnd := randomPct > 0
	switch {
	case readPct >= 100 && rnd:
		return "randread"
	case readPct >= 100:
		return "read"
	case readPct <= 0 && rnd:
		return "randwrite"
	case readPct <= 0:
		return "write"
	case rnd:
		return "randrw"
	default:
		return "rw"
	}
}

// fioEngine is fio's ioengine for the engine that ran.
func fioEngine(e workload.EngineName) string {
	switch e {
	case workload.EngineURing:
		return "io_uring"
	case workload.EngineSync:
		return "psync"
	}
	return string(e)
}

// fioDirOf fills one direction. Interval statistics (iops_*, bw_*) come
// from the run's intervals when this direction is the only one with I/O:
// ioprobe's intervals do not split reads from writes.
func fioDirOf(r *result.Result, h *result.Histogram, bytes uint64, iops float64, runtimeMs int64, intervals bool) fioDir {
	d := fioDir{}
	if h == nil || h.Count() == 0 {
		return d
	}
	elapsed := r.Summary.ElapsedSeconds
	d.IOBytes, d.IOKBytes = bytes, bytes/1024
	if elapsed > 0 {
		d.BWBytes = uint64(math.Round(float64(bytes) / elapsed))
	}
	d.BW = d.BWBytes / 1024
	d.IOPS = fioFloat(iops)
	d.Runtime = runtimeMs
	d.TotalIOs = h.Count()
	d.Clat = fioLatOf(h, true)
	d.Lat = fioLatOf(h, false)
	if intervals && len(r.Intervals) > 0 {
		var iv, bw []float64
		for _, in := range r.Intervals {
			iv = append(iv, in.IOPS)
			bw = append(bw, in.BytesPerSecond/1024)
		}
		d.IOPSMin, d.IOPSMax, d.IOPSMean, d.IOPSStddev = stats(iv)
		d.BWMin, d.BWMax, d.BWMean, d.BWDev = stats(bw)
		d.IOPSSamples, d.BWSamples = len(iv), len(bw)
		d.BWAgg = 100
	}
	return d
}

// fioSyncOf is fio's sync section from the flushes' histogram: their
// count and latency, with json+'s percentiles and bins (zero when the
// workload did not flush).
func fioSyncOf(h *result.Histogram) fioSync {
	if h == nil || h.Count() == 0 {
		return fioSync{}
	}
	return fioSync{TotalIOs: h.Count(), Lat: fioLatOf(h, true)}
}

// stats is min, max, mean and sample standard deviation, as fio reports
// its per-interval samples.
func stats(v []float64) (lo, hi uint64, mean, dev fioFloat) {
	mn, mx, sum := math.Inf(1), math.Inf(-1), 0.0
	for _, x := range v {
		mn, mx, sum = math.Min(mn, x), math.Max(mx, x), sum+x
	}
	m := sum / float64(len(v))
	var acc float64
	for _, x := range v {
		acc += (x - m) * (x - m)
	}
	if len(v) > 1 {
		dev = fioFloat(math.Sqrt(acc / float64(len(v)-1)))
	}
	return uint64(math.Round(mn)), uint64(math.Round(mx)), fioFloat(m), dev
}

// fioLatOf summarises h in ns; with plus it adds the percentiles and the
// json+ bins (a bin per non-empty histogram bucket, keyed by its midpoint).
func fioLatOf(h *result.Histogram, plus bool) fioLat {
	l := fioLat{Min: h.Min(), Max: h.Max(), Mean: fioFloat(h.Mean()), Stddev: fioFloat(h.Stddev()), N: h.Count()}
	if !plus {
		return l
	}
	l.Percentile = map[string]uint64{}
	for _, p := range fioPercentiles {
		l.Percentile[strconv.FormatFloat(p, 'f', 6, 64)] = uint64(math.Round(h.Quantile(p / 100)))
	}
	l.Bins = map[string]uint64{}
	h.Buckets(func(lo, hi, c uint64) {
		l.Bins[strconv.FormatUint(fioBinValue(lo, hi), 10)] += c
	})
	return l
}

// fioBinValue is the ns value a bucket is reported under: its midpoint.
func fioBinValue(lo, hi uint64) uint64 { return lo + (hi-lo-1)/2 }

// fio's latency_ns/us/ms maps: the share (%) of all I/Os whose latency
// falls below each key and at or above the previous one, in that unit.
var (
	fioLatKeys   = []uint64{2, 4, 10, 20, 50, 100, 250, 500, 750, 1000}
	fioLatMsKeys = append(append([]uint64{}, fioLatKeys...), 2000)
)

func fioLatencyMaps(h *result.Histogram) (ns, us, ms map[string]fioFloat) {
	ns, us, ms = map[string]fioFloat{}, map[string]fioFloat{}, map[string]fioFloat{}
	for _, k := range fioLatKeys {
		ns[strconv.FormatUint(k, 10)], us[strconv.FormatUint(k, 10)] = 0, 0
	}
	for _, k := range fioLatMsKeys {
		ms[strconv.FormatUint(k, 10)] = 0
	}
	ms[">=2000"] = 0
	total := float64(h.Count())
	if total == 0 {
		return ns, us, ms
	}
	h.Buckets(func(lo, hi, c uint64) {
		v := fioBinValue(lo, hi)
		share := fioFloat(100 * float64(c) / total)
		switch {
		case v < 1000:
			ns[fioLatKey(v, fioLatKeys)] += share
		case v < 1000_000:
			us[fioLatKey(v/1000, fioLatKeys)] += share
		default:
			k := fioLatKey(v/1000_000, fioLatMsKeys)
			if k == "" {
				k = ">=2000"
			}
			ms[k] += share
		}
	})
	return ns, us, ms
}

// fioLatKey is the first key above v ("" when none is).
func fioLatKey(v uint64, keys []uint64) string {
	for _, k := range keys {
		if v < k {
			return strconv.FormatUint(k, 10)
		}
	}
	return ""
}
