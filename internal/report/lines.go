package report

import (
	"fmt"
	"strconv"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// specLinesTable lists a multi-line access specification in the header,
// one row per line as Iometer's editor shows it.
func specLinesTable(lines []result.Line) *table {
	t := &table{align: "rrrrrl"}
	for i, l := range lines {
		extra := ""
		if l.AlignBytes > 0 {
			extra = "aligned to " + iec(l.AlignBytes)
		}
		if l.DelayMs > 0 || l.Burst > 1 {
			if extra != "" {
				extra += ", "
			}
			extra += fmt.Sprintf("burst %d, delay %d ms", max(l.Burst, 1), l.DelayMs)
		}
		t.add(strconv.Itoa(i+1)+".", iec(l.Bytes), strconv.Itoa(l.Share)+"%", strconv.Itoa(l.ReadPct)+"% read",
			strconv.Itoa(l.RandomPct)+"% random", extra)
	}
	return t
}

// linesTable is what each line of the specification did: its I/Os (and
// their share of the run's), reads, writes, IOPS, MB/s and mean response
// time.
func linesTable(r *result.Result) *table {
	s := &r.Summary
	e, ops := result.Value(result.FigElapsed, s), result.Value(result.FigOps, s)
	t := &table{}
	t.add("Per line", "size", "I/Os", "share", "reads", "writes", "IOPS", "MB/s", "mean ms")
	for _, l := range s.Lines {
		mbs := 0.0
		if e > 0 {
			mbs = float64(l.Bytes) / e / 1e6
		}
		t.add("  line "+strconv.Itoa(l.Line), iec(l.TransferBytes), count(l.Ops), pct(float64(l.Ops), ops),
			count(l.ReadOps), count(l.WriteOps), num(l.IOPS, 2), num(mbs, 2), num(l.LatencyMeanSeconds*1e3, 3))
	}
	return t
}
