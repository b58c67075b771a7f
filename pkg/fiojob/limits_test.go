package fiojob

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// TestParseLimits: io_size, number_ios, loops, startdelay and thinktime
// with fio's units (HOWTO: thinktime in µs, startdelay in s, unless a
// unit says otherwise) and the meaning fio gives them under time_based.
func TestParseLimits(t *testing.T) {
	const base = "[global]\ntime_based\nruntime=10\nfilename=/dev/x\ndirect=1\n"
	one := func(t *testing.T, text string) Job {
		t.Helper()
		pts, err := parse(t, text, Options{})
		require.NoError(t, err, text)
		return pts[0].Jobs[0]
	}
	t.Run("random job: io_size, number_ios and loops change only the random sequence", func(t *testing.T) {
		j := one(t, base+"[j]\nrw=randread\nio_size=1m\nnumber_ios=100\nloops=3\n")
		require.Equal(t, 100, j.Spec.RandomPct)
		require.Empty(t, j.Spec.Lines)
		require.Empty(t, j.Notes)
	})
	t.Run("sequential io_size a multiple of the region: the restart is the wrap", func(t *testing.T) {
		j := one(t, base+"[j]\nrw=write\nsize=64m\nio_limit=128m\n")
		require.Equal(t, int64(64<<20), j.Spec.RegionBytes)
	})
	t.Run("startdelay in seconds by default, the same for jobs run at once", func(t *testing.T) {
		pts, err := parse(t, base+"[a]\nstartdelay=2\n[b]\nrw=randread\nstartdelay=2000ms\n", Options{})
		require.NoError(t, err)
		require.Len(t, pts[0].Jobs, 2)
		require.Equal(t, 2*time.Second, pts[0].Jobs[1].StartDelay)
		require.Contains(t, pts[0].Jobs[0].Notes[0], "startdelay=2s")
	})
	for _, c := range []struct {
		name, opts string
		want       workload.Line
	}{
		{"thinktime in µs, a stall after every I/O", "thinktime=5000\n", workload.Line{Bytes: 4096, Share: 100, ReadPct: 0, RandomPct: 100, DelayMs: 5}},
		{"after every 8 completed blocks", "thinktime=2ms\nthinktime_blocks=8\n", workload.Line{Bytes: 4096, Share: 100, ReadPct: 0, RandomPct: 100, DelayMs: 2, Burst: 8}},
		{"issue-side trigger with a sync engine", "thinktime=1s\nthinktime_blocks=4\nthinktime_blocks_type=issue\n", workload.Line{Bytes: 4096, Share: 100, ReadPct: 0, RandomPct: 100, DelayMs: 1000, Burst: 4}},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := one(t, base+"[j]\nrw=randwrite\n"+c.opts)
			require.Equal(t, []workload.Line{c.want}, j.Spec.Lines)
			require.Empty(t, j.Spec.BlockSizes)
			require.NoError(t, j.Spec.Validate())
		})
	}
	for _, c := range []struct{ text, want string }{
		{base + "[j]\nrw=write\nio_size=1m\n", "job.fio:8: [j] io_size: with time_based fio starts its sequential pass again at the region's start every 1048576 bytes; ioprobe's sequential I/O runs on to the region's end (use size for the region instead)"},
		{base + "[j]\nrw=randread\npercentage_random=50\nnumber_ios=10\n", "job.fio:9: [j] number_ios: with time_based fio starts its sequential pass again at the region's start every 10 I/Os; ioprobe's sequential I/O runs on to the region's end (use size for the region instead)"},
		{base + "[j]\nio_size=10%\n", "job.fio:7: [j] io_size: an amount in % of size: give it in bytes"},
		{base + "[j]\nloops=0\n", "job.fio:7: [j] loops: must be between 1 and 2147483647"},
		{base + "[j]\nstartdelay=1-5\n", `job.fio:7: [j] startdelay: "1-5": a range: fio starts each clone at a random time in it; ioprobe starts a point's workers together (give one value)`},
		{base + "[a]\nstartdelay=1\n[b]\n", "job.fio:8: [b] startdelay: runs at once with [a] with another startdelay (0s, not 1s): ioprobe starts a run's workers together (add stonewall)"},
		{base + "[j]\nthinktime=1500\n", "job.fio:7: [j] thinktime: 1.5ms: ioprobe's delay between bursts is in whole milliseconds (Iometer's unit)"},
		{base + "[j]\nthinktime=1ms\nthinktime_spin=100\n", "job.fio:8: [j] thinktime_spin: fio spins the CPU for part of the think time; ioprobe's delay sleeps"},
		{base + "[j]\nthinktime=1s\nthinktime_iotime=9s\n", "job.fio:8: [j] thinktime_iotime: a think time after a period of I/O: ioprobe's delay comes after a number of I/Os"},
		{base + "[j]\nioengine=io_uring\niodepth=4\nthinktime=1ms\n", "job.fio:9: [j] thinktime: with iodepth=4: fio stalls after thinktime_blocks completions while others are in flight; ioprobe's delay matches it with one I/O in flight (iodepth=1 or a sync engine)"},
		{base + "[j]\nbssplit=4k/50:8k/50\nthinktime=1ms\n", "job.fio:8: [j] thinktime: with several transfer sizes: fio counts the blocks of every size towards one stall, Iometer's burst is per line"},
		{base + "[j]\nrate_iops=100\nthinktime=1ms\n", "job.fio:8: [j] thinktime: with a rate (rate, rate_iops): ioprobe paces by a rate or by delays, not both"},
		{base + "[j]\nioengine=io_uring\nthinktime=1ms\nthinktime_blocks_type=issue\n", "job.fio:9: [j] thinktime_blocks_type: issue: fio then stalls after issuing, not completing, thinktime_blocks I/Os; with one I/O in flight the same only for a sync engine"},
		{base + "[j]\nthinktime_blocks=4\n", "job.fio:7: [j] thinktime_blocks: only has a meaning with thinktime"},
	} {
		_, err := parse(t, c.text, Options{})
		require.EqualError(t, err, c.want, c.text)
	}
}
