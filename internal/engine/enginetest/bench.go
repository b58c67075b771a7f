//go:build linux

package enginetest

import (
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Benchmark measures one engine doing 4 KiB random reads at queue depth qd,
// one b.N op per I/O, so -benchmem reports allocations per I/O. It reads
// $IOPROBE_BENCH_DEV when set (e.g. /dev/zram0, which shows the engine's
// own cost), else a 64 MiB file in the temp directory.
func Benchmark(b *testing.B, f Factory, qd int) {
	e := f()
	if err := e.Available(); err != nil {
		b.Skipf("engine %s: %v", e.Name(), err)
	}
	path := os.Getenv("IOPROBE_BENCH_DEV")
	region := int64(fileSize)
	if path == "" {
		path = tempFile(b, b.TempDir(), region)
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err != nil {
		b.Fatalf("open %s: %v", path, err)
	}
	defer unix.Close(fd)
	spec := workload.Spec{ReadPct: 100, RandomPct: 100, QueueDepth: qd, Workers: 1, Duration: 1}.WithDefaults()
	ctl := engine.NewControl(0, nil)
	ctl.SetMeasuring(true)
	start := make(chan struct{})
	ws, err := engine.NewWorkers(engine.WorkerSet{Spec: &spec, Targets: []engine.Target{{FD: fd, Region: workload.Region{Len: region}}}, Ctl: ctl, Start: start, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer engine.CloseWorkers(ws)
	var done atomic.Int64
	n := int64(b.N)
	ws[0].Trace = func(*engine.Stats, *workload.Op, int64) {
		if done.Add(1) == n {
			ctl.Stop()
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := e.Run(ws[0]); err != nil {
			b.Error(err)
		}
	}()
	b.ReportAllocs()
	b.ResetTimer()
	close(start)
	wg.Wait()
	b.StopTimer()
	var errs uint64
	for _, l := range ws[0].Lanes() {
		for c := 0; c < engine.NumErrClasses; c++ {
			errs += l.Read.ErrorCount(c)
		}
	}
	if errs > 0 {
		b.Fatalf("%d I/O errors", errs)
	}
}
