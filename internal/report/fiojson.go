package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
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

// fioObject is a JSON object whose keys keep the order fio writes them in
// (fio's percentiles 1, 5, 10, …; its options in the order given), where
// a Go map would sort them as strings.
type fioObject []fioKV

type fioKV struct {
	key string
	val any
}

// MarshalJSON writes the keys in order, without escaping '<' and '>'
// (fio writes ">=64").
func (o fioObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	b.WriteByte('{')
	for i, kv := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := enc.Encode(kv.key); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
		b.WriteByte(':')
		if err := enc.Encode(kv.val); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// set replaces key's value, or appends key.
func (o *fioObject) set(key string, val any) {
	for i := range *o {
		if (*o)[i].key == key {
			(*o)[i].val = val
			return
		}
	}
	*o = append(*o, fioKV{key, val})
}

// get returns key's value, or nil.
func (o fioObject) get(key string) any {
	for _, kv := range o {
		if kv.key == key {
			return kv.val
		}
	}
	return nil
}

type fioDoc struct {
	FioVersion    string    `json:"fio version"`
	Timestamp     int64     `json:"timestamp"`
	TimestampMs   int64     `json:"timestamp_ms"`
	Time          string    `json:"time"`
	GlobalOptions fioObject `json:"global options,omitempty"`
	Jobs          []fioJob  `json:"jobs"`
	DiskUtil      []fioDisk `json:"disk_util,omitempty"`
}

// fioJob is one entry of jobs[], its keys in fio 3.33's order
// (stat.c: show_thread_status_json). hostname is fio's client/server
// output only: a local run has none (fio-plot takes it for client output).
type fioJob struct {
	JobName           string    `json:"jobname"`
	GroupID           int       `json:"groupid"`
	Error             int       `json:"error"`
	Eta               int       `json:"eta"`
	Elapsed           int64     `json:"elapsed"`
	JobOptions        fioObject `json:"job options,omitempty"`
	Read              fioDir    `json:"read"`
	Write             fioDir    `json:"write"`
	Trim              fioDir    `json:"trim"`
	Sync              fioSync   `json:"sync"`
	JobRuntime        int64     `json:"job_runtime"`
	UsrCPU            fioFloat  `json:"usr_cpu"`
	SysCPU            fioFloat  `json:"sys_cpu"`
	Ctx               int64     `json:"ctx"`
	Majf              int64     `json:"majf"`
	Minf              int64     `json:"minf"`
	IODepthLevel      fioObject `json:"iodepth_level"`
	IODepthSubmit     fioObject `json:"iodepth_submit"`
	IODepthComplete   fioObject `json:"iodepth_complete"`
	LatencyNs         fioObject `json:"latency_ns"`
	LatencyUs         fioObject `json:"latency_us"`
	LatencyMs         fioObject `json:"latency_ms"`
	LatencyDepth      int       `json:"latency_depth"`
	LatencyTarget     int64     `json:"latency_target"`
	LatencyPercentile fioFloat  `json:"latency_percentile"`
	LatencyWindow     int64     `json:"latency_window"`
	Hostname          string    `json:"hostname,omitempty"`
}

// fioDisk is one entry of disk_util[] (stat.c: json_array_add_disk_util).
type fioDisk struct {
	Name        string   `json:"name"`
	ReadIOs     uint64   `json:"read_ios"`
	WriteIOs    uint64   `json:"write_ios"`
	ReadMerges  uint64   `json:"read_merges"`
	WriteMerges uint64   `json:"write_merges"`
	ReadTicks   uint64   `json:"read_ticks"`
	WriteTicks  uint64   `json:"write_ticks"`
	InQueue     uint64   `json:"in_queue"`
	Util        fioFloat `json:"util"`
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
	Min        uint64    `json:"min"`
	Max        uint64    `json:"max"`
	Mean       fioFloat  `json:"mean"`
	Stddev     fioFloat  `json:"stddev"`
	N          uint64    `json:"N"`
	Percentile fioObject `json:"percentile,omitempty"`
	Bins       fioObject `json:"bins,omitempty"`
}

// fioPercentiles is fio's default percentile_list.
var fioPercentiles = []float64{1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99}

// WriteFioJSON writes results as one fio json+ document. A result is one
// fio job, or, for a point that ran several jobs at once, one per job, and
// for a fio job file's job one per clone unless group_reporting says
// otherwise, as fio reports them (fiojson_jobs.go).
func WriteFioJSON(w io.Writer, results []*result.Result) error {
	doc := fioDoc{GlobalOptions: fioObject{{"direct", "1"}}, Jobs: []fioJob{}}
	version := ""
	group := 0 // fio's groupid: a new one at each stonewall and new_group
	for i, r := range results {
		if i == 0 {
			version = r.Version
			doc.Timestamp = r.StartedAt.Unix()
			doc.TimestampMs = r.StartedAt.UnixMilli()
			doc.Time = r.StartedAt.UTC().Format("Mon Jan _2 15:04:05 2006")
			if g, ok := fioGlobalOptions(r); ok {
				doc.GlobalOptions = g
			}
		}
		var jobs []fioJob
		jobs, group = fioJobsOf(r, group)
		doc.Jobs = append(doc.Jobs, jobs...)
		if _, fio := fioGlobalOptions(r); r.Workload.Buffered && !fio {
			// fio's default, direct=0: said per job (fioJobOptions) and
			// not claimed for all of ioprobe's own.
			doc.GlobalOptions = slices.DeleteFunc(doc.GlobalOptions, func(kv fioKV) bool { return kv.key == "direct" })
		}
		doc.DiskUtil = append(doc.DiskUtil, fioDisksOf(r)...)
	}
	doc.FioVersion = "ioprobe-" + strings.TrimPrefix(version, "ioprobe-")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

// fioJobOf is one jobs[] entry: what fio reports for the members it sums
// (one clone, or a reporting group of several), in the run r.
func fioJobOf(r *result.Result, e *fioEntry) fioJob {
	// Each member's own time (a job or clone that ended on its own, as
	// fio's does, else the run's window): fio's runtime of an entry is its
	// members' longest, its job_runtime their sum (stat.c:
	// sum_thread_stats).
	elapsed, runs := 0.0, 0.0
	for _, m := range e.members {
		elapsed = max(elapsed, m.s.ElapsedSeconds)
		runs += m.s.ElapsedSeconds * float64(m.runs)
	}
	last := e.members[len(e.members)-1]
	j := fioJob{
		JobName: e.members[0].name,
		GroupID: e.members[0].group,
		// fio's elapsed is the whole run's, since fio started, in every
		// job (stat.c: mtime_since_genesis), not the job's own.
		Elapsed:    satInt64(r.Summary.ElapsedSeconds + r.Workload.RampSeconds),
		JobOptions: last.options(r),
		JobRuntime: satInt64(runs * 1000),
		Trim:       fioDir{},
		Sync:       fioSyncOf(e.hist.Sync),
		// fio's defaults without latency_target: the depth it runs at,
		// no target, the 100th percentile, no window (its last member's).
		LatencyDepth:      last.wl.QueueDepth,
		LatencyPercentile: 100,
	}
	// A merged result of several hosts is what fio's client/server
	// output describes: its jobs carry the hosts.
	if r.Merged != nil && len(r.Merged.Hosts) > 0 {
		j.Hostname = strings.Join(r.Merged.Hosts, ",")
	}
	if e.errors > 0 {
		j.Error = 5 // EIO: fio's job error is an errno
	}
	reads, writes := e.hist.Read.Count(), e.hist.Write.Count()
	iops := func(n uint64) float64 {
		if elapsed <= 0 {
			return 0
		}
		return float64(n) / elapsed
	}
	// The run's intervals describe an entry that is the whole run, with
	// I/O in one direction only: ioprobe's intervals are per run, not per
	// job nor per direction.
	single := e.whole && (reads == 0 || writes == 0)
	j.Read = fioDirOf(r, e.hist.Read, e.readBytes, iops(reads), elapsed, single && reads > 0)
	j.Write = fioDirOf(r, e.hist.Write, e.writeBytes, iops(writes), elapsed, single && writes > 0)
	// fio: usr_cpu = the members' user time ÷ their summed runtimes.
	if runs > 0 {
		j.UsrCPU = fioFloat(100 * e.user / runs)
		j.SysCPU = fioFloat(100 * e.system / runs)
	}
	j.IODepthLevel, j.IODepthSubmit, j.IODepthComplete = fioDepthMaps(e.depth)
	j.LatencyNs, j.LatencyUs, j.LatencyMs = fioLatencyMaps(e.hist.Combined())
	return j
}

// fio's depth keys (stat.c: show_thread_status_json): the level's powers
// of two, the submit and complete counts' upper bounds.
var (
	fioLevelKeys = []string{"1", "2", "4", "8", "16", "32", ">=64"}
	fioBatchKeys = []string{"0", "4", "8", "16", "32", "64", ">=64"}
)

// fioDepthMaps are fio's iodepth_level, iodepth_submit and
// iodepth_complete: each bucket's share of its total in %, a share under
// 0.1 of a bucket that is not empty written 0.1 (stat.c: stat_calc_dist).
func fioDepthMaps(d *result.Depth) (level, submit, complete fioObject) {
	if d == nil {
		d = &result.Depth{}
	}
	dist := func(keys []string, counts [result.DepthBuckets]uint64) fioObject {
		var total uint64
		for _, n := range counts {
			total += n
		}
		out := make(fioObject, len(keys))
		for i, k := range keys {
			v := 0.0
			if total > 0 {
				v = 100 * float64(counts[i]) / float64(total)
				if v < 0.1 && counts[i] > 0 {
					v = 0.1
				}
			}
			out[i] = fioKV{k, fioFloat(v)}
		}
		return out
	}
	return dist(fioLevelKeys, d.Level), dist(fioBatchKeys, d.Submit), dist(fioBatchKeys, d.Complete)
}

// fioDisksOf is fio's disk_util[] from the result's devices (none for a
// result without them, such as one made before ioprobe kept them).
func fioDisksOf(r *result.Result) []fioDisk {
	var out []fioDisk
	for i := range r.DiskUtil {
		d := &r.DiskUtil[i]
		out = append(out, fioDisk{Name: d.Name, ReadIOs: d.ReadIOs, WriteIOs: d.WriteIOs, ReadMerges: d.ReadMerges, WriteMerges: d.WriteMerges,
			ReadTicks: d.ReadTicksMs, WriteTicks: d.WriteTicksMs, InQueue: d.InQueueMs, Util: fioFloat(d.Util())})
	}
	return out
}

// fioJobOptions describes an access specification of ioprobe's own in
// fio's job options (strings, as fio prints them).
func fioJobOptions(name string, w result.Workload, targets []result.Target) fioObject {
	o := fioObject{
		{"name", name},
		{"filename", fioFilename(targets)},
		{"rw", fioRW(w.ReadPct, w.RandomPct)},
	}
	if len(w.BlockSizes) > 0 {
		o.set("bs", strconv.FormatInt(w.BlockSizes[0].Bytes, 10))
	}
	if len(w.BlockSizes) > 1 {
		parts := make([]string, len(w.BlockSizes))
		for i, b := range w.BlockSizes {
			parts[i] = fmt.Sprintf("%d/%d", b.Bytes, b.Weight)
		}
		o.set("bssplit", strings.Join(parts, ":"))
	}
	o.set("iodepth", strconv.Itoa(w.QueueDepth))
	o.set("numjobs", strconv.Itoa(w.Workers))
	o.set("ioengine", fioEngine(w.Engine))
	// A job without time_based, as fio prints one: no runtime unless it
	// capped the job (ioprobe's uncapped cap is a year).
	if w.Loops == 0 || w.DurationSeconds < workload.MaxDuration.Seconds() {
		o.set("runtime", strconv.FormatFloat(w.DurationSeconds, 'f', -1, 64))
	}
	if w.Loops > 0 {
		if w.IOBytes > 0 {
			o.set("io_size", strconv.FormatInt(w.IOBytes, 10))
		}
		if w.IOCount > 0 {
			o.set("number_ios", strconv.FormatInt(w.IOCount, 10))
		}
		if w.Loops > 1 {
			o.set("loops", strconv.Itoa(w.Loops))
		}
	}
	if w.RampSeconds > 0 {
		o.set("ramp_time", strconv.FormatFloat(w.RampSeconds, 'f', -1, 64))
	}
	if w.RegionBytes > 0 {
		o.set("size", strconv.FormatInt(w.RegionBytes, 10))
	}
	if w.ReadPct > 0 && w.ReadPct < 100 {
		o.set("rwmixread", strconv.Itoa(w.ReadPct))
	}
	if w.RandomPct > 0 && w.RandomPct < 100 {
		o.set("percentage_random", strconv.Itoa(w.RandomPct))
	}
	if w.RateIOPS > 0 {
		o.set("rate_iops", strconv.Itoa(w.RateIOPS))
	}
	if w.Buffered {
		o.set("direct", "0")
		if w.KeepCache {
			o.set("invalidate", "0")
		}
	}
	if w.RateReadBPS > 0 || w.RateWriteBPS > 0 {
		// fio's rate= per direction (bytes per second of each job clone).
		per := int64(max(w.Workers, 1))
		o.set("rate", strconv.FormatInt(w.RateReadBPS/per, 10)+","+strconv.FormatInt(w.RateWriteBPS/per, 10))
		if w.RateProcess != "" {
			o.set("rate_process", w.RateProcess)
		}
	}
	if w.RandomPct > 0 && !w.RandomMap {
		o.set("norandommap", "1")
	}
	if w.Fsync > 0 {
		o.set("fsync", strconv.Itoa(w.Fsync))
	}
	if w.Fdatasync > 0 {
		o.set("fdatasync", strconv.Itoa(w.Fdatasync))
	}
	if w.Sync != "" {
		o.set("sync", w.Sync)
	}
	if w.SubmitBatch > 1 {
		o.set("iodepth_batch_submit", strconv.Itoa(w.SubmitBatch))
	}
	switch {
	case w.CompletePoll:
		o.set("iodepth_batch_complete_min", "0")
	case w.CompleteMin > 1:
		o.set("iodepth_batch_complete_min", strconv.Itoa(w.CompleteMin))
	}
	if w.CompleteMax > 1 {
		o.set("iodepth_batch_complete_max", strconv.Itoa(w.CompleteMax))
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
func fioDirOf(r *result.Result, h *result.Histogram, bytes uint64, iops float64, elapsed float64, intervals bool) fioDir {
	d := fioDir{}
	if h == nil || h.Count() == 0 {
		return d
	}
	runtimeMs := satInt64(elapsed * 1000)
	d.IOBytes, d.IOKBytes = bytes, bytes/1024
	if elapsed > 0 {
		d.BWBytes = satUint64(float64(bytes) / elapsed)
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
	return satUint64(mn), satUint64(mx), fioFloat(m), dev
}

// fioLatOf summarises h in ns; with plus it adds the percentiles and the
// json+ bins (a bin per non-empty histogram bucket, keyed by its midpoint,
// in increasing order as fio writes them).
func fioLatOf(h *result.Histogram, plus bool) fioLat {
	l := fioLat{Min: h.Min(), Max: h.Max(), Mean: fioFloat(h.Mean()), Stddev: fioFloat(h.Stddev()), N: h.Count()}
	if !plus {
		return l
	}
	l.Percentile = make(fioObject, 0, len(fioPercentiles))
	for _, p := range fioPercentiles {
		l.Percentile = append(l.Percentile, fioKV{strconv.FormatFloat(p, 'f', 6, 64), satUint64(h.Quantile(p / 100))})
	}
	l.Bins = fioObject{}
	h.Buckets(func(lo, hi, c uint64) {
		k := strconv.FormatUint(fioBinValue(lo, hi), 10)
		if n := len(l.Bins); n > 0 && l.Bins[n-1].key == k {
			l.Bins[n-1].val = l.Bins[n-1].val.(uint64) + c
			return
		}
		l.Bins = append(l.Bins, fioKV{k, c})
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

// fioLatencyMaps are fio's latency_ns, latency_us and latency_ms, keys in
// fio's order; a share under 0.01 of a range that is not empty is written
// 0.01 (stat.c: stat_calc_lat).
func fioLatencyMaps(h *result.Histogram) (ns, us, ms fioObject) {
	var cn, cu [10]uint64
	var cm [12]uint64
	total := h.Count()
	h.Buckets(func(lo, hi, c uint64) {
		v := fioBinValue(lo, hi)
		switch {
		case v < 1000:
			cn[fioLatIndex(v, fioLatKeys)] += c
		case v < 1000_000:
			cu[fioLatIndex(v/1000, fioLatKeys)] += c
		default:
			cm[fioLatIndex(v/1000_000, fioLatMsKeys)] += c
		}
	})
	dist := func(keys []uint64, counts []uint64) fioObject {
		out := fioObject{}
		for i, n := range counts {
			k := ">=2000"
			if i < len(keys) {
				k = strconv.FormatUint(keys[i], 10)
			}
			v := 0.0
			if total > 0 {
				v = 100 * float64(n) / float64(total)
				if v < 0.01 && n > 0 {
					v = 0.01
				}
			}
			out = append(out, fioKV{k, fioFloat(v)})
		}
		return out
	}
	return dist(fioLatKeys, cn[:]), dist(fioLatKeys, cu[:]), dist(fioLatMsKeys, cm[:])
}

// fioLatIndex is the index of the first key above v (len(keys) when none
// is: fio's ">=" range).
func fioLatIndex(v uint64, keys []uint64) int {
	for i, k := range keys {
		if v < k {
			return i
		}
	}
	return len(keys)
}
