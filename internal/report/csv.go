package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ioprobe/ioprobe/internal/textsafe"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// csvColumn is one CSV column: its header and how a result fills it.
type csvColumn struct {
	name  string
	value func(r *result.Result) string
}

// csvColumns is the column order; it only ever grows at the end, so that
// spreadsheets and scripts that index columns keep working.
//
// Names follow the JSON: a field's name as is for host, workload and
// summary figures, "<latency>_<field>" for the three latency summaries,
// "<latency>_p<percentile>_seconds" with "." written "_" (p99_9),
// "cpu_<field>" and "device_<field>" (the summary's columns are those of
// result.Figures, in its order). Lists are joined with ";"; cells of
// a missing device count are empty. Floats are written in plain decimal
// notation, exactly (the shortest digits that read back to the same
// float64), so spreadsheets and humans read them alike.
var csvColumns = buildCSVColumns(result.Figures())

// CSVColumns is the header WriteCSV writes, in order.
var CSVColumns = func() []string {
	names := make([]string, len(csvColumns))
	for i, c := range csvColumns {
		names[i] = c.name
	}
	return names
}()

// buildCSVColumns lays out the columns with figs, the catalogue: its
// figures go in its order to their blocks.
func buildCSVColumns(figs []result.Figure) []csvColumn {
	str := func(name string, f func(r *result.Result) string) csvColumn { return csvColumn{name, f} }
	i64 := func(name string, f func(r *result.Result) int64) csvColumn {
		return csvColumn{name, func(r *result.Result) string { return strconv.FormatInt(f(r), 10) }}
	}
	f64 := func(name string, f func(r *result.Result) float64) csvColumn {
		return csvColumn{name, func(r *result.Result) string { return float(f(r)) }}
	}

	cols := []csvColumn{
		str("started_at", func(r *result.Result) string {
			if r.StartedAt.IsZero() {
				return ""
			}
			return r.StartedAt.UTC().Format(time.RFC3339Nano)
		}),
		str("version", func(r *result.Result) string { return r.Version }),
		str("status", func(r *result.Result) string { return string(r.Status) }),
		str("message", func(r *result.Result) string { return r.Message }),
		str("hostname", func(r *result.Result) string { return r.Host.Hostname }),
		str("kernel", func(r *result.Result) string { return r.Host.Kernel }),
		str("cpu_model", func(r *result.Result) string { return r.Host.CPUModel }),
		i64("logical_cpus", func(r *result.Result) int64 { return int64(r.Host.LogicalCPUs) }),
		f64("clock_hz", func(r *result.Result) float64 { return r.Host.ClockHz }),

		str("workload", func(r *result.Result) string { return r.Workload.Name }),
		str("block_sizes", func(r *result.Result) string {
			var parts []string
			for _, b := range r.Workload.BlockSizes {
				parts = append(parts, fmt.Sprintf("%d:%d", b.Bytes, b.Weight))
			}
			return strings.Join(parts, ";")
		}),
		i64("read_pct", func(r *result.Result) int64 { return int64(r.Workload.ReadPct) }),
		i64("random_pct", func(r *result.Result) int64 { return int64(r.Workload.RandomPct) }),
		i64("queue_depth", func(r *result.Result) int64 { return int64(r.Workload.QueueDepth) }),
		i64("workers", func(r *result.Result) int64 { return int64(r.Workload.Workers) }),
		f64("ramp_seconds", func(r *result.Result) float64 { return r.Workload.RampSeconds }),
		f64("duration_seconds", func(r *result.Result) float64 { return r.Workload.DurationSeconds }),
		i64("region_bytes", func(r *result.Result) int64 { return r.Workload.RegionBytes }),
		str("engine", func(r *result.Result) string { return string(r.Workload.Engine) }),
		str("engine_requested", func(r *result.Result) string { return string(r.Workload.EngineRequested) }),
		i64("rate_iops", func(r *result.Result) int64 { return int64(r.Workload.RateIOPS) }),

		str("targets", func(r *result.Result) string {
			return joinTargets(r, func(t result.Target) string { return t.Path })
		}),
		str("target_kinds", func(r *result.Result) string {
			return joinTargets(r, func(t result.Target) string { return t.Kind })
		}),
		str("target_devices", func(r *result.Result) string {
			return joinTargets(r, func(t result.Target) string { return t.Device })
		}),
	}
	for _, f := range figs {
		if f.Block == result.CSVFirst {
			cols = append(cols, csvColumn{f.Column, func(r *result.Result) string { return f.Text(&r.Summary) }})
		}
	}

	// Suite points, so a spreadsheet can pivot by size and pattern; empty
	// for a plain run.
	pt := func(name string, f func(p *result.Point) string) csvColumn {
		return csvColumn{name, func(r *result.Result) string {
			if r.Point == nil {
				return ""
			}
			return f(r.Point)
		}}
	}
	cols = append(cols,
		pt("suite", func(p *result.Point) string { return p.Suite }),
		pt("point", func(p *result.Point) string { return p.Name }),
		pt("point_section", func(p *result.Point) string { return p.Section }),
		pt("point_pattern", func(p *result.Point) string { return p.Pattern }),
		pt("point_size_bytes", func(p *result.Point) string { return strconv.FormatInt(p.SizeBytes, 10) }),
		pt("point_target", func(p *result.Point) string { return p.Target }),
		pt("point_targets", func(p *result.Point) string { return strconv.Itoa(p.Targets) }),
	)
	// The run-to-run spread of --repeat; empty without.
	sp := func(name string, f func(s *result.Spread) string) csvColumn {
		return csvColumn{name, func(r *result.Result) string {
			if r.Spread == nil {
				return ""
			}
			return f(r.Spread)
		}}
	}
	cols = append(cols,
		sp("spread_runs", func(s *result.Spread) string { return strconv.Itoa(s.Runs) }),
		sp("spread_iops_stddev", func(s *result.Spread) string { return float(s.IOPS.Stddev) }),
		sp("spread_iops_min", func(s *result.Spread) string { return float(s.IOPS.Min) }),
		sp("spread_iops_max", func(s *result.Spread) string { return float(s.IOPS.Max) }),
		sp("spread_latency_p99_stddev_seconds", func(s *result.Spread) string { return float(s.LatencyP99Seconds.Stddev) }),
		str("merged_runs", func(r *result.Result) string {
			if r.Merged == nil {
				return ""
			}
			return strconv.Itoa(r.Merged.Runs)
		}),
		str("merged_hosts", func(r *result.Result) string {
			if r.Merged == nil {
				return ""
			}
			return strings.Join(r.Merged.Hosts, ";")
		}),
	)
	// Columns added since: durable writes (workload and figures).
	cols = append(cols,
		i64("fsync", func(r *result.Result) int64 { return int64(r.Workload.Fsync) }),
		i64("fdatasync", func(r *result.Result) int64 { return int64(r.Workload.Fdatasync) }),
		str("sync", func(r *result.Result) string { return r.Workload.Sync }),
	)
	figures := func(b result.CSVBlock) {
		for _, f := range figs {
			if f.Block == b {
				cols = append(cols, csvColumn{f.Column, func(r *result.Result) string { return f.Text(&r.Summary) }})
			}
		}
	}
	figures(result.CSVSecond)
	cols = append(cols, fioColumns()...)
	// A fleet point: the addresses of the hosts whose results it holds and
	// of those that did not complete (a partial point); empty otherwise.
	fleet := func(name string, pick func(held, failed []result.FleetHost) []result.FleetHost) csvColumn {
		return str(name, func(r *result.Result) string {
			var addrs []string
			for _, h := range pick(r.FleetPartial()) {
				addrs = append(addrs, h.Address)
			}
			return strings.Join(addrs, ";")
		})
	}
	cols = append(cols,
		fleet("fleet_hosts", func(held, _ []result.FleetHost) []result.FleetHost { return held }),
		fleet("fleet_failed_hosts", func(_, failed []result.FleetHost) []result.FleetHost { return failed }),
	)
	figures(result.CSVThird)
	cols = append(cols, storageColumns()...)
	figures(result.CSVLast)
	return cols
}

