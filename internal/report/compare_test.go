package report

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

func TestWriteCompareTextGolden(t *testing.T) {
	// esx2: BusLogic (other) against LSI Logic (base).
	base := characterizeResults("/dev/sdb", lsiIOPS, lsiCPU)
	other := characterizeResults("/dev/sdc", busIOPS, busCPU)
	c, err := result.Compare(base, other)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, WriteCompareText(&b, c, CompareSide{"lsi.json", base}, CompareSide{"buslogic.json", other}))
	golden(t, "compare_characterize.golden", b.Bytes())
	out := b.String()
	// 8KB sequential read: 12,618 → 13,264 IOPS is +5.1%, beyond the ±2% interval jitter.
	require.Regexp(t, `(?m)^sequential-read-8k +8 KiB +\+5\.1% +\+5\.1% +−4\.9% `, out)
	require.Contains(t, out, "  sequential-read-8k: +5% IOPS, −5% mean latency, −5% p99 latency\n")
	require.Contains(t, out, "IOPS: 1 point higher, 0 lower, 19 within the noise")
	// 64KB random read: 690 → 690 is no difference.
	require.Regexp(t, `(?m)^random-read-64k .* ≈0% `, out)
}

func TestSentence(t *testing.T) {
	p := result.PointDelta{Deltas: []result.Delta{
		{Metric: result.MetricIOPS, Valid: true, Pct: 13.2, NoisePct: 3, Better: true},
		{Metric: result.MetricMBPerSecond, Valid: true, Pct: 13.2, NoisePct: 3, Better: true},
		{Metric: result.MetricLatencyMean, Valid: true, Pct: -1, NoisePct: 3, Noise: true},
		{Metric: result.MetricLatencyP99, Valid: true, Pct: -4.4, NoisePct: 3, Better: true},
		{Metric: result.MetricCPUPerIO, Valid: true, Pct: 9.1, NoisePct: 3, Worse: true},
	}}
	require.Equal(t, "+13% IOPS, −4% p99 latency, +9% CPU per I/O", Sentence(p))
	for i := range p.Deltas {
		p.Deltas[i].Noise = true
	}
	require.Equal(t, "no difference beyond the noise", Sentence(p))
	require.Equal(t, "−0.4%", signedPct(-0.44, 1))
	require.Equal(t, "0%", signedPct(-0.04, 1))
	require.Equal(t, "n/a", deltaCell(result.Delta{}))
	require.Equal(t, "+2.0%?", deltaCell(result.Delta{Valid: true, Pct: 2}))
	require.Equal(t, "≈+2.0%", deltaCell(result.Delta{Valid: true, Pct: 2, NoisePct: 3, Noise: true}))
}

// A comparison of two sides whose storage differs says how, once for a
// difference of every point and with the points for one of some.
func TestWriteCompareTextSaysTheStorageDiffers(t *testing.T) {
	base := characterizeResults("/dev/sdb", lsiIOPS, lsiCPU)
	other := characterizeResults("/dev/sdc", busIOPS, busCPU)
	disk := func(sched string) *result.Disk {
		return &result.Disk{Name: "sdb", Model: "Virtual disk", Queue: result.Queue{Scheduler: sched, WriteCache: "write through"}}
	}
	for i := range base {
		base[i].Targets[0].Stack = []result.Layer{{Kind: result.LayerDisk, Name: "sdb"}}
		base[i].Targets[0].Disk = disk("mq-deadline")
		other[i].Targets[0].Stack = []result.Layer{{Kind: result.LayerDisk, Name: "sdc"}}
		other[i].Targets[0].Disk = disk("none")
	}
	other[0].Targets[0].Disk.WriteCache = "write back"
	c, err := result.Compare(base, other)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, WriteCompareText(&b, c, CompareSide{"a.json", base}, CompareSide{"b.json", other}))
	out := b.String()
	require.Contains(t, out, "\nStorage differs: the differences above are not the devices' alone\n"+
		"  disk scheduler: base mq-deadline, other none\n"+
		"  disk write cache: base write through, other write back ("+result.PointOf(base[0]).Name+")\n")
}
