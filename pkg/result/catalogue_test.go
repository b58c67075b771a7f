package result

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
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
		require.True(t, name != "" || f.Anonymous, "%s has a JSON name", f.Name)
		if f.Anonymous {
			// encoding/json's embedded struct: its fields are this level's.
			out = append(out, summaryLeaves(t, f.Type, prefix, whole)...)
			continue
		}
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

// TestCatalogueIsComplete fails when a summary figure is added to the
// JSON without its entry in the catalogue (and so without its labels,
// unit, merge rule and CSV column), when an entry names no field, and
// when a FigureID constant or a latency statistic has no entry.
func TestCatalogueIsComplete(t *testing.T) {
	whole := map[string]bool{}
	var ids []string
	for _, f := range Figures() {
		require.NotContains(t, whole, string(f.ID), "figures are listed once")
		whole[string(f.ID)] = true
		ids = append(ids, string(f.ID))
	}
	leaves := summaryLeaves(t, reflect.TypeOf(Summary{}), "", whole)
	require.ElementsMatch(t, leaves, ids, "the catalogue lists every summary figure")

	for _, k := range []LatencyKind{LatencyAll, LatencyRead, LatencyWrite, LatencySync, LatencyIntended,
		LatencyDevice, LatencyDeviceRead, LatencyDeviceWrite, LatencyDeviceFlush, LatencyQueue, LatencyQueueRead, LatencyQueueWrite} {
		for _, s := range LatencyStats() {
			f := k.Figure(s).Figure()
			require.Equal(t, k, f.Latency)
			require.Equal(t, s, f.Stat)
		}
		require.NotPanics(t, func() { k.Count().Figure() })
	}
	var keys []string
	for _, s := range PercentileStats() {
		k, ok := s.Percentile()
		require.True(t, ok)
		keys = append(keys, k)
	}
	require.Equal(t, PercentileKeys, keys, "the percentile statistics are the histograms' percentiles")

	// Every FigureID constant declared in the package has its entry.
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	n := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, e.Name(), nil, 0)
		require.NoError(t, err)
		for _, d := range file.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "FigureID" {
					continue
				}
				for i, name := range vs.Names {
					lit := vs.Values[i].(*ast.BasicLit)
					v, err := strconv.Unquote(lit.Value)
					require.NoError(t, err)
					require.True(t, whole[v], "constant %s names no figure (%q)", name.Name, v)
					n++
				}
			}
		}
	}
	require.Greater(t, n, 40)
}

