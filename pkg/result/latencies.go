package result

import "strings"

// LatencyKind is one of the summary's latency summaries.
type LatencyKind uint8

// Latency summaries.
const (
	LatencyAll      LatencyKind = iota + 1 // every read and write: summary.latency
	LatencyRead                            // summary.read_latency
	LatencyWrite                           // summary.write_latency
	LatencySync                            // the flushes: summary.sync.latency
	LatencyIntended                        // from the intended start of a rate-limited run's I/Os
	// The devices' own, measured in the kernel (summary.device.latency,
	// queue_latency): service time of reads and writes, each, flushes;
	// queue time of reads and writes, each.
	LatencyDevice
	LatencyDeviceRead
	LatencyDeviceWrite
	LatencyDeviceFlush
	LatencyQueue
	LatencyQueueRead
	LatencyQueueWrite
)

// deviceLatency and queueLatency read a device latency summary, nil when
// the run did not measure it.
func deviceLatency(get func(d *DeviceLatency) *CountedLatency) func(s *Summary) *Latency {
	return func(s *Summary) *Latency {
		if s.Device == nil || s.Device.Latency == nil {
			return nil
		}
		return &get(s.Device.Latency).Latency
	}
}

func queueLatency(get func(d *QueueLatency) *CountedLatency) func(s *Summary) *Latency {
	return func(s *Summary) *Latency {
		if s.Device == nil || s.Device.QueueLatency == nil {
			return nil
		}
		return &get(s.Device.QueueLatency).Latency
	}
}

// LatencyStat is one statistic of a latency summary.
type LatencyStat uint8

// Statistics of a latency summary, in the JSON's order.
const (
	StatMean LatencyStat = iota + 1
	StatMin
	StatMax
	StatStddev
	StatP50
	StatP90
	StatP99
	StatP99_9
	StatP99_99
)

// LatencyStats lists the statistics of a latency summary in order.
func LatencyStats() []LatencyStat {
	return []LatencyStat{StatMean, StatMin, StatMax, StatStddev, StatP50, StatP90, StatP99, StatP99_9, StatP99_99}
}

// PercentileStats lists the percentiles of a latency summary in order,
// those of PercentileKeys.
func PercentileStats() []LatencyStat {
	return []LatencyStat{StatP50, StatP90, StatP99, StatP99_9, StatP99_99}
}

type statInfo struct {
	field string // the JSON field under the latency summary
	short string // "mean", "p99.9"
	title string // "Mean", "p99.9"
	key   string // the percentile's key ("" for the others)
}

var stats = [...]statInfo{
	StatMean:   {"mean_seconds", "mean", "Mean", ""},
	StatMin:    {"min_seconds", "min", "Min", ""},
	StatMax:    {"max_seconds", "max", "Max", ""},
	StatStddev: {"stddev_seconds", "stddev", "Stddev", ""},
	StatP50:    {"percentiles.50", "p50", "p50", "50"},
	StatP90:    {"percentiles.90", "p90", "p90", "90"},
	StatP99:    {"percentiles.99", "p99", "p99", "99"},
	StatP99_9:  {"percentiles.99.9", "p99.9", "p99.9", "99.9"},
	StatP99_99: {"percentiles.99.99", "p99.99", "p99.99", "99.99"},
}

// Short names the statistic in a row of a latency table: "mean", "p99".
func (s LatencyStat) Short() string { return stats[s].short }

// Percentile is the statistic's key in Latency.Percentiles ("99.9") and
// whether it is a percentile.
func (s LatencyStat) Percentile() (string, bool) { return stats[s].key, stats[s].key != "" }

func (s LatencyStat) of(l *Latency) float64 {
	switch s {
	case StatMean:
		return l.MeanSeconds
	case StatMin:
		return l.MinSeconds
	case StatMax:
		return l.MaxSeconds
	case StatStddev:
		return l.StddevSeconds
	}
	return l.Percentiles[stats[s].key]
}

