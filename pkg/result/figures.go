package result

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// MergeRule says how Merge and MergeRepeats combine a summary figure.
type MergeRule string

// Merge rules.
const (
	// MergeSum: a count, summed exactly.
	MergeSum MergeRule = "sum"
	// MergeHistogram: recomputed from the merged latency histograms (op
	// counts, latency summaries).
	MergeHistogram MergeRule = "histogram"
	// MergeRate: summed over runs made at once; for repeats, the merged
	// count ÷ the total time (Summary.SetRates).
	MergeRate MergeRule = "rate"
	// MergeElapsed: the longest of runs made at once; for repeats, the total.
	MergeElapsed MergeRule = "elapsed"
	// MergeCPU: DeriveCPU over each host's time-weighted CPU, summed over
	// hosts (a host's CPU counted once however many runs it made).
	MergeCPU MergeRule = "cpu"
	// MergeUnion: the union (device names; error counts per class summed).
	MergeUnion MergeRule = "union"
	// MergeDropped: not carried into a merged result (verify: its failed
	// sectors name one host's targets).
	MergeDropped MergeRule = "dropped"
	// MergeLines: per access specification line, counts summed line by
	// line, the mean latency weighted by ops, IOPS the merged run's IOPS
	// in proportion to the line's ops.
	MergeLines MergeRule = "lines"
)

// Figure is one summary figure: its JSON name, how runs merge it, and its
// CSV column. Figures lists every one, in the JSON's order.
type Figure struct {
	// Name is the JSON path under "summary", "." between levels:
	// "iops", "cpu.cycles_per_io", "latency.percentiles.99.9".
	Name  string
	Merge MergeRule
	// Column is the CSV column ("" when the figure has none).
	Column string
	// AtEnd says the column came after the CSV layout was fixed: it goes
	// after every older column (the CSV only grows at its end).
	AtEnd bool
	text  func(s *Summary) string
}

// Text is the figure as exact decimal text (the shortest digits that read
// back to the same float64), lists joined with ";", "" when absent.
func (f Figure) Text(s *Summary) string {
	if f.text == nil {
		return ""
	}
	return f.text(s)
}

