package report

import (
	"bytes"
	"encoding/csv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

func linesResult() *result.Result {
	r := mixedResult()
	r.Workload.Lines = []result.Line{
		{Bytes: 4096, Share: 60, ReadPct: 67, RandomPct: 100},
		{Bytes: 65536, Share: 40, ReadPct: 0, RandomPct: 0, AlignBytes: 65536, DelayMs: 5, Burst: 4},
	}
	s := &r.Summary
	a := result.LineSummary{Line: 1, TransferBytes: 4096, ReadOps: s.ReadOps, WriteOps: s.WriteOps / 2, LatencyMeanSeconds: 0.00025}
	b := result.LineSummary{Line: 2, TransferBytes: 65536, WriteOps: s.WriteOps - s.WriteOps/2, LatencyMeanSeconds: 0.0015}
	for _, l := range []*result.LineSummary{&a, &b} {
		l.Ops = l.ReadOps + l.WriteOps
		l.Bytes = l.Ops * uint64(l.TransferBytes)
	}
	s.Lines = []result.LineSummary{a, b}
	s.SetLineRates()
	return r
}

func TestTextShowsEachLine(t *testing.T) {
	r := linesResult()
	var b bytes.Buffer
	require.NoError(t, WriteText(&b, r))
	out := b.String()
	require.Regexp(t, `Lines +1\. +4 KiB +60% +67% read +100% random\n +2\. +64 KiB +40% +0% read +0% random +aligned to 64 KiB, burst 4, delay 5 ms\n`, out)
	s := r.Summary
	require.Regexp(t, `Per line +size +I/Os +share +reads +writes +IOPS +MB/s +mean ms\n`, out)
	require.Regexp(t, `  line 1 +4 KiB +`+count(s.Lines[0].Ops)+` +`+pct(float64(s.Lines[0].Ops), float64(s.Ops))+` +`+count(s.Lines[0].ReadOps)+` +`+count(s.Lines[0].WriteOps)+` .* 0\.250\n`, out)
	require.Regexp(t, `  line 2 +64 KiB +`+count(s.Lines[1].Ops)+` .* 1\.500\n`, out)

	b.Reset()
	require.NoError(t, WriteText(&b, readResult()))
	require.NotContains(t, b.String(), "Per line", "a one-line run has no per-line table")
	require.NotContains(t, b.String(), "Lines ")
}

func TestCSVCarriesLineCounts(t *testing.T) {
	r := linesResult()
	var b bytes.Buffer
	require.NoError(t, WriteCSV(&b, []*result.Result{r, readResult()}, true))
	rows, err := csv.NewReader(&b).ReadAll()
	require.NoError(t, err)
	col := -1
	for i, h := range rows[0] {
		if h == "lines" {
			col = i
		}
	}
	require.Positive(t, col, "a lines column")
	l := r.Summary.Lines
	require.Equal(t, count0(l[0].ReadOps)+"/"+count0(l[0].WriteOps)+"/"+count0(l[0].Bytes)+";0/"+count0(l[1].WriteOps)+"/"+count0(l[1].Bytes), rows[1][col])
	require.Empty(t, rows[2][col], "one line: empty")
}

func count0(n uint64) string { return result.Float(float64(n)) }
