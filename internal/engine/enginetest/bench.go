//go:build linux

package enginetest

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// defaultBenchDev is the RAM block device the benchmarks read when it has a
// size: it costs no disk time, so a benchmark on it measures the engine's
// CPU. $IOPROBE_BENCH_DEV names another device.
const defaultBenchDev = "/dev/zram0"

// Benchmark measures one engine doing 4 KiB random reads at queue depth qd,
// in two sub-benchmarks: "file" on a 64 MiB file in the temp directory, and
// "dev" on $IOPROBE_BENCH_DEV or /dev/zram0 (read only; skipped when the
// device is missing or has no size). One b.N op is one I/O, so -benchmem's
// allocs/op is allocations per I/O (set-up included, spread over b.N).
// Besides ns/op (wall time per I/O) it reports:
//
//	cpu-ns/op      process CPU (user+system, every thread: io_uring's kernel
//	               workers count) per I/O
//	user-ns/op     the user-space part of it (ioprobe's own code: stamping
//	               a write's sectors shows here, the system call does not)
//	iops/cpu-s     I/Os per second of process CPU
//	hot-allocs/op  heap allocations per I/O counted from the 1000th to the
//	               last I/O, so set-up and tear-down are left out
func Benchmark(b *testing.B, f Factory, qd int) {
	benchReads(b, f, workload.Spec{ReadPct: 100, RandomPct: 100, QueueDepth: qd, Workers: 1, Duration: 1})
}

// BenchmarkBatched is Benchmark with the whole queue handed to the kernel
// at once and refilled at once (--batch-submit 0 --batch-complete-max QD,
// fio's iodepth_batch_submit=iodepth_batch_complete_max=iodepth): beside
// Benchmark's, what submitting each I/O on its own (the default) costs per
// I/O. Random reads do not merge either way.
func BenchmarkBatched(b *testing.B, f Factory, qd int) {
	benchReads(b, f, workload.Spec{ReadPct: 100, RandomPct: 100, QueueDepth: qd, Workers: 1, Duration: 1, SubmitBatch: qd, CompleteMax: qd})
}

// BenchmarkPaced is Benchmark under a rate limit no device reaches
// (workload.MaxRateIOPS): the lanes are always behind schedule, so they
// never sleep and every I/O goes through the pacer and records its latency
// from the intended start. Set beside Benchmark's, it is what pacing costs
// per I/O.
func BenchmarkPaced(b *testing.B, f Factory, qd int) {
	benchReads(b, f, workload.Spec{ReadPct: 100, RandomPct: 100, QueueDepth: qd, Workers: 1, Duration: 1, RateIOPS: workload.MaxRateIOPS})
}

// benchReads runs spec's reads on Benchmark's file and device.
func benchReads(b *testing.B, f Factory, spec workload.Spec) {
	if err := f().Available(); err != nil {
		b.Skipf("engine %s: %v", f().Name(), err) //hygiene:skip the kernel's support for the engine
	}
	b.Run("file", func(b *testing.B) {
		benchIO(b, f, tempFile(b, b.TempDir(), fileSize), fileSize, spec, 0)
	})
	b.Run("dev", func(b *testing.B) {
		dev := os.Getenv("IOPROBE_BENCH_DEV")
		if dev == "" {
			dev = defaultBenchDev
		}
		benchIO(b, f, dev, devSize(b, dev), spec, 0)
	})
}

// devSize returns the size of block device dev (capped at 1 GiB), or skips.
func devSize(b *testing.B, dev string) int64 {
	name := strings.TrimPrefix(dev, "/dev/")
	raw, err := os.ReadFile("/sys/class/block/" + name + "/size")
	if err != nil {
		b.Skipf("no block device %s: %v", dev, err) //hygiene:skip a benchmark's device of the machine
	}
	sectors, _ := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
	if sectors == 0 {
		b.Skipf("%s has no size (for zram: echo 2G > /sys/block/zram0/disksize)", dev) //hygiene:skip a benchmark's device of the machine
	}
	return min(sectors*512, 1<<30)
}

