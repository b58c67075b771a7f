//go:build linux

package runner

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/engine/syncio"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

var update = flag.Bool("update", false, "rewrite testdata/workload-golden.json")

// TestOneLineWorkloadJSONUnchanged: today's flags and profiles give
// byte for byte the result "workload" they gave before specifications had
// lines (testdata/workload-golden.json was written by the code before
// that change, with this test's -update).
func TestOneLineWorkloadJSONUnchanged(t *testing.T) {
	mix, err := workload.ParseBlockSizes("4k:70,64k:30")
	require.NoError(t, err)
	specs := []workload.Spec{
		{ReadPct: 100, RandomPct: 100, Duration: time.Minute, Ramp: 10 * time.Second},
		{BlockSizes: mix, ReadPct: 67, RandomPct: 75, Align: 8 << 10, RegionBytes: 1 << 30, RateIOPS: 500, Seed: 7, Duration: time.Second},
		{BlockSizes: mix, ReadPct: 0, RandomPct: 0, Fdatasync: 4, Sync: workload.SyncDsync, Verify: true, Duration: time.Second},
	}
	// The profiles there were then, by name: a profile added later is not
	// "today's" (and the golden file would not know it).
	for _, name := range []string{"random-read", "random-write", "sequential-read", "sequential-write", "file-server",
		"oltp", "exchange-db", "log", "video-on-demand", "cpu-cost", "canary"} {
		p, err := workload.LookupPreset(name)
		require.NoError(t, err)
		s := p.Spec
		s.Duration = time.Second
		specs = append(specs, s)
	}
	var got []json.RawMessage
	for _, s := range specs {
		s = s.WithDefaults()
		require.NoError(t, s.Validate())
		b, err := json.Marshal(workloadOf(&s, s.Name, syncio.New(), "requested", 1))
		require.NoError(t, err)
		got = append(got, b)
	}
	out, err := json.MarshalIndent(got, "", " ")
	require.NoError(t, err)
	golden := filepath.Join("testdata", "workload-golden.json")
	if *update {
		require.NoError(t, os.WriteFile(golden, append(out, '\n'), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), string(out)+"\n")
}

// TestLinesSummary: a multi-line run reports each line, and the lines add
// up to the run's own counts; its workload carries the lines and their
// summary in today's fields.
func TestLinesSummary(t *testing.T) {
	tgt := filepath.Join(t.TempDir(), "lines.dat")
	s := workload.Spec{Lines: []workload.Line{
		{Bytes: 4 << 10, Share: 60, ReadPct: 100, RandomPct: 100},
		{Bytes: 64 << 10, Share: 40, ReadPct: 0, RandomPct: 0, Burst: 2},
	}, QueueDepth: 4, Workers: 2, Duration: 500 * time.Millisecond, RegionBytes: 16 << 20}.WithDefaults()
	require.NoError(t, s.Validate())
	res, err := Run(context.Background(), plan(Group{Spec: s, Targets: []string{tgt}}))
	require.NoError(t, err)
	w := res.Workload
	require.Len(t, w.Lines, 2)
	require.Equal(t, 2, w.Lines[1].Burst)
	require.Equal(t, 43, w.ReadPct, "the I/Os' share of reads: 60 of 60 + 40 × burst 2")
	require.Equal(t, 43, w.RandomPct)
	sum := res.Summary
	require.Len(t, sum.Lines, 2)
	var ops, reads, writes, bytes uint64
	var iops float64
	for i, l := range sum.Lines {
		require.Equal(t, i+1, l.Line)
		require.Equal(t, s.Lines[i].Bytes, l.TransferBytes)
		require.Equal(t, l.ReadOps+l.WriteOps, l.Ops)
		require.Equal(t, l.Ops*uint64(l.TransferBytes), l.Bytes, "every I/O of a line is its size")
		require.Positive(t, l.LatencyMeanSeconds)
		ops, reads, writes, bytes, iops = ops+l.Ops, reads+l.ReadOps, writes+l.WriteOps, bytes+l.Bytes, iops+l.IOPS
	}
	require.Zero(t, sum.Lines[0].WriteOps, "line 1 only reads")
	require.Zero(t, sum.Lines[1].ReadOps, "line 2 only writes")
	require.Equal(t, sum.Ops, ops)
	require.Equal(t, sum.ReadOps, reads)
	require.Equal(t, sum.WriteOps, writes)
	require.Equal(t, sum.Bytes, bytes)
	require.InEpsilon(t, sum.IOPS, iops, 1e-9)
}