// TestEveryFigureHasEveryAttribute fails when a catalogue entry lacks one
// of its attributes, or a view names what the catalogue does not hold.
func TestEveryFigureHasEveryAttribute(t *testing.T) {
	rules := map[MergeRule]bool{MergeSum: true, MergeHistogram: true, MergeRate: true, MergeElapsed: true, MergeCPU: true,
		MergeUnion: true, MergeDropped: true, MergeLines: true, MergeDevice: true, MergeJobs: true, MergeOthers: true}
	columns := map[string]bool{}
	for _, f := range Figures() {
		name := string(f.ID)
		require.NotEmpty(t, f.Title, name)
		require.NotEmpty(t, f.Short, name)
		require.NotEmpty(t, f.Head, name)
		require.NotEmpty(t, f.Words, name)
		require.NotEmpty(t, f.Axis, name)
		require.True(t, f.Unit >= UnitCount && f.Unit < unitEnd, "%s has a unit", name)
		require.Contains(t, []Better{HigherIsBetter, LowerIsBetter, NeitherIsBetter}, f.Better, "%s says which way is better", name)
		require.True(t, rules[f.Merge], "%s has a merge rule", name)
		require.Contains(t, []Op{OpAll, OpRead, OpWrite}, f.Op, name)
		require.Contains(t, []CSVBlock{CSVNone, CSVFirst, CSVSecond, CSVThird, CSVLast}, f.Block, "%s has its place in the CSV", name)
		if f.Block == CSVNone {
			require.Empty(t, f.Column, name)
			require.Nil(t, f.text, name)
		} else {
			require.NotEmpty(t, f.Column, name)
			require.False(t, columns[f.Column], "%s: column %s is taken", name, f.Column)
			columns[f.Column] = true
			require.NotNil(t, f.text, "%s has its CSV text", name)
		}
		if f.Unit == UnitText {
			require.Nil(t, f.value, name)
			require.Equal(t, NeitherIsBetter, f.Better, name)
		} else {
			require.NotNil(t, f.value, "%s has a value", name)
		}
		for op, id := range map[Op]FigureID{OpRead: f.Read, OpWrite: f.Write} {
			if id != "" {
				require.Equal(t, op, id.Figure().Op, "%s: %s", name, id)
				require.Equal(t, f.Unit, id.Figure().Unit, "%s: %s", name, id)
			}
		}
		if f.Metric.Name != "" {
			require.True(t, f.Metric.RunHelp != "" || f.Metric.ProbeHelp != "", name)
		}
	}

	views := map[string][]FigureID{"ViewSuiteTables": ViewSuiteTables, "ViewHTMLTables": ViewHTMLTables, "ViewFleetColumns": ViewFleetColumns,
		"ViewRunsColumns": ViewRunsColumns, "ViewCPU": ViewCPU, "ViewSpread": ViewSpread, "ViewLastRunGauges": ViewLastRunGauges,
		"ViewProbeGauges": ViewProbeGauges, "ViewLog": ViewLog, "ViewSpreadShown": {ViewSpreadShown}, "ViewCompareHeadline": {ViewCompareHeadline}}
	for _, r := range ViewKernel {
		views["ViewKernel"] = append(views["ViewKernel"], r.Kernel, r.Ours, r.Amount)
		if r.OursAmount != "" {
			views["ViewKernel"] = append(views["ViewKernel"], r.OursAmount)
		}
	}
	for _, c := range ViewCompare {
		views["ViewCompare"] = append(views["ViewCompare"], c.ID)
		if c.Else != "" {
			views["ViewCompare"] = append(views["ViewCompare"], c.Else)
			require.NotEmpty(t, c.ElseNote)
		}
	}
	for a, b := range ViewCompareEchoes {
		views["ViewCompareEchoes"] = append(views["ViewCompareEchoes"], a, b)
	}
	for v, ids := range views {
		for _, id := range ids {
			require.NotPanics(t, func() { id.Figure() }, "%s names %q, which the catalogue does not hold", v, id)
			require.NotEqual(t, UnitText, id.Figure().Unit, "%s shows %s, which is not a number", v, id)
		}
	}
	for _, id := range append([]FigureID{ViewLastRunWindow}, ViewLastRunGauges...) {
		m := id.Figure().Metric
		require.NotEmpty(t, m.Name, "%s is a last-run gauge: it has a metric name", id)
		require.NotEmpty(t, m.RunHelp, "%s is a last-run gauge: it has its help", id)
	}
	for _, id := range ViewProbeGauges {
		m := id.Figure().Metric
		require.NotEmpty(t, m.Name, "%s is a probe gauge: it has a metric name", id)
		require.NotEmpty(t, m.ProbeHelp, "%s is a probe gauge: it has its help", id)
	}
	for _, k := range ViewLastRunSummaries {
		require.NotEmpty(t, k.Metric().Name)
		require.NotEmpty(t, k.Metric().RunHelp)
	}
	for _, k := range ViewProbeSummaries {
		require.NotEmpty(t, k.Metric().ProbeHelp)
	}
	var spread []FigureID
	for id := range spreadFields {
		spread = append(spread, id)
	}
	require.ElementsMatch(t, ViewSpread, spread, "each spread figure has its field in Spread")
	var keys []string
	for _, c := range ViewCompare {
		keys = append(keys, c.MetricKey())
	}
	require.Equal(t, []string{MetricIOPS, MetricMBPerSecond, MetricLatencyMean, MetricLatencyP99, MetricCPUPerIO}, keys)
}