// Float formats v as Figure.Text does.
func Float(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// column is the CSV name of a JSON path: levels joined with "_", a
// percentile "p" + its key with "." written "_" and "_seconds".
func column(name string) string {
	if pre, k, ok := strings.Cut(name, ".percentiles."); ok {
		return strings.ReplaceAll(pre, ".", "_") + "_p" + strings.ReplaceAll(k, ".", "_") + "_seconds"
	}
	return strings.ReplaceAll(name, ".", "_")
}

// Figures is the table of summary figures.
func Figures() []Figure {
	f64 := func(name string, rule MergeRule, v func(s *Summary) float64) Figure {
		return Figure{Name: name, Merge: rule, Column: column(name), text: func(s *Summary) string { return Float(v(s)) }}
	}
	u64 := func(name string, rule MergeRule, v func(s *Summary) uint64) Figure {
		return Figure{Name: name, Merge: rule, Column: column(name), text: func(s *Summary) string { return strconv.FormatUint(v(s), 10) }}
	}
	dev := func(name string, v func(d *DeviceStats) uint64) Figure {
		return Figure{Name: "device." + name, Merge: MergeSum, Column: column("device." + name), text: func(s *Summary) string {
			if s.Device == nil {
				return ""
			}
			return strconv.FormatUint(v(s.Device), 10)
		}}
	}
	rate := func(name string, v func(s *Summary) float64) Figure { return f64(name, MergeRate, v) }
	atEnd := func(f Figure) Figure { f.AtEnd = true; return f }
	errorsByClass := Figure{Name: "errors_by_class", Merge: MergeUnion, Column: "errors_by_class", text: func(s *Summary) string {
		var parts []string
		for c, n := range s.ErrorsByClass {
			parts = append(parts, fmt.Sprintf("%s=%d", c, n))
		}
		sort.Strings(parts)
		return strings.Join(parts, ";")
	}}
	out := []Figure{
		// Why one host's run ended says nothing about a merge of several.
		{Name: "ended", Merge: MergeDropped},
		u64("ops", MergeHistogram, func(s *Summary) uint64 { return s.Ops }),
		u64("read_ops", MergeHistogram, func(s *Summary) uint64 { return s.ReadOps }),
		u64("write_ops", MergeHistogram, func(s *Summary) uint64 { return s.WriteOps }),
		u64("bytes", MergeSum, func(s *Summary) uint64 { return s.Bytes }),
		u64("read_bytes", MergeSum, func(s *Summary) uint64 { return s.ReadBytes }),
		u64("write_bytes", MergeSum, func(s *Summary) uint64 { return s.WriteBytes }),
		u64("errors", MergeSum, func(s *Summary) uint64 { return s.Errors }),
		errorsByClass,
		f64("elapsed_seconds", MergeElapsed, func(s *Summary) float64 { return s.ElapsedSeconds }),
		rate("iops", func(s *Summary) float64 { return s.IOPS }),
		rate("read_iops", func(s *Summary) float64 { return s.ReadIOPS }),
		rate("write_iops", func(s *Summary) float64 { return s.WriteIOPS }),
		rate("throughput_bytes_per_second", func(s *Summary) float64 { return s.ThroughputBytesPerSecond }),
		rate("mb_per_second", func(s *Summary) float64 { return s.MBPerSecond }),
	}
	// The sync section exists only when the workload flushed: its figures
	// are "" without it, and its CSV columns came late.
	syncLatency := func(s *Summary) *Latency {
		if s.Sync == nil {
			return nil
		}
		return &s.Sync.Latency
	}
	out = append(out, latencyFigures("latency", func(s *Summary) *Latency { return &s.Latency }, false)...)
	out = append(out, latencyFigures("read_latency", func(s *Summary) *Latency { return &s.ReadLatency }, false)...)
	out = append(out, latencyFigures("write_latency", func(s *Summary) *Latency { return &s.WriteLatency }, false)...)
	out = append(out, Figure{Name: "sync.ops", Merge: MergeHistogram, Column: column("sync.ops"), AtEnd: true, text: func(s *Summary) string {
		if s.Sync == nil {
			return ""
		}
		return strconv.FormatUint(s.Sync.Ops, 10)
	}})
	out = append(out, latencyFigures("sync.latency", syncLatency, true)...)
	cpu := func(name string, v func(c *CPU) float64) Figure {
		return f64("cpu."+name, MergeCPU, func(s *Summary) float64 { return v(&s.CPU) })
	}
	out = append(out,
		cpu("process_user_seconds", func(c *CPU) float64 { return c.ProcessUserSeconds }),
		cpu("process_system_seconds", func(c *CPU) float64 { return c.ProcessSystemSeconds }),
		cpu("process_cpu_seconds_per_io", func(c *CPU) float64 { return c.ProcessCPUSecondsPerIO }),
		cpu("host_busy_cores", func(c *CPU) float64 { return c.HostBusyCores }),
		cpu("host_utilization_pct", func(c *CPU) float64 { return c.HostUtilizationPct }),
		cpu("host_cpu_seconds_per_io", func(c *CPU) float64 { return c.HostCPUSecondsPerIO }),
		cpu("cycles_per_io", func(c *CPU) float64 { return c.CyclesPerIO }),
		cpu("iops_per_cpu_pct", func(c *CPU) float64 { return c.IOPSPerCPUPct }),
		cpu("mb_per_second_per_cpu_pct", func(c *CPU) float64 { return c.MBPerSecondPerCPUPct }),
		Figure{Name: "device.devices", Merge: MergeUnion, Column: "device_devices", text: func(s *Summary) string {
			if s.Device == nil {
				return ""
			}
			return strings.Join(s.Device.Devices, ";")
		}},
		dev("read_ops", func(d *DeviceStats) uint64 { return d.ReadOps }),
		dev("write_ops", func(d *DeviceStats) uint64 { return d.WriteOps }),
		dev("read_bytes", func(d *DeviceStats) uint64 { return d.ReadBytes }),
		dev("write_bytes", func(d *DeviceStats) uint64 { return d.WriteBytes }),
		atEnd(dev("flush_ops", func(d *DeviceStats) uint64 { return d.FlushOps })),
		Figure{Name: "device.flush_seconds", Merge: MergeSum, Column: "device_flush_seconds", AtEnd: true, text: func(s *Summary) string {
			if s.Device == nil {
				return ""
			}
			return Float(s.Device.FlushSeconds)
		}},
		Figure{Name: "verify", Merge: MergeDropped},
		Figure{Name: "lines", Merge: MergeLines, Column: "lines", AtEnd: true, text: linesText},
	)
	// Rate-limited runs only; the last CSV columns so far.
	out = append(out, latencyFigures("intended_latency", func(s *Summary) *Latency { return s.IntendedLatency }, true)...)
	return out
}

// latencyFigures are the figures of the latency summary get returns under
// name: mean, min, max, stddev and percentiles, merged from the
// histograms. An optional one (get returns nil when the run has none) is
// "" when absent, and its CSV columns came after the layout was fixed.
func latencyFigures(name string, get func(s *Summary) *Latency, optional bool) []Figure {
	var none Latency
	lat := func(field string, v func(l *Latency) float64) Figure {
		f := Figure{Name: name + "." + field, Merge: MergeHistogram, Column: column(name + "." + field), AtEnd: optional}
		f.text = func(s *Summary) string {
			l := get(s)
			if l == nil {
				if optional {
					return ""
				}
				l = &none
			}
			return Float(v(l))
		}
		return f
	}
	out := []Figure{
		lat("mean_seconds", func(l *Latency) float64 { return l.MeanSeconds }),
		lat("min_seconds", func(l *Latency) float64 { return l.MinSeconds }),
		lat("max_seconds", func(l *Latency) float64 { return l.MaxSeconds }),
		lat("stddev_seconds", func(l *Latency) float64 { return l.StddevSeconds }),
	}
	for _, k := range PercentileKeys {
		out = append(out, lat("percentiles."+k, func(l *Latency) float64 { return l.Percentiles[k] }))
	}
	return out
}