type latencyInfo struct {
	path  string // JSON path of the summary
	title string // "response time": "Mean response time (ms)"
	words string // "latency": "p99 latency"
	op    Op
	// count is the figure that counts what it summarises.
	count FigureID
	get   func(s *Summary) *Latency
	// optional: the summary is absent from runs without it (no flushes,
	// no rate limit); its figures are then absent too, "" in the CSV.
	optional bool
	block    CSVBlock
	metric   Metric
}

var latencyKinds = [LatencyQueueWrite + 1]latencyInfo{
	LatencyAll: {path: "latency", title: "response time", words: "latency", op: OpAll, count: FigOps,
		get: func(s *Summary) *Latency { return &s.Latency }, block: CSVFirst,
		metric: Metric{Name: "latency_seconds",
			RunHelp:   "I/O completion latency: the quantiles (0.5 … 0.9999) of the last completed run; _sum and _count add up the latencies and I/Os of every completed run of this shape since the exporter started (counters).",
			ProbeHelp: "I/O completion latency: the quantiles (0.5 … 0.9999) of this probe; _sum and _count add up the latencies and I/Os of every probe of this module and target since the exporter started (counters)."}},
	LatencyRead: {path: "read_latency", title: "read response time", words: "read latency", op: OpRead, count: FigReadOps,
		get: func(s *Summary) *Latency { return &s.ReadLatency }, block: CSVFirst},
	LatencyWrite: {path: "write_latency", title: "write response time", words: "write latency", op: OpWrite, count: FigWriteOps,
		get: func(s *Summary) *Latency { return &s.WriteLatency }, block: CSVFirst},
	LatencySync: {path: "sync.latency", title: "flush latency", words: "flush latency", op: OpAll, count: FigSyncOps,
		get: func(s *Summary) *Latency {
			if s.Sync == nil {
				return nil
			}
			return &s.Sync.Latency
		}, optional: true, block: CSVSecond,
		metric: Metric{Name: "flush_latency_seconds",
			RunHelp: "Flush (fsync or fdatasync) latency, for runs that flushed: the quantiles (0.5 … 0.9999) of the last completed run; _sum and _count add up the latencies and flushes of every completed run of this shape since the exporter started (counters)."}},
	// Its count is the run's I/Os: every one was paced.
	LatencyIntended: {path: "intended_latency", title: "latency from intended start", words: "latency from intended start", op: OpAll, count: FigOps,
		get: func(s *Summary) *Latency { return s.IntendedLatency }, optional: true, block: CSVSecond,
		metric: Metric{Name: "intended_latency_seconds",
			RunHelp: "Latency of I/Os from their intended start (the rate limit's slot for each) to completion, for rate-limited runs: the quantiles of the last completed run; _sum and _count add up every completed run of this shape since the exporter started (counters), like ioprobe_run_latency_seconds."}},
	LatencyDevice: deviceKind("device.latency", "device service time", "device service time", OpAll, FigDeviceLatencyCount,
		deviceLatency(func(d *DeviceLatency) *CountedLatency { return &d.CountedLatency }),
		Metric{Name: "device_latency_seconds",
			RunHelp: "Service time (issue to completion, measured in the kernel) of the reads and writes the target's block devices completed during a run, all of them (not only ioprobe's): the quantiles of the last completed run; _sum and _count add up every completed run of this shape since the exporter started (counters); absent when it could not be measured."}),
	LatencyDeviceRead: deviceKind("device.latency.read", "device read service time", "device read service time", OpRead, FigDeviceLatencyReadCount,
		deviceLatency(func(d *DeviceLatency) *CountedLatency { return &d.Read.CountedLatency }), Metric{}),
	LatencyDeviceWrite: deviceKind("device.latency.write", "device write service time", "device write service time", OpWrite, FigDeviceLatencyWriteCount,
		deviceLatency(func(d *DeviceLatency) *CountedLatency { return &d.Write.CountedLatency }), Metric{}),
	LatencyDeviceFlush: deviceKind("device.latency.flush", "device flush service time", "device flush service time", OpAll, FigDeviceLatencyFlushCount,
		deviceLatency(func(d *DeviceLatency) *CountedLatency { return &d.Flush }), Metric{}),
	LatencyQueue: deviceKind("device.queue_latency", "device queue time", "device queue time", OpAll, FigDeviceQueueCount,
		queueLatency(func(d *QueueLatency) *CountedLatency { return &d.CountedLatency }),
		Metric{Name: "device_queue_latency_seconds",
			RunHelp: "Queue time (from the request's start, the kernel's own stamp, to its issue to the driver, measured in the kernel) of the reads and writes of the target's block devices during a run: the quantiles of the last completed run; _sum and _count add up the requests of every completed run of this shape since the exporter started (counters); absent when it could not be measured."}),
	LatencyQueueRead: deviceKind("device.queue_latency.read", "device read queue time", "device read queue time", OpRead, FigDeviceQueueReadCount,
		queueLatency(func(d *QueueLatency) *CountedLatency { return &d.Read }), Metric{}),
	LatencyQueueWrite: deviceKind("device.queue_latency.write", "device write queue time", "device write queue time", OpWrite, FigDeviceQueueWriteCount,
		queueLatency(func(d *QueueLatency) *CountedLatency { return &d.Write }), Metric{}),
}

