package result

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// summaryLeaves walks Summary's JSON: every field that is not a struct
// (percentiles: one leaf per key), or a struct that Figures names whole.
func summaryLeaves(t *testing.T, typ reflect.Type, prefix string, whole map[string]bool) []string {
	var out []string
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		require.NotEmpty(t, name, "%s has a JSON name", f.Name)
		path := prefix + name
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case whole[path]:
			out = append(out, path)
		case ft.Kind() == reflect.Struct:
			out = append(out, summaryLeaves(t, ft, path+".", whole)...)
		case name == "percentiles":
			for _, k := range PercentileKeys {
				out = append(out, path+"."+k)
			}
		default:
			out = append(out, path)
		}
	}
	return out
}

// TestEveryFigureHasAMergeRule fails when a summary figure is added to the
// JSON without its entry in Figures (and so without a merge rule and a
// CSV column decision), or when an entry names no field.
func TestEveryFigureHasAMergeRule(t *testing.T) {
	rules := map[string]MergeRule{}
	whole := map[string]bool{}
	for _, f := range Figures() {
		require.NotContains(t, rules, f.Name, "figures are listed once")
		require.NotEmpty(t, f.Merge, "%s has a merge rule", f.Name)
		rules[f.Name] = f.Merge
		whole[f.Name] = true
	}
	var names []string
	for _, f := range Figures() {
		names = append(names, f.Name)
	}
	require.Equal(t, summaryLeaves(t, reflect.TypeOf(Summary{}), "", whole), names, "Figures lists every summary figure, in the JSON's order")
}

