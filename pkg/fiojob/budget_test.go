package fiojob

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// TestParseBudget: a job without time_based stops, as fio's does, after
// size (or io_size) bytes or number_ios I/Os, each loops times, with
// runtime as the cap; units and defaults are fio's.
func TestParseBudget(t *testing.T) {
	const base = "[global]\nfilename=/dev/x\ndirect=1\n"
	one := func(t *testing.T, text string) workload.Spec {
		t.Helper()
		pts, err := parse(t, text, Options{})
		require.NoError(t, err, text)
		return pts[0].Jobs[0].Spec
	}
	t.Run("size only: one pass of size bytes, uncapped", func(t *testing.T) {
		s := one(t, base+"[j]\nrw=randread\nbs=4k\nsize=8m\n")
		require.True(t, s.Budgeted())
		require.Equal(t, 1, s.Loops)
		require.Zero(t, s.IOBytes, "0: the region, which is size")
		require.Equal(t, int64(8<<20), s.RegionBytes)
		require.Zero(t, s.IOCount)
		require.Equal(t, workload.MaxDuration, s.Duration)
	})
	t.Run("io_size, number_ios and loops in fio's units; runtime caps", func(t *testing.T) {
		s := one(t, base+"[j]\nrw=randwrite\nsize=1g\nio_size=64m\nnumber_ios=1k\nloops=3\nruntime=1m\nramp_time=2\n")
		require.Equal(t, int64(64<<20), s.IOBytes)
		require.Equal(t, int64(1024), s.IOCount, "number_ios=1k: fio's kb_base 1024")
		require.Equal(t, 3, s.Loops)
		require.Equal(t, time.Minute, s.Duration)
		require.Equal(t, 2*time.Second, s.Ramp)
	})
	t.Run("sequential loops over the whole region: the wrap is fio's restart", func(t *testing.T) {
		s := one(t, base+"[j]\nrw=read\nbs=128k\nsize=16m\nloops=4\n")
		require.Equal(t, 4, s.Loops)
		require.Zero(t, s.RandomPct)
	})
	t.Run("time_based keeps its meaning: no budget", func(t *testing.T) {
		s := one(t, base+"[j]\nrw=randread\ntime_based\nruntime=5\nloops=3\n")
		require.False(t, s.Budgeted())
		require.Equal(t, 5*time.Second, s.Duration)
	})
	for _, c := range []struct{ text, want string }{
		{base + "[j]\nrw=read\nsize=16m\nnumber_ios=100\nloops=2\n", "job.fio:7: [j] number_ios: with loops=2 and sequential I/O: fio starts each loop's 100 I/Os at the region's start again; ioprobe's sequential stream runs on (give the whole pass as number_ios, or loops=1)"},
		{base + "[j]\nrw=write\nsize=16m\nio_size=1m\nloops=2\n", "job.fio:7: [j] io_size: with loops=2 and sequential I/O: fio starts each loop's 1048576 bytes at the region's start again; ioprobe's sequential stream runs on (make io_size a multiple of size, or loops=1)"},
		{base + "[j]\nrw=rw\nsize=16m\nloops=2\n", "job.fio:7: [j] loops: 2 with sequential reads and writes: fio starts both streams at the region's start again each loop, each having covered only its share of it; ioprobe's streams run on"},
		{base + "[j]\ntime_based\n", "job.fio:4: [j] runtime: missing: time_based without runtime runs until fio is killed"},
	} {
		_, err := parse(t, c.text, Options{})
		require.EqualError(t, err, c.want, c.text)
	}
}

// TestParseLoopsOverFilesInTurn: loops over several files in turn run
// where each loop is one pass of every file (ioprobe's engine.Turn: a
// file whose pass is done waits for the loop's end, then every file
// starts again), and are refused where a loop is not (before: refused
// for every job with several files).
func TestParseLoopsOverFilesInTurn(t *testing.T) {
	const base = "[global]\nfilename=/dev/x:/dev/y\ndirect=1\nsize=2m\nloops=3\n"
	for _, body := range []string{"rw=read\nbssplit=4k/50:64k/50\n", "rw=write\nbs=16k\n", "rw=randread\nbs=4k\n"} {
		pts, err := parse(t, base+"[j]\n"+body, Options{})
		require.NoError(t, err, body)
		s := pts[0].Jobs[0].Spec
		require.Equal(t, 3, s.Loops, body)
		require.Equal(t, 1, s.FilesInTurn, body)
		require.Zero(t, s.IOBytes, body)
	}
	for _, body := range []string{"rw=randread\nnorandommap\n", "rw=randread\npercentage_random=50\n", "rw=read\nio_size=4m\n", "rw=read\nnumber_ios=100\n"} {
		_, err := parse(t, base+"[j]\n"+body, Options{})
		require.ErrorContains(t, err, "loops: with 2 files (filename): fio starts every file at its start again each loop", body)
	}
}