// storageColumns say what was measured (targets[].stack and disk): the
// stack by kind and name, the scheduler of every device with a queue,
// and the disk's settings, each named as its JSON field. A target's
// disks are joined with "+", targets with ";"; empty for a result that
// does not describe its storage.
func storageColumns() []csvColumn {
	disk := func(name string, f func(d result.Disk) string) csvColumn {
		return csvColumn{name, func(r *result.Result) string { return joinDisks(r, f) }}
	}
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	return []csvColumn{
		{"target_stacks", func(r *result.Result) string { return joinTargets(r, stackNames) }},
		{"target_schedulers", func(r *result.Result) string { return joinTargets(r, stackSchedulers) }},
		disk("disk_names", func(d result.Disk) string { return d.Name }),
		disk("disk_models", func(d result.Disk) string { return d.Model }),
		disk("disk_firmware", func(d result.Disk) string { return d.Firmware }),
		disk("disk_size_bytes", func(d result.Disk) string { return i64(d.SizeBytes) }),
		disk("disk_logical_block_bytes", func(d result.Disk) string { return i64(d.LogicalBlockBytes) }),
		disk("disk_physical_block_bytes", func(d result.Disk) string { return i64(d.PhysicalBlockBytes) }),
		disk("disk_rotational", func(d result.Disk) string { return strconv.FormatBool(d.Rotational) }),
		disk("disk_schedulers", func(d result.Disk) string { return d.Scheduler }),
		disk("disk_nr_requests", func(d result.Disk) string { return i64(d.NrRequests) }),
		disk("disk_max_sectors_kb", func(d result.Disk) string { return i64(d.MaxSectorsKB) }),
		disk("disk_write_cache", func(d result.Disk) string { return d.WriteCache }),
		disk("disk_discard_max_bytes", func(d result.Disk) string { return i64(d.DiscardMaxBytes) }),
		disk("disk_numa_node", func(d result.Disk) string {
			if d.NUMANode == nil {
				return ""
			}
			return strconv.Itoa(*d.NUMANode)
		}),
		disk("disk_serial_sha256", func(d result.Disk) string { return d.SerialSHA256 }),
	}
}

