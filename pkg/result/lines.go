package result

import (
	"strconv"
	"strings"
)

// Line is one line of a multi-line access specification as it ran
// (workload.lines; see workload.Line): present only when the
// specification cannot be written with block_sizes, read_pct and
// random_pct alone.
type Line struct {
	Bytes      int64 `json:"bytes"`
	Share      int   `json:"share"`
	ReadPct    int   `json:"read_pct"`
	RandomPct  int   `json:"random_pct"`
	AlignBytes int64 `json:"align_bytes,omitempty"`
	DelayMs    int   `json:"delay_ms,omitempty"`
	Burst      int   `json:"burst,omitempty"`
}

// LineSummary is what one line of the specification did in the measured
// window (summary.lines, in line order; only for a specification of more
// than one line, a block-size mix included).
type LineSummary struct {
	Line               int     `json:"line"` // numbered from 1, as --line lists them
	TransferBytes      int64   `json:"transfer_bytes"`
	Ops                uint64  `json:"ops"`
	ReadOps            uint64  `json:"read_ops"`
	WriteOps           uint64  `json:"write_ops"`
	Bytes              uint64  `json:"bytes"`
	ReadBytes          uint64  `json:"read_bytes"`
	WriteBytes         uint64  `json:"write_bytes"`
	IOPS               float64 `json:"iops"`
	LatencyMeanSeconds float64 `json:"latency_mean_seconds"`
}

// SetLineRates gives each line its IOPS: the run's IOPS in proportion to
// the line's ops, so that a merged result (whose IOPS follow
// MergeRate) and a single run agree on the definition.
func (s *Summary) SetLineRates() {
	for i := range s.Lines {
		l := &s.Lines[i]
		l.IOPS = 0
		if s.Ops > 0 {
			l.IOPS = s.IOPS * float64(l.Ops) / float64(s.Ops)
		}
	}
}

// mergeLines adds b's per-line figures into a's, line by line (merged
// runs ran the same lines: sameShape checks it): counts summed, the mean
// latency weighted by ops. Rates are set afterwards by SetLineRates.
func mergeLines(a, b []LineSummary) []LineSummary {
	if a == nil {
		return append([]LineSummary(nil), b...)
	}
	for i := range a {
		if i >= len(b) {
			break
		}
		x, y := &a[i], &b[i]
		if n := x.Ops + y.Ops; n > 0 {
			x.LatencyMeanSeconds = (x.LatencyMeanSeconds*float64(x.Ops) + y.LatencyMeanSeconds*float64(y.Ops)) / float64(n)
		}
		x.Ops += y.Ops
		x.ReadOps += y.ReadOps
		x.WriteOps += y.WriteOps
		x.Bytes += y.Bytes
		x.ReadBytes += y.ReadBytes
		x.WriteBytes += y.WriteBytes
	}
	return a
}

// linesText is the CSV cell of summary.lines: per line, in line order,
// "read_ops/write_ops/bytes", lines joined with ";" ("" for one line).
func linesText(s *Summary) string {
	parts := make([]string, len(s.Lines))
	for i, l := range s.Lines {
		parts[i] = strconv.FormatUint(l.ReadOps, 10) + "/" + strconv.FormatUint(l.WriteOps, 10) + "/" + strconv.FormatUint(l.Bytes, 10)
	}
	return strings.Join(parts, ";")
}