// TestMergeFollowsEachFiguresRule merges two hosts' runs and checks every
// figure of the merged summary against its rule in Figures.
func TestMergeFollowsEachFiguresRule(t *testing.T) {
	a := run("h1", 8, latencies(3000, 100_000, 50_000, 1), latencies(1000, 300_000, 90_000, 2), 4, 30)
	b := run("h2", 16, latencies(2000, 120_000, 40_000, 3), latencies(500, 250_000, 70_000, 4), 5, 12)
	a.Summary.Errors, a.Summary.ErrorsByClass = 2, map[string]uint64{"eio": 2}
	b.Summary.Errors, b.Summary.ErrorsByClass = 3, map[string]uint64{"eio": 1, "timeout": 2}
	a.Summary.Device = &DeviceStats{Devices: []string{"sdb"}, ReadOps: 10, WriteOps: 20, ReadBytes: 30, WriteBytes: 40, FlushOps: 50, FlushSeconds: 0.5}
	b.Summary.Device = &DeviceStats{Devices: []string{"nvme0n1", "sdb"}, ReadOps: 1, WriteOps: 2, ReadBytes: 3, WriteBytes: 4, FlushOps: 5, FlushSeconds: 0.25}
	// Both flushed: their sync histograms merge like the others.
	for i, r := range []*Result{a, b} {
		r.Histogram.Sync = NewHistogram()
		for _, v := range latencies(400*(i+1), 900_000, 2_000_000, 5+i) {
			r.Histogram.Sync.Record(v)
		}
		// Both ran to a rate limit: their latencies from the intended
		// start merge too.
		r.Histogram.Intended = NewHistogram()
		for _, v := range latencies(700*(i+1), 400_000, 5_000_000, 9+i) {
			r.Histogram.Intended.Record(v)
		}
		r.Summary.SetFromHistograms(r.Histogram)
	}
	a.Summary.Verify = &VerifySummary{ReadsVerified: 5}
	a.Summary.Lines = []LineSummary{{Line: 1, TransferBytes: 4096, Ops: 30, ReadOps: 10, WriteOps: 20, Bytes: 30 * 4096, LatencyMeanSeconds: 0.001},
		{Line: 2, TransferBytes: 65536, Ops: 10, ReadOps: 10, Bytes: 10 * 65536, LatencyMeanSeconds: 0.004}}
	b.Summary.Lines = []LineSummary{{Line: 1, TransferBytes: 4096, Ops: 10, ReadOps: 5, WriteOps: 5, Bytes: 10 * 4096, LatencyMeanSeconds: 0.003},
		{Line: 2, TransferBytes: 65536, Ops: 0}}
	m, err := Merge(a, b)
	require.NoError(t, err)

	read, write := NewHistogram(), NewHistogram()
	read.Merge(a.Histogram.Read)
	read.Merge(b.Histogram.Read)
	write.Merge(a.Histogram.Write)
	write.Merge(b.Histogram.Write)
	flush := NewHistogram()
	flush.Merge(a.Histogram.Sync)
	flush.Merge(b.Histogram.Sync)
	intended := NewHistogram()
	intended.Merge(a.Histogram.Intended)
	intended.Merge(b.Histogram.Intended)
	intendedLatency := LatencyOf(intended)
	fromHist := Summary{ReadOps: read.Count(), WriteOps: write.Count(), Ops: read.Count() + write.Count(),
		Latency: LatencyOf(Histograms{Read: read, Write: write}.Combined()), ReadLatency: LatencyOf(read), WriteLatency: LatencyOf(write),
		Sync: &SyncSummary{Ops: flush.Count(), Latency: LatencyOf(flush)}, IntendedLatency: &intendedLatency}
	require.NotNil(t, m.Summary.IntendedLatency, "both runs were paced")
	require.Equal(t, intended.Count(), m.Histogram.Intended.Count())
	require.Equal(t, uint64(1200), m.Summary.Sync.Ops, "every flush of both runs")
	cpu := Summary{CPU: DeriveCPU(CPUWork{Ops: m.Summary.Ops, IOPS: a.Summary.IOPS + b.Summary.IOPS,
		MBPerSecond: a.Summary.MBPerSecond + b.Summary.MBPerSecond, ElapsedSeconds: 5,
		BusyCores: 0.42, UtilizationPct: 42, BusyHz: 0.42 * 2e9, ProcessUser: 2, ProcessSystem: 4, ProcessCPU: 6})}
	union := Summary{ErrorsByClass: map[string]uint64{"eio": 3, "timeout": 2},
		Device: &DeviceStats{Devices: []string{"nvme0n1", "sdb"}}}

	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, s)
		return v
	}
	for _, f := range Figures() {
		got := f.Text(&m.Summary)
		va, vb := f.Text(&a.Summary), f.Text(&b.Summary)
		switch f.Merge {
		case MergeSum, MergeRate:
			require.InEpsilon(t, num(va)+num(vb), num(got), 1e-12, f.Name)
		case MergeElapsed:
			require.Equal(t, max(num(va), num(vb)), num(got), f.Name)
		case MergeHistogram:
			require.Equal(t, f.Text(&fromHist), got, f.Name)
		case MergeCPU:
			require.InDelta(t, num(f.Text(&cpu)), num(got), 1e-9*max(1, num(got)), f.Name)
		case MergeUnion:
			require.Equal(t, f.Text(&union), got, f.Name)
		case MergeLines:
			require.Equal(t, "15/25/163840;10/0/655360", got, f.Name)
			l := m.Summary.Lines
			require.InDelta(t, (30*0.001+10*0.003)/40, l[0].LatencyMeanSeconds, 1e-15, "a line's mean weighted by its ops")
			require.InDelta(t, 0.004, l[1].LatencyMeanSeconds, 1e-15)
			require.InEpsilon(t, m.Summary.IOPS*40/float64(m.Summary.Ops), l[0].IOPS, 1e-12, "the merged IOPS by the line's share of ops")
			require.Equal(t, 30, int(a.Summary.Lines[0].Ops), "merging leaves its inputs alone")
		case MergeDropped:
			require.Nil(t, m.Summary.Verify, f.Name)
		default:
			t.Fatalf("%s: no check for merge rule %q", f.Name, f.Merge)
		}
	}
}
