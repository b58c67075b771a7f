//go:build linux

package enginetest

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/testloop"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Factory makes a fresh engine.
type Factory func() engine.Engine

// traced is one completed I/O as the engine reported it.
type traced struct {
	flush  bool // a flush (--fsync, --fdatasync), not an I/O
	worker int
	target int
	write  bool
	random bool
	off    int64
	len    int64
	res    int64
	line   int   // the access specification line of the I/O
	at     int64 // engine.Nanotime when the engine reported it
	due    int64 // the op's intended start (0: unpaced)
}

// issued is one I/O as the engine handed it to the kernel.
type issued struct {
	line  int
	delay int64 // op.DelayNs: it starts a burst of a line with a delay
	at    int64 // engine.Nanotime when the engine issued it
}

// harness runs one engine over real workers the way the runner does, and
// keeps a trace of every I/O.
type harness struct {
	t       *testing.T
	eng     engine.Engine
	spec    workload.Spec
	targets []engine.Target
	ctl     *engine.Control
	verify  *engine.Verifier
	limit   int // stop after this many traced I/Os (0: never)
	// depth, when set, holds each worker's completions until the worker
	// has had depth I/Os in flight at once (over all its targets), or
	// until depthWait has passed since the run started: see awaitDepth.
	depth int

	mu    sync.Mutex
	trace []traced
	// inFlight and maxInFlight count, per worker and target, the I/Os
	// issued and not yet completed (see Worker.Issue).
	inFlight    map[laneKey]int
	maxInFlight map[laneKey]int
	overIssued  bool // an I/O completed that was never issued
	// busyAtFlush is the most I/Os of a flush's worker and target in
	// flight when the flush completed.
	busyAtFlush int
	issues      []issued
	// deep has, per worker, a channel closed once the worker has had
	// depth I/Os in flight; depthBy is when awaitDepth stops waiting.
	deep    map[int]chan struct{}
	depthBy time.Time
}

// depthWait bounds awaitDepth's wait: only an engine that never keeps the
// depth asked (fewer lanes than the depth, or lanes shared between
// targets) waits this long; a correct one has its lanes issue their
// first I/Os within it whatever the load.
const depthWait = 30 * time.Second

// laneKey names one worker's stream on one target, or with allTargets
// on all of them.
type laneKey struct{ worker, target int }

// allTargets is laneKey's target for a worker's I/Os on all its targets.
const allTargets = -1

// run starts the workers, lets them run until limit I/Os have completed
// (or until stop is called from elsewhere), and returns the workers.
func (h *harness) run() []*engine.Worker {
	h.t.Helper()
	spec := h.spec.WithDefaults()
	if spec.Duration == 0 {
		spec.Duration = 1
	}
	require.NoError(h.t, spec.Validate())
	if h.ctl == nil {
		h.ctl = engine.NewControl(0, nil)
	}
	h.ctl.SetMeasuring(true)
	h.depthBy = time.Now().Add(depthWait)
	start := make(chan struct{})
	ws, err := engine.NewWorkers(engine.WorkerSet{Spec: &spec, Targets: h.targets, Ctl: h.ctl, Start: start, Seed: 42, Verify: h.verify})
	require.NoError(h.t, err)
	h.t.Cleanup(func() { engine.CloseWorkers(ws) })
	for _, w := range ws {
		w.Trace = h.record
		w.Issue = h.issue
		w.TraceFlush = h.flushed
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(ws))
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- h.eng.Run(w)
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(h.t, err)
	}
	return ws
}

func (h *harness) issue(s *engine.Lane, op *engine.IO) {
	k := laneKey{s.Worker, s.Target}
	at := engine.Nanotime()
	h.mu.Lock()
	h.issues = append(h.issues, issued{line: op.Line, delay: op.DelayNs, at: at})
	if h.inFlight == nil {
		h.inFlight, h.maxInFlight = map[laneKey]int{}, map[laneKey]int{}
	}
	h.inFlight[k]++
	h.maxInFlight[k] = max(h.maxInFlight[k], h.inFlight[k])
	all := laneKey{s.Worker, allTargets}
	h.inFlight[all]++
	h.maxInFlight[all] = max(h.maxInFlight[all], h.inFlight[all])
	if h.depth > 0 && h.inFlight[all] >= h.depth {
		if ch := h.deepChan(s.Worker); !isClosed(ch) {
			close(ch)
		}
	}
	h.mu.Unlock()
}

