package test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testloop"
)

// TestLinesReachTheDeviceAsSpecified runs a three-line specification
// through the real binary on a loop device and checks the mix against
// what the kernel counted on the device, not against ioprobe's own
// figures: the share of writes, and the mean size of reads and of writes,
// each within five binomial standard deviations of what the lines say.
// The safety probes' reads are measured by a --dry-run and taken off
// twice: a run probes the target when it checks the plan and again when
// it opens it for writing.
func TestLinesReachTheDeviceAsSpecified(t *testing.T) {
	dev := testloop.Device(t, 256<<20)
	lines := []string{
		"--line", "4k,share=50,read=100,random=100",
		"--line", "16k,share=30,read=0,random=100",
		"--line", "64k,share=20,read=50,random=0",
	}
	args := append([]string{"run", "--target", dev, "--allow-destructive", "--qd", "2", "--ramp", "0s", "--duration", "2s", "--seed", "7", "--output", "json"}, lines...)

	r0, rs0, w0, ws0 := blockStat(t, dev)
	dry := ioprobe(t, "", append(args, "--dry-run")...)
	require.Equal(t, 0, dry.code, dry.stderr)
	r1, rs1, w1, ws1 := blockStat(t, dev)
	require.Zero(t, w1-w0, "--dry-run writes nothing")
	require.Zero(t, ws1-ws0)
	probeReads, probeSectors := r1-r0, rs1-rs0

	out := ioprobe(t, "", args...)
	require.Equal(t, 0, out.code, out.stderr)
	_, _, w2, ws2 := blockStat(t, dev)
	writes, writeSectors := w2-w1, ws2-ws1
	res := decodeResult(t, out.stdout)
	// Reads: the kernel's count over the measured window (the ramp is 0:
	// the whole run), which leaves out the reads of ioprobe's own looks
	// for signatures in it, at the end of each interval (own_read_ops);
	// the safety checks before the first write read outside it.
	require.NotNil(t, res.Summary.Device)
	require.NotNil(t, res.SafetyChecks, "a run that writes looks for signatures")
	require.Positive(t, res.SafetyChecks.WindowReadOps)
	require.Positive(t, res.Summary.Device.OwnReadOps, "the looks' reads, taken out")
	reads := float64(res.Summary.Device.ReadOps)
	readSectors := float64(res.Summary.Device.ReadBytes) / 512
	require.Len(t, res.Workload.Lines, 3)
	require.Len(t, res.Summary.Lines, 3)
	n := reads + writes
	require.Greater(t, n, 500.0, "enough I/Os to judge a mix")
	t.Logf("kernel: %.0f reads (%.0f sectors), %.0f writes (%.0f sectors); probes %.0f reads (%.0f sectors), looks %+v; ioprobe: %d reads, %d writes",
		reads, readSectors, writes, writeSectors, probeReads, probeSectors, *res.SafetyChecks, res.Summary.ReadOps, res.Summary.WriteOps)

	// Writes: all of line 2 (30%) and half of line 3 (10%).
	near := func(got, want, sd float64, what string) {
		t.Helper()
		require.InDelta(t, want, got, 5*sd, "%s: kernel %.4g, the lines say %.4g (5 sigma = %.3g)", what, got, want, 5*sd)
	}
	p := 0.40
	near(writes/n, p, math.Sqrt(p*(1-p)/n), "share of writes")
	// A write is 16 KiB (line 2, 30 of 40) or 64 KiB (line 3, 10 of 40):
	// sectors per write 32 + 96 × Bernoulli(1/4).
	q := 0.25
	near(writeSectors/writes, 32+96*q, 96*math.Sqrt(q*(1-q)/writes), "sectors per write")
	// A read is 4 KiB (line 1, 50 of 60) or 64 KiB (line 3, 10 of 60).
	q = 10.0 / 60
	near(readSectors/reads, 8+120*q, 120*math.Sqrt(q*(1-q)/reads), "sectors per read")

	// ioprobe's own per-line figures add up to what it reports; every
	// write it counted reached the device, and the kernel saw no more
	// than the I/Os issued. Over the whole run those include the ones a
	// worker issues after the measured window closes and before it sees
	// the stop: two or three on a quiet machine, tens when a loaded
	// machine leaves a worker unscheduled (42 of 2,985 seen at load 20),
	// so the whole run's bound is loose (a split or doubled I/O adds tens
	// of percent), and the tight one is the kernel's count over the
	// window, whose edges are the only slack.
	var ops uint64
	for _, l := range res.Summary.Lines {
		ops += l.Ops
	}
	require.Equal(t, res.Summary.Ops, ops)
	tail := func(counted uint64) float64 { return max(4, 0.01*float64(counted)) }
	w := float64(res.Summary.WriteOps)
	require.GreaterOrEqual(t, writes, w, "every write ioprobe counted reached the device")
	require.LessOrEqual(t, writes, 1.1*w+4, "writes the kernel saw over the whole run, against ioprobe's")
	ww := float64(res.Summary.Device.WriteOps)
	require.GreaterOrEqual(t, ww, w-tail(res.Summary.WriteOps), "writes the kernel saw in the window, against ioprobe's")
	require.LessOrEqual(t, ww, w+tail(res.Summary.WriteOps), "writes the kernel saw in the window, against ioprobe's")
	// Reads in the window: the kernel's counters are read just after the
	// window opens and closes, so completions may fall on either side of
	// each edge (a few on a quiet machine, more on a loaded one).
	r := float64(res.Summary.ReadOps)
	require.GreaterOrEqual(t, reads, r-tail(res.Summary.ReadOps), "reads the kernel saw in the window (looks off), against ioprobe's")
	require.LessOrEqual(t, reads, r+tail(res.Summary.ReadOps), "reads the kernel saw in the window (looks off), against ioprobe's")
}