// fioColumns are the workload columns of fio's meaning (buffered I/O, the
// random map, rate per direction): added after the figures of
// result.CSVSecond (the intended latency), before the fleet's columns.
func fioColumns() []csvColumn {
	return []csvColumn{
		{"buffered", func(r *result.Result) string { return strconv.FormatBool(r.Workload.Buffered) }},
		{"random_map", func(r *result.Result) string { return strconv.FormatBool(r.Workload.RandomMap) }},
		{"rate_read_bps", func(r *result.Result) string { return strconv.FormatInt(r.Workload.RateReadBPS, 10) }},
		{"rate_write_bps", func(r *result.Result) string { return strconv.FormatInt(r.Workload.RateWriteBPS, 10) }},
		{"rate_process", func(r *result.Result) string { return r.Workload.RateProcess }},
	}
}

func joinTargets(r *result.Result, f func(t result.Target) string) string {
	parts := make([]string, len(r.Targets))
	for i, t := range r.Targets {
		parts[i] = f(t)
	}
	return strings.Join(parts, ";")
}

func float(v float64) string { return result.Float(v) }

// csvNumber is a number as a spreadsheet reads one (and as the numeric
// columns are written): sign, digits, decimals, exponent.
var csvNumber = regexp.MustCompile(`^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)

// csvCell neutralises a cell a spreadsheet would take as a formula (a
// workload, host or point name from a document: "=HYPERLINK(…)",
// "@SUM(…)", "-2+3"): a cell that starts with = + - @, a tab or a
// carriage return gets a leading ' (OWASP's CSV injection advice), which
// spreadsheets show as text. A number stays a number: a negative
// figure is written as it is. WriteCSV escapes control characters first
// (textsafe.Cell): a CSV is read on terminals too.
func csvCell(v string) string {
	if v == "" || !strings.ContainsRune("=+-@\t\r", rune(v[0])) || csvNumber.MatchString(v) {
		return v
	}
	return "'" + v
}

// WriteCSV writes one row per result, columns in CSVColumns order, after a
// header row when header is true (false appends to an existing file). A
// point that ran several jobs at once has a row per job (workload: the
// job's name; figures: the job's own) before its total.
func WriteCSV(w io.Writer, rs []*result.Result, header bool) error {
	cw := csv.NewWriter(w)
	if header {
		if err := cw.Write(CSVColumns); err != nil {
			return err
		}
	}
	row := make([]string, len(csvColumns))
	for i, r := range rs {
		if r == nil {
			return fmt.Errorf("report: result %d is nil", i)
		}
		for _, rr := range csvRows(r) {
			for j, c := range csvColumns {
				row[j] = csvCell(textsafe.Cell(c.value(rr)))
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