// BenchmarkWrites measures one engine writing a 64 MiB file in the temp
// directory at queue depth qd: 4 KiB random writes, and 64 KiB and 1 MiB
// sequential ones. Every write is stamped as the engines stamp a file
// ioprobe filled (a non-zero sector key), so it measures what a write run
// costs per I/O. One b.N op is one I/O; the metrics are Benchmark's.
func BenchmarkWrites(b *testing.B, f Factory, qd int) {
	if err := f().Available(); err != nil {
		b.Skipf("engine %s: %v", f().Name(), err) //hygiene:skip the kernel's support for the engine
	}
	for _, c := range []struct {
		name   string
		bs     int64
		random int
	}{{"4k-rand", 4 * kib, 100}, {"64k-seq", 64 * kib, 0}, {"1m-seq", mib, 0}} {
		b.Run(c.name, func(b *testing.B) {
			spec := workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: c.bs, Weight: 1}}, ReadPct: 0, RandomPct: c.random, QueueDepth: qd, Workers: 1, Duration: 1}
			benchIO(b, f, tempFile(b, b.TempDir(), fileSize), fileSize, spec, 0x5eed)
		})
	}
}

// benchIO runs spec (made whole with its defaults) on path, whose sectors
// are stamped under key, for b.N I/Os after a warm-up.
func benchIO(b *testing.B, f Factory, path string, size int64, spec workload.Spec, key uint64) {
	mode := unix.O_RDONLY
	if spec.ReadPct < 100 {
		mode = unix.O_RDWR
	}
	fd := openDirect(b, path, mode)
	var r0, r1 unix.Rusage
	run := runHot(b, f, spec, engine.Target{FD: fd, Region: workload.Region{Len: size}, Path: path, Key: key}, 1, 1000, uint64(b.N),
		func() {
			require.NoError(b, unix.Getrusage(unix.RUSAGE_SELF, &r0))
			b.ReportAllocs()
			b.ResetTimer()
		},
		func() {
			b.StopTimer()
			require.NoError(b, unix.Getrusage(unix.RUSAGE_SELF, &r1))
		})
	ios := float64(run.ios)
	user := float64(r1.Utime.Nano() - r0.Utime.Nano())
	cpu := user + float64(r1.Stime.Nano()-r0.Stime.Nano())
	b.ReportMetric(cpu/ios, "cpu-ns/op")
	b.ReportMetric(user/ios, "user-ns/op")
	b.ReportMetric(ios/(cpu/1e9), "iops/cpu-s")
	b.ReportMetric(float64(run.allocs)/float64(b.N), "hot-allocs/op")
}

// hot is what runHot saw: the I/Os completed, and the heap allocations
// between the warm-th completion and the last.
type hot struct{ ios, allocs uint64 }

// runHot runs one worker of spec (made whole with its defaults) on tgt
// until warm+n I/Os have completed, reading the heap's allocation count
// at the warm-th completion and the last (on the engine's goroutine, as
// it completes them). begin is called just before the worker starts,
// end just after it returns (a benchmark's timer). The run must succeed.
func runHot(tb testing.TB, f Factory, spec workload.Spec, tgt engine.Target, seed, warm, n uint64, begin, end func()) hot {
	spec = spec.WithDefaults()
	require.NoError(tb, spec.Validate())
	ctl := engine.NewControl(0, nil)
	ctl.SetMeasuring(true)
	start := make(chan struct{})
	ws, err := engine.NewWorkers(engine.WorkerSet{Spec: &spec, Targets: []engine.Target{tgt}, Ctl: ctl, Start: start, Seed: seed})
	require.NoError(tb, err)
	defer engine.CloseWorkers(ws)

	total := warm + n
	var done atomic.Uint64
	var m0, m1 runtime.MemStats
	ws[0].Trace = func(*engine.Lane, *engine.IO, int64) {
		switch done.Add(1) {
		case warm:
			runtime.ReadMemStats(&m0)
		case total:
			runtime.ReadMemStats(&m1)
			ctl.Stop()
		}
	}
	var wg sync.WaitGroup
	var runErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		runErr = f().Run(ws[0])
	}()
	begin()
	close(start)
	wg.Wait()
	end()
	require.NoError(tb, runErr)
	require.Nil(tb, ctl.FirstError(), "I/O failed")
	require.GreaterOrEqual(tb, done.Load(), total)
	return hot{ios: done.Load(), allocs: m1.Mallocs - m0.Mallocs}
}