// awaitDepth holds a completion of worker w, still counted in flight,
// until the worker has had h.depth I/Os in flight at once (or depthWait
// has passed). Whether the sync engine's lanes, goroutines in blocking
// system calls, are all between issue and completion at one instant is up
// to the scheduler: on a loaded machine a lane taken off its processor
// between two I/Os can keep a worker below its depth for a whole run
// (issue 35: "worker 0 target 0: peak I/Os in flight" 3 of 4, 1 of 9
// race runs beside make test). Holding the completions makes the depth a
// property of the engine: its other lanes, free to run, issue theirs
// until the depth is reached, which an engine with fewer lanes never
// does. An engine with one goroutine (uring) has issued its whole depth
// before it reaps its first completion, and never waits here.
func (h *harness) awaitDepth(w int) {
	h.mu.Lock()
	ch := h.deepChan(w)
	h.mu.Unlock()
	if isClosed(ch) {
		return
	}
	timer := time.NewTimer(time.Until(h.depthBy))
	defer timer.Stop()
	select {
	case <-ch:
	case <-timer.C:
	}
}

// deepChan is worker w's channel for awaitDepth; h.mu held.
func (h *harness) deepChan(w int) chan struct{} {
	if h.deep == nil {
		h.deep = map[int]chan struct{}{}
	}
	ch, ok := h.deep[w]
	if !ok {
		ch = make(chan struct{})
		h.deep[w] = ch
	}
	return ch
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func (h *harness) record(s *engine.Lane, op *engine.IO, res int64) {
	if h.depth > 0 {
		h.awaitDepth(s.Worker)
	}
	at := engine.Nanotime()
	h.mu.Lock()
	h.trace = append(h.trace, traced{worker: s.Worker, target: s.Target, write: op.Write, random: op.Random, off: op.Offset, len: op.Len, res: res, line: op.Line, at: at, due: op.Due})
	if k := (laneKey{s.Worker, s.Target}); h.inFlight[k] > 0 {
		h.inFlight[k]--
		h.inFlight[laneKey{s.Worker, allTargets}]--
	} else {
		h.overIssued = true
	}
	n := len(h.trace)
	h.mu.Unlock()
	if h.limit > 0 && n >= h.limit {
		h.ctl.Stop()
	}
}

func (h *harness) flushed(s *engine.Lane, res int64) {
	h.mu.Lock()
	h.trace = append(h.trace, traced{flush: true, worker: s.Worker, target: s.Target, res: res})
	h.busyAtFlush = max(h.busyAtFlush, h.inFlight[laneKey{s.Worker, s.Target}])
	h.mu.Unlock()
}

// tempFile makes a file of size bytes filled with a known pattern (each 4 KiB
// block starts with its offset) in dir and returns its path.
func tempFile(t testing.TB, dir string, size int64) string {
	t.Helper()
	p := filepath.Join(dir, "enginetest.dat")
	f, err := os.Create(p)
	require.NoError(t, err)
	defer f.Close()
	blk := make([]byte, 1<<20)
	for off := int64(0); off < size; off += int64(len(blk)) {
		n := min(int64(len(blk)), size-off)
		for i := int64(0); i < n; i += 4096 {
			engine.Stamp(blk[i:i+16], off+i, 0)
		}
		_, err := f.WriteAt(blk[:n], off)
		require.NoError(t, err)
	}
	require.NoError(t, f.Sync())
	return p
}

// openDirect opens path with O_DIRECT and the given access mode.
func openDirect(t testing.TB, path string, mode int) int {
	t.Helper()
	fd, err := unix.Open(path, mode|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err == unix.EINVAL {
		t.Skipf("%s does not honour O_DIRECT", path) //hygiene:skip the filesystem under the temp directory
	}
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// loopDevice attaches a loop device over a new stamped file of size bytes
// (see tempFile), detached at cleanup. It skips unless root, before the
// file is written.
func loopDevice(t *testing.T, size int64) string {
	t.Helper()
	testloop.SkipUnlessRoot(t)
	return testloop.File(t, tempFile(t, t.TempDir(), size))
}

func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

func describe(tr traced) string {
	op := "read"
	if tr.write {
		op = "write"
	}
	return fmt.Sprintf("%s %d@%d (worker %d)", op, tr.len, tr.off, tr.worker)
}