// deviceKind is a device latency summary's entry: optional (absent from
// runs that did not measure it), its CSV columns last.
func deviceKind(path, title, words string, op Op, count FigureID, get func(s *Summary) *Latency, m Metric) latencyInfo {
	return latencyInfo{path: path, title: title, words: words, op: op, count: count, get: get, optional: true, block: CSVThird, metric: m}
}

// Figure is the statistic s of the latency summary k.
func (k LatencyKind) Figure(s LatencyStat) FigureID {
	return FigureID(latencyKinds[k].path + "." + stats[s].field)
}

// Title names the latency summary k: "Response time", "Latency from
// intended start".
func (k LatencyKind) Title() string {
	t := latencyKinds[k].title
	return strings.ToUpper(t[:1]) + t[1:]
}

// Count is the figure that counts what the latency summary k summarises.
func (k LatencyKind) Count() FigureID { return latencyKinds[k].count }

// Metric is how the exporter publishes the summary k (a zero Name: it
// does not).
func (k LatencyKind) Metric() Metric { return latencyKinds[k].metric }

// In says whether the summary s holds the latency summary k.
func (k LatencyKind) In(s *Summary) bool { return latencyKinds[k].get(s) != nil }

// figures are the catalogue's entries of k's statistics, merged from the
// histograms.
func (k LatencyKind) figures() []Figure {
	info := latencyKinds[k]
	var none Latency
	var out []Figure
	for _, st := range LatencyStats() {
		title, words := stats[st].title+" "+info.title, stats[st].short+" "+info.words
		if st == StatStddev {
			title, words = "Standard deviation of "+info.title, "stddev of "+info.words
		}
		f := Figure{ID: k.Figure(st), Title: title + " (ms)", Short: title, Head: stats[st].title + " ms", Words: words,
			Unit: UnitLatency, Better: LowerIsBetter, Merge: MergeHistogram, Block: info.block, Op: info.op,
			Latency: k, Stat: st}
		if k == LatencyAll {
			f.Read, f.Write = LatencyRead.Figure(st), LatencyWrite.Figure(st)
			if st == StatMean {
				f.Metric = Metric{Name: "latency_mean_seconds",
					RunHelp:   "Mean I/O completion latency of the last completed run.",
					ProbeHelp: "Mean I/O completion latency measured by the probe."}
				f.Interval = func(iv *Interval) float64 { return iv.LatencyMeanSeconds }
			}
			if st == StatP99 {
				f.Interval = func(iv *Interval) float64 { return iv.LatencyP99Seconds }
			}
		}
		get := info.get
		read := func(s *Summary) (*Latency, bool) {
			l := get(s)
			if l == nil {
				if info.optional {
					return nil, false
				}
				l = &none
			}
			return l, true
		}
		out = append(out, with(f, reader{func(s *Summary) (float64, bool) {
			l, ok := read(s)
			if !ok {
				return 0, false
			}
			return st.of(l), true
		}, func(s *Summary) string {
			l, ok := read(s)
			if !ok {
				return ""
			}
			return Float(st.of(l))
		}}))
	}
	return out
}
