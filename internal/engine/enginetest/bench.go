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

// zramDevice is the RAM block device the benchmarks use when it has a size:
// it costs no disk time, so a benchmark on it measures the engine's CPU.
const zramDevice = "/dev/zram0"

// Bench runs 4 KiB random reads through engines made by f at queue depths 1
// and 32, on a file in the temp directory and on /dev/zram0 when it has a
// size (read-only there). One benchmark op is one I/O, so allocs/op with
// -benchmem is allocations per I/O (setup included, spread over b.N I/Os).
// Besides ns/op (wall time per I/O) it reports:
//
//	cpu-ns/op      process CPU (user+system, all threads) per I/O
//	iops/cpu-s     I/Os per second of process CPU
//	hot-allocs/op  heap allocations per I/O counted between the 1000th and
//	               the last I/O, so set-up and tear-down are left out
func Bench(b *testing.B, f Factory) {
	if err := f().Available(); err != nil {
		b.Skipf("engine %s cannot run here: %v", f().Name(), err)
	}
	file := tempFile(b, b.TempDir(), fileSize)
	targets := []struct{ name, path string }{{"file", file}, {"zram", zramDevice}}
	for _, tg := range targets {
		for _, qd := range []int{1, 32} {
			b.Run(tg.name+"/qd"+strconv.Itoa(qd), func(b *testing.B) {
				size := int64(fileSize)
				if tg.path == zramDevice {
					size = zramSize(b)
				}
				benchRead(b, f, tg.path, size, qd)
			})
		}
	}
}

// zramSize returns the disk size of /dev/zram0 (capped at 1 GiB), or skips.
func zramSize(b *testing.B) int64 {
	raw, err := os.ReadFile("/sys/block/zram0/disksize")
	if err != nil {
		b.Skipf("no %s: %v", zramDevice, err)
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
	if n == 0 {
		b.Skipf("%s has no size (echo 2G > /sys/block/zram0/disksize)", zramDevice)
	}
	return min(n, 1<<30)
}

func benchRead(b *testing.B, f Factory, path string, size int64, qd int) {
	fd := openDirect(b, path, unix.O_RDONLY)
	spec := workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 4 * kib, Weight: 1}}, ReadPct: 100, RandomPct: 100, QueueDepth: qd, Workers: 1, Duration: 1}.WithDefaults()
	require.NoError(b, spec.Validate())
	ctl := engine.NewControl(0, nil)
	ctl.SetMeasuring(true)
	start := make(chan struct{})
	ws, err := engine.NewWorkers(engine.WorkerSet{Spec: &spec, Targets: []engine.Target{{FD: fd, Region: workload.Region{Len: size}}}, Ctl: ctl, Start: start, Seed: 1})
	require.NoError(b, err)
	defer engine.CloseWorkers(ws)

	const warm = 1000
	total := uint64(b.N) + warm
	var done atomic.Uint64
	var m0, m1 runtime.MemStats
	var failed atomic.Bool
	ws[0].Trace = func(_ *engine.Stats, op *workload.Op, res int64) {
		if res != op.Len {
			failed.Store(true)
		}
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
	var r0, r1 unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &r0)
	b.ResetTimer()
	close(start)
	wg.Wait()
	b.StopTimer()
	_ = unix.Getrusage(unix.RUSAGE_SELF, &r1)
	require.NoError(b, runErr)
	require.False(b, failed.Load(), "an I/O failed")
	ios := float64(done.Load())
	cpu := float64(cpuNs(&r1) - cpuNs(&r0))
	b.ReportMetric(cpu/ios, "cpu-ns/op")
	b.ReportMetric(ios/(cpu/1e9), "iops/cpu-s")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(b.N), "hot-allocs/op")
}

func cpuNs(r *unix.Rusage) int64 {
	return r.Utime.Nano() + r.Stime.Nano()
}