// TestMergeFollowsEachFiguresRule merges two hosts' runs and checks every
// figure of the merged summary against its rule in Figures.
func TestMergeFollowsEachFiguresRule(t *testing.T) {
	a := run("h1", 8, latencies(3000, 100_000, 50_000, 1), latencies(1000, 300_000, 90_000, 2), 4, 30)
	b := run("h2", 16, latencies(2000, 120_000, 40_000, 3), latencies(500, 250_000, 70_000, 4), 5, 12)
	a.Summary.Errors, a.Summary.ErrorsByClass = 2, map[string]uint64{"eio": 2}
	b.Summary.Errors, b.Summary.ErrorsByClass = 3, map[string]uint64{"eio": 1, "timeout": 2}
	a.Summary.Device = &DeviceStats{Devices: []string{"sdb"}, ReadOps: 10, WriteOps: 20, ReadBytes: 30, WriteBytes: 40, FlushOps: 50, FlushSeconds: 0.5, ReadMerges: 6, WriteMerges: 7,
		FlushDevices: []string{"sdb"}, OwnReadOps: 11, OwnReadBytes: 12, OwnInLatency: "no hints"}
	b.Summary.Device = &DeviceStats{Devices: []string{"nvme0n1", "sdb"}, ReadOps: 1, WriteOps: 2, ReadBytes: 3, WriteBytes: 4, FlushOps: 5, FlushSeconds: 0.25, ReadMerges: 8, WriteMerges: 9,
		FlushDevices: []string{"nvme0n1"}, OwnReadOps: 13, OwnReadBytes: 14}
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
		// Both measured their devices' latency in the kernel.
		r.Histogram.Device = NewDeviceHistograms()
		d := r.Histogram.Device
		for j, h := range []*Histogram{d.Read, d.Write, d.Flush, d.QueueRead, d.QueueWrite} {
			for _, v := range latencies(300*(i+1)+j, 50_000*int64(j+1), 20_000, 20+10*i+j) {
				h.Record(v)
			}
		}
		r.Summary.Device.SetDeviceLatency(d, uint64(1000*(i+1)), uint64(2000*(i+1)), uint64(3*(i+1)), "")
		r.Summary.Device.SetUntimed(uint64(5*(i+1)), uint64(7*(i+1)))
	}
	a.Summary.Verify = &VerifySummary{ReadsVerified: 5}
	u64 := func(n uint64) *uint64 { return &n }
	a.Summary.HostOthers = &HostOthers{CPUFraction: 0.25, DeviceOps: u64(100), DeviceBytes: u64(4096)}
	b.Summary.HostOthers = &HostOthers{CPUFraction: 0.5, DeviceOps: u64(7), DeviceBytes: u64(512)}
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
	dev := NewDeviceHistograms()
	dev.Add(a.Histogram.Device)
	dev.Add(b.Histogram.Device)
	fromHist.Device = &DeviceStats{}
	fromHist.Device.SetDeviceLatency(dev, 0, 0, 0, "")
	require.Equal(t, dev, m.Histogram.Device, "the devices' histograms merge exactly")
	require.NotNil(t, m.Summary.IntendedLatency, "both runs were paced")
	require.Equal(t, intended.Count(), m.Histogram.Intended.Count())
	require.Equal(t, uint64(1200), m.Summary.Sync.Ops, "every flush of both runs")
	cpu := Summary{CPU: DeriveCPU(CPUWork{Ops: m.Summary.Ops, IOPS: a.Summary.IOPS + b.Summary.IOPS,
		MBPerSecond: a.Summary.MBPerSecond + b.Summary.MBPerSecond, ElapsedSeconds: 5,
		BusyCores: 0.42, UtilizationPct: 42, BusyHz: 0.42 * 2e9, ProcessUser: 2, ProcessSystem: 4, ProcessCPU: 6})}
	union := Summary{ErrorsByClass: map[string]uint64{"eio": 3, "timeout": 2},
		Device: &DeviceStats{Devices: []string{"nvme0n1", "sdb"}, FlushDevices: []string{"nvme0n1", "sdb"}, OwnInLatency: "no hints"}}

	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, s)
		return v
	}
	for _, f := range Figures() {
		if f.Block == CSVNone && f.Merge != MergeDropped {
			continue
		}
		got := f.Text(&m.Summary)
		va, vb := f.Text(&a.Summary), f.Text(&b.Summary)
		switch f.Merge {
		case MergeSum, MergeRate:
			require.InEpsilon(t, num(va)+num(vb), num(got), 1e-12, string(f.ID))
		case MergeDevice:
			// Two machines: their counts add up, nothing shared
			// (TestMergeCountsSharedDevicesOnce shares one).
			if f.Unit == UnitText {
				require.Empty(t, got, string(f.ID))
				continue
			}
			require.InEpsilon(t, num(va)+num(vb), num(got), 1e-12, string(f.ID))
		case MergeElapsed:
			require.Equal(t, max(num(va), num(vb)), num(got), string(f.ID))
		case MergeHistogram:
			require.Equal(t, f.Text(&fromHist), got, string(f.ID))
		case MergeCPU:
			require.InDelta(t, num(f.Text(&cpu)), num(got), 1e-9*max(1, num(got)), string(f.ID))
		case MergeUnion:
			require.Equal(t, f.Text(&union), got, string(f.ID))
		case MergeLines:
			require.Equal(t, "15/25/163840;10/0/655360", got, string(f.ID))
			l := m.Summary.Lines
			require.InDelta(t, (30*0.001+10*0.003)/40, l[0].LatencyMeanSeconds, 1e-15, "a line's mean weighted by its ops")
			require.InDelta(t, 0.004, l[1].LatencyMeanSeconds, 1e-15)
			require.InEpsilon(t, m.Summary.IOPS*40/float64(m.Summary.Ops), l[0].IOPS, 1e-12, "the merged IOPS by the line's share of ops")
			require.Equal(t, 30, int(a.Summary.Lines[0].Ops), "merging leaves its inputs alone")
		case MergeDropped:
			require.Nil(t, m.Summary.Verify, string(f.ID))
		case MergeOthers:
			// h1's 8 CPUs a quarter busy with others, h2's 16 half: 10
			// of 24 CPUs; the I/O summed.
			want := map[FigureID]float64{FigOthersCPU: 10.0 / 24, FigOthersDeviceOps: 107, FigOthersDeviceBytes: 4608}[f.ID]
			require.InDelta(t, want, num(got), 1e-12, string(f.ID))
		default:
			t.Fatalf("%s: no check for merge rule %q", string(f.ID), f.Merge)
		}
	}
}
