//go:build linux

package enginetest

import (
	"encoding/binary"
	"os"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/iobuf"
	"github.com/ioprobe/ioprobe/internal/verify"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

const (
	fileSize = 64 << 20
	kib      = int64(1024)
	mib      = 1024 * kib
)

// Run runs the conformance suite against engines made by f, on a file in
// the temp directory and, as root, on a loop device.
func Run(t *testing.T, f Factory) {
	if err := f().Available(); err != nil {
		t.Skipf("engine %s cannot run here: %v", f().Name(), err) //hygiene:skip the kernel's support for the engine
	}
	t.Run("file", func(t *testing.T) {
		path := tempFile(t, t.TempDir(), fileSize)
		runAll(t, f, path)
	})
	t.Run("loop", func(t *testing.T) {
		runAll(t, f, loopDevice(t, fileSize))
	})
}

func runAll(t *testing.T, f Factory, path string) {
	t.Run("RegionAndAlignment", func(t *testing.T) { testRegion(t, f, path) })
	t.Run("Mix100k", func(t *testing.T) { testMix(t, f, path) })
	t.Run("SequentialPerWorker", func(t *testing.T) { testSequential(t, f, path) })
	t.Run("WritesLandWhereReported", func(t *testing.T) { testWritesLand(t, f, path) })
	t.Run("ErrorsPerIO", func(t *testing.T) { testErrors(t, f, path) })
	t.Run("ErrorBudgetStops", func(t *testing.T) { testErrorBudget(t, f, path) })
	t.Run("RampNotCounted", func(t *testing.T) { testRamp(t, f, path) })
	t.Run("RateLimit", func(t *testing.T) { testRate(t, f, path) })
	t.Run("QueueDepthKept", func(t *testing.T) { testQueueDepth(t, f, path) })
	t.Run("SubmissionUnmerged", func(t *testing.T) { testSubmission(t, f, path) })
	t.Run("Verify", func(t *testing.T) { testVerify(t, f, path) })
	t.Run("FlushEveryN", func(t *testing.T) { testFlush(t, f, path) })
	t.Run("LinesMix", func(t *testing.T) { testLines(t, f, path) })
	t.Run("LinesDelayBurst", func(t *testing.T) { testBursts(t, f, path) })
	t.Run("BudgetCount", func(t *testing.T) { testBudgetCount(t, f, path) })
	t.Run("BudgetBytes", func(t *testing.T) { testBudgetBytes(t, f, path) })
	t.Run("NoAllocsPerIO", func(t *testing.T) { testNoAllocsPerIO(t, f, path) })
	t.Run("TargetsInTurn", func(t *testing.T) { testTargetsInTurn(t, f, path) })
	t.Run("LanesOnOneTarget", func(t *testing.T) { testLanesOnOneTarget(t, f, path) })
}

// testFlush: --fdatasync 3 at QD 1 is exactly write, write, write, flush,
// and so on (fio's fdatasync=3), every flush succeeding; at QD 4 each
// worker still flushes once per 3 writes it issued, and an asynchronous
// engine (uring) has no I/O in flight when a flush completes: it waits for
// the writes before flushing, as fio does.
func testFlush(t *testing.T, f Factory, path string) {
	fd := openDirect(t, path, unix.O_RDWR)
	spec := workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 4 * kib, Weight: 1}}, ReadPct: 0, RandomPct: 0, QueueDepth: 1, Workers: 1, Fdatasync: 3}
	h := &harness{t: t, eng: f(), limit: 400, spec: spec, targets: []engine.Target{{FD: fd, Region: workload.Region{Len: 8 * mib}}}}
	ws := h.run()
	var seq strings.Builder
	flushes := 0
	for _, tr := range h.trace {
		if tr.flush {
			require.Zero(t, tr.res, "a flush failed")
			seq.WriteByte('F')
			flushes++
			continue
		}
		require.True(t, tr.write, describe(tr))
		require.Equal(t, tr.len, tr.res, describe(tr))
		seq.WriteByte('W')
	}
	require.Regexp(t, `^(WWWF)+W{0,3}$`, seq.String(), "a flush after every third write, nothing else")
	require.Equal(t, uint64(flushes), ws[0].Lanes()[0].Sync.Latency.Count(), "every flush counted in the lane's sync histogram")

	spec.QueueDepth = 4
	h = &harness{t: t, eng: f(), limit: 2000, spec: spec, targets: []engine.Target{{FD: fd, Region: workload.Region{Len: 8 * mib}}}}
	h.run()
	writes, flushes := 0, 0
	for _, tr := range h.trace {
		if tr.flush {
			require.Zero(t, tr.res)
			flushes++
		} else {
			writes++
		}
	}
	// Writes issued but not yet flushed when the run stopped: fewer than
	// 3, plus the ones in flight.
	require.InDelta(t, writes/3, flushes, 2, "%d writes, %d flushes", writes, flushes)
	if h.eng.Name() == workload.EngineURing {
		require.Zero(t, h.busyAtFlush, "io_uring flushes only once the writes before it completed")
	}
}

func testRegion(t *testing.T, f Factory, path string) {
	fd := openDirect(t, path, unix.O_RDONLY)
	region := workload.Region{Start: 3 * mib, Len: 16 * mib}
	bs, err := workload.ParseBlockSizes("4k:50,8k:30,64k:20")
	require.NoError(t, err)
	h := &harness{t: t, eng: f(), limit: 20000,
		spec:    workload.Spec{BlockSizes: bs, ReadPct: 100, RandomPct: 100, QueueDepth: 8, Workers: 2},
		targets: []engine.Target{{FD: fd, Region: region}}}
	ws := h.run()
	require.GreaterOrEqual(t, len(h.trace), h.limit)
	sizes := map[int64]int{}
	for _, tr := range h.trace {
		require.GreaterOrEqual(t, tr.off, region.Start, describe(tr))
		require.LessOrEqual(t, tr.off+tr.len, region.Start+region.Len, describe(tr))
		require.Zero(t, (tr.off-region.Start)%(4*kib), "misaligned: %s", describe(tr))
		require.Equal(t, tr.len, tr.res, "failed I/O: %s", describe(tr))
		sizes[tr.len]++
	}
	n := len(h.trace)
	require.InDelta(t, 50, pct(sizes[4*kib], n), 2)
	require.InDelta(t, 30, pct(sizes[8*kib], n), 2)
	require.InDelta(t, 20, pct(sizes[64*kib], n), 2)
	// Every traced I/O was counted, in the lane of its worker and target.
	var counted uint64
	for _, w := range ws {
		for _, l := range w.Lanes() {
			counted += l.Read.Latency.Count()
			require.Zero(t, l.Write.Latency.Count())
		}
	}
	require.EqualValues(t, n, counted)
}

func testMix(t *testing.T, f Factory, path string) {
	fd := openDirect(t, path, unix.O_RDWR)
	h := &harness{t: t, eng: f(), limit: 100_000,
		spec:    workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 4 * kib, Weight: 1}}, ReadPct: 70, RandomPct: 30, QueueDepth: 4, Workers: 1},
		targets: []engine.Target{{FD: fd, Region: workload.Region{Len: 32 * mib}}}}
	ws := h.run()
	n := len(h.trace)
	require.GreaterOrEqual(t, n, h.limit)
	for _, l := range ws[0].Lanes() {
		require.Nil(t, l.Read.Intended, "unpaced: no latency from an intended start")
	}
	reads, random := 0, 0
	for _, tr := range h.trace {
		require.Equal(t, tr.len, tr.res, describe(tr))
		require.Zero(t, tr.due, "unpaced: no intended start")
		if !tr.write {
			reads++
		}
		if tr.random {
			random++
		}
	}
	require.InDelta(t, 70, pct(reads, n), 1, "read %%")
	require.InDelta(t, 30, pct(random, n), 1, "random %%")
}

func testSequential(t *testing.T, f Factory, path string) {
	fd := openDirect(t, path, unix.O_RDONLY)
	const bs = 16 * kib
	region := workload.Region{Len: 8 * mib} // small, so every stream wraps
	h := &harness{t: t, eng: f(), limit: 3000,
		spec:    workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: bs, Weight: 1}}, ReadPct: 100, RandomPct: 0, QueueDepth: 8, Workers: 3},
		targets: []engine.Target{{FD: fd, Region: region}}}
	h.run()
	byWorker := map[int][]int64{}
	for _, tr := range h.trace {
		require.False(t, tr.random)
		byWorker[tr.worker] = append(byWorker[tr.worker], tr.off)
	}
	require.Len(t, byWorker, 3)
	for w, offs := range byWorker {
		// The k-th I/O a worker claims is at start + k*bs (mod region):
		// whatever the completion order, the multiset must match.
		start := region.Len / 3 * int64(w)
		start -= start % bs
		want := make([]int64, len(offs))
		for k := range want {
			want[k] = (start + int64(k)*bs) % region.Len
		}
		sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })
		sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
		require.Equal(t, want, offs, "worker %d is not sequential", w)
	}
}

// writesKey is the sector key of the target testWritesLand writes to.
const writesKey = 0x5eed0fa11

func testWritesLand(t *testing.T, f Factory, path string) {
	// Zero the first 4 KiB of every block of the region, so that every
	// stamped block afterwards is one the engine wrote.
	region := workload.Region{Start: 1 * mib, Len: 4 * mib}
	inspect := workload.Region{Len: region.Start + region.Len + mib}
	zeroStamps(t, path, inspect)
	fd := openDirect(t, path, unix.O_RDWR)
	h := &harness{t: t, eng: f(), limit: 4000,
		spec:    workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 4 * kib, Weight: 1}}, ReadPct: 0, RandomPct: 100, QueueDepth: 4, Workers: 2},
		targets: []engine.Target{{FD: fd, Region: region, Key: writesKey}}}
	h.run()
	written := map[int64]bool{}
	for _, tr := range h.trace {
		require.True(t, tr.write)
		require.Equal(t, tr.len, tr.res, describe(tr))
		written[tr.off] = true
	}
	data := readDirect(t, path, 0, inspect.Len)
	for off := int64(0); off < int64(len(data)); off += 4 * kib {
		stampOff := int64(binary.LittleEndian.Uint64(data[off:]))
		seq := binary.LittleEndian.Uint64(data[off+8:])
		inRegion := off >= region.Start && off < region.Start+region.Len
		switch {
		case written[off]:
			// Every sector a plain write leaves is in the
			// self-describing format, under the target's key, for
			// the place it landed.
			blk := data[off : off+4*kib]
			f := verify.Recognise(blk, off, writesKey)
			require.Equal(t, verify.OK, f.Problem, "block at %d: %v", off, f)
			_, wseq, summed := verify.Stamp(blk, writesKey)
			require.NotZero(t, wseq, "write to %d did not reach the target", off)
			require.False(t, summed, "a plain write costs no checksum")
		case inRegion:
			require.Zero(t, seq, "block %d was written but no write was reported there", off)
		default:
			require.Equal(t, off, stampOff, "block %d outside the region was overwritten", off)
			require.Zero(t, seq, "block %d outside the region was written", off)
		}
	}
}

func testErrors(t *testing.T, f Factory, path string) {
	t.Run("EBADF", func(t *testing.T) {
		// Reads on a descriptor opened write-only fail one by one.
		fd := openDirect(t, path, unix.O_WRONLY)
		h := &harness{t: t, eng: f(), limit: 500,
			spec:    workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 4 * kib, Weight: 1}}, ReadPct: 100, RandomPct: 100, QueueDepth: 4, Workers: 1},
			targets: []engine.Target{{FD: fd, Region: workload.Region{Len: 4 * mib}}}}
		ws := h.run()
		for _, tr := range h.trace {
			require.Equal(t, -int64(unix.EBADF), tr.res, describe(tr))
		}
		var ops, errs uint64
		for _, l := range ws[0].Lanes() {
			ops += l.Read.Latency.Count()
			errs += l.Read.ErrorCount(engine.ErrOther)
		}
		require.Zero(t, ops)
		require.EqualValues(t, len(h.trace), errs)
		require.EqualValues(t, len(h.trace), h.ctl.Errors())
		require.NotNil(t, h.ctl.FirstError())
		require.Contains(t, h.ctl.FirstError().Error(), "bad file descriptor")
	})
	t.Run("ShortRead", func(t *testing.T) {
		if isBlock(t, path) {
			t.Skip("a block device has no end of file inside its size") //hygiene:skip a case for files only
		}
		small := tempFile(t, t.TempDir(), 1*mib)
		fd := openDirect(t, small, unix.O_RDONLY)
		h := &harness{t: t, eng: f(), limit: 2000,
			spec:    workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 4 * kib, Weight: 1}}, ReadPct: 100, RandomPct: 100, QueueDepth: 4, Workers: 1},
			targets: []engine.Target{{FD: fd, Region: workload.Region{Len: 2 * mib}}}}
		ws := h.run()
		short := 0
		for _, tr := range h.trace {
			if tr.off >= mib {
				require.Zero(t, tr.res, describe(tr))
				short++
			} else {
				require.Equal(t, tr.len, tr.res, describe(tr))
			}
		}
		require.Greater(t, short, 0)
		var shortCounted, ok uint64
		for _, l := range ws[0].Lanes() {
			shortCounted += l.Read.ErrorCount(engine.ErrShort)
			ok += l.Read.Latency.Count()
		}
		require.EqualValues(t, short, shortCounted)
		require.EqualValues(t, len(h.trace)-short, ok)
	})
}

func testErrorBudget(t *testing.T, f Factory, path string) {
	fd := openDirect(t, path, unix.O_WRONLY)
	stopped := make(chan struct{})
	ctl := engine.NewControl(5, func() { close(stopped) })
	h := &harness{t: t, eng: f(), ctl: ctl,
		spec:    workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 4 * kib, Weight: 1}}, ReadPct: 100, RandomPct: 100, QueueDepth: 8, Workers: 2},
		targets: []engine.Target{{FD: fd, Region: workload.Region{Len: 4 * mib}}}}
	h.run() // returns by itself: the budget stops it
	<-stopped
	require.GreaterOrEqual(t, ctl.Errors(), uint64(5))
	// In-flight I/Os may still fail after the budget is spent, never more
	// than one per outstanding slot.
	require.LessOrEqual(t, ctl.Errors(), uint64(5+2*8))
	require.Contains(t, ctl.StopReason(), "stopped after")
}

func testRamp(t *testing.T, f Factory, path string) {
	fd := openDirect(t, path, unix.O_RDONLY)
	h := &harness{t: t, eng: f(), limit: 1000,
		spec:    workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 4 * kib, Weight: 1}}, ReadPct: 100, RandomPct: 100, QueueDepth: 2, Workers: 1},
		targets: []engine.Target{{FD: fd, Region: workload.Region{Len: 4 * mib}}}}
	// Measuring stays off, as during ramp-up: I/O runs but nothing counts.
	h.ctl = engine.NewControl(0, nil)
	ws := func() []*engine.Worker {
		spec := h.spec.WithDefaults()
		spec.Duration = 1
		start := make(chan struct{})
		ws, err := engine.NewWorkers(engine.WorkerSet{Spec: &spec, Targets: h.targets, Ctl: h.ctl, Start: start, Seed: 7})
		require.NoError(t, err)
		t.Cleanup(func() { engine.CloseWorkers(ws) })
		ws[0].Trace = h.record
		done := make(chan error, 1)
		go func() { done <- h.eng.Run(ws[0]) }()
		close(start)
		require.NoError(t, <-done)
		return ws
	}()
	require.GreaterOrEqual(t, len(h.trace), h.limit)
	for _, l := range ws[0].Lanes() {
		require.Zero(t, l.Read.Latency.Count(), "I/O during ramp-up was counted")
		require.Zero(t, l.Read.Bytes())
	}
}

func testRate(t *testing.T, f Factory, path string) {
	fd := openDirect(t, path, unix.O_RDONLY)
	const rate, window = 400, 500 * time.Millisecond
	h := &harness{t: t, eng: f(),
		spec:    workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 4 * kib, Weight: 1}}, ReadPct: 100, RandomPct: 100, QueueDepth: 2, Workers: 2, RateIOPS: rate},
		targets: []engine.Target{{FD: fd, Region: workload.Region{Len: 4 * mib}}}}
	h.ctl = engine.NewControl(0, nil)
	began := time.Now()
	timer := time.AfterFunc(window, h.ctl.Stop)
	defer timer.Stop()
	ws := h.run()
	elapsed := time.Since(began).Seconds()
	n := float64(len(h.trace))
	// Never faster than the limit (one I/O per lane may start at once):
	// an invariant. How close to it a loaded machine comes is not.
	require.LessOrEqual(t, n, rate*elapsed+4, "rate limit exceeded")
	require.Positive(t, n, "the rate-limited run did nothing")
	// Every paced I/O has an intended start, and its latency from it is
	// recorded beside its service time: as many, and never shorter (an
	// I/O is never submitted before its slot).
	for _, tr := range h.trace {
		require.Positive(t, tr.due, "a paced I/O has an intended start")
	}
	var recorded uint64
	for _, w := range ws {
		for _, l := range w.Lanes() {
			require.NotNil(t, l.Read.Intended)
			require.Equal(t, l.Read.Latency.Count(), l.Read.Intended.Count(), "one intended latency per I/O")
			require.GreaterOrEqual(t, l.Read.Intended.Sum(), l.Read.Latency.Sum(), "from the intended start is never shorter than the service time")
			require.GreaterOrEqual(t, l.Read.Intended.Min(), l.Read.Latency.Min())
			recorded += l.Read.Intended.Count()
		}
	}
	require.Equal(t, uint64(len(h.trace)), recorded, "every completed I/O")
}

func isBlock(t *testing.T, path string) bool {
	st, err := os.Stat(path)
	require.NoError(t, err)
	return st.Mode()&os.ModeDevice != 0
}

// readDirect reads n bytes at off with O_DIRECT into mmap'd memory.
func readDirect(t *testing.T, path string, off, n int64) []byte {
	t.Helper()
	fd := openDirect(t, path, unix.O_RDONLY)
	buf, err := iobuf.New(1, int(n), 0)
	require.NoError(t, err)
	defer buf.Close()
	b := buf.Slot(0, n)
	got, err := unix.Pread(fd, b, off)
	require.NoError(t, err)
	require.EqualValues(t, n, got)
	return append([]byte(nil), b...)
}

// zeroStamps stamps every 4 KiB block of region with its offset and
// sequence 0,
// through O_DIRECT so that device and file are treated alike.
func zeroStamps(t *testing.T, path string, region workload.Region) {
	t.Helper()
	fd := openDirect(t, path, unix.O_RDWR)
	buf, err := iobuf.New(1, int(region.Len), 0)
	require.NoError(t, err)
	defer buf.Close()
	b := buf.Slot(0, region.Len)
	for off := int64(0); off < region.Len; off += 4 * kib {
		engine.Stamp(b[off:off+16], region.Start+off, 0)
	}
	n, err := unix.Pwrite(fd, b, region.Start)
	require.NoError(t, err)
	require.EqualValues(t, region.Len, n)
}

func testQueueDepth(t *testing.T, f Factory, path string) {
	// Two targets (the same file through two descriptors, on disjoint
	// regions), so that an engine that shares its queue between targets
	// instead of keeping the depth on each is caught.
	regions := []workload.Region{{Len: 8 * mib}, {Start: 16 * mib, Len: 8 * mib}}
	targets := []engine.Target{
		{FD: openDirect(t, path, unix.O_RDONLY), Region: regions[0], Index: 0},
		{FD: openDirect(t, path, unix.O_RDONLY), Region: regions[1], Index: 1},
	}
	const qd, workers = 4, 2
	// depth: each worker's completions wait until it has had qd I/Os in
	// flight on each of its targets at once (see harness.awaitDepth), so
	// that reaching the depth is the engine's doing, not the scheduler's.
	h := &harness{t: t, eng: f(), limit: 8000, depth: qd * len(targets),
		spec:    workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 4 * kib, Weight: 1}}, ReadPct: 100, RandomPct: 100, QueueDepth: qd, Workers: workers},
		targets: targets}
	h.run()
	require.GreaterOrEqual(t, len(h.trace), h.limit)
	require.False(t, h.overIssued, "an I/O completed that the engine never reported issuing")
	perTarget := [2]int{}
	for _, tr := range h.trace {
		require.Equal(t, tr.len, tr.res, describe(tr))
		r := regions[tr.target]
		require.True(t, tr.off >= r.Start && tr.off+tr.len <= r.Start+r.Len, "target %d: %s outside its region", tr.target, describe(tr))
		perTarget[tr.target]++
	}
	require.Positive(t, perTarget[0])
	require.Positive(t, perTarget[1])
	// Every worker had exactly qd I/Os in flight on each target at its
	// peak: never more, and the depth was reached, on both targets at
	// once (an engine that shares qd lanes between the targets never has
	// more than qd in flight over both, even if now and then all of them
	// happen to be on one target).
	for w := 0; w < workers; w++ {
		for tg := range targets {
			require.Equal(t, qd, h.maxInFlight[laneKey{w, tg}], "worker %d target %d: peak I/Os in flight", w, tg)
		}
		require.Equal(t, qd*len(targets), h.maxInFlight[laneKey{w, allTargets}], "worker %d: peak I/Os in flight over its targets", w)
	}
	// Nothing is left in flight once Run has returned.
	for k, n := range h.inFlight {
		require.Zero(t, n, "worker %d target %d still has I/O in flight after Run returned", k.worker, k.target)
	}
}

func testVerify(t *testing.T, f Factory, path string) {
	region := workload.Region{Len: 1 * mib}
	fd := openDirect(t, path, unix.O_RDWR)
	v, err := engine.NewVerifier(99, []engine.VerifyTarget{{Region: region.Len, Unit: 4 * kib}})
	require.NoError(t, err)
	bs := []workload.BlockSize{{Bytes: 4 * kib, Weight: 1}}
	phase := func(read, random, qd, workers, limit int) (*harness, []*engine.Worker) {
		h := &harness{t: t, eng: f(), limit: limit, verify: v,
			spec:    workload.Spec{BlockSizes: bs, ReadPct: read, RandomPct: random, QueueDepth: qd, Workers: workers},
			targets: []engine.Target{{FD: fd, Region: region}}}
		return h, h.run()
	}
	count := func(ws []*engine.Worker) (verified, unverified, failed uint64) {
		for _, w := range ws {
			for _, l := range w.Lanes() {
				verified += l.Read.Verified()
				unverified += l.Read.Unverified()
				failed += l.Read.ErrorCount(engine.ErrVerify)
			}
		}
		return
	}

	// Reads of what this run never wrote cannot be checked.
	h, ws := phase(100, 100, 4, 1, 200)
	verified, unverified, failed := count(ws)
	require.Zero(t, verified+failed)
	require.EqualValues(t, len(h.trace), unverified)

	// Write the region once (sequentially), then every read checks out,
	// also while writes run beside them.
	phase(0, 0, 4, 1, int(region.Len/(4*kib)))
	h, ws = phase(100, 100, 4, 1, 2000)
	verified, unverified, failed = count(ws)
	require.EqualValues(t, len(h.trace), verified)
	require.Zero(t, unverified+failed)
	_, ws = phase(50, 100, 8, 2, 4000)
	_, unverified, failed = count(ws)
	require.Zero(t, failed, "a false positive while reads and writes overlap")
	require.Zero(t, unverified)
	n, _, _ := v.Failures()
	require.Zero(t, n)

	// A read is judged and counted in the same window: with counting
	// switched on and off all the time (a window opening or closing while
	// reads complete), every read counted was judged, and none judged
	// went uncounted.
	ctl := engine.NewControl(0, nil)
	flipped := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(flipped)
		for on := false; ; on = !on {
			select {
			case <-done:
				return
			default:
				ctl.SetMeasuring(on)
				runtime.Gosched()
			}
		}
	}()
	h = &harness{t: t, eng: f(), limit: 4000, verify: v, ctl: ctl,
		spec:    workload.Spec{BlockSizes: bs, ReadPct: 100, RandomPct: 100, QueueDepth: 4, Workers: 2},
		targets: []engine.Target{{FD: fd, Region: region}}}
	ws = h.run()
	close(done)
	<-flipped
	var counted, judged uint64
	for _, w := range ws {
		for _, l := range w.Lanes() {
			counted += l.Read.Latency.Count()
			judged += l.Read.Verified() + l.Read.Unverified()
		}
	}
	require.Positive(t, counted)
	require.Equal(t, counted, judged, "reads counted vs reads judged while the window opens and closes")

	// Damage three sectors behind the engine's back: reading the region
	// finds exactly those.
	bad := []int64{8*kib + 512, 300 * kib, region.Len - 512}
	junk, err := iobuf.New(1, 512, 5)
	require.NoError(t, err)
	defer junk.Close()
	for _, off := range bad {
		_, err := unix.Pwrite(fd, junk.Slot(0, 512), off)
		require.NoError(t, err)
	}
	_, ws = phase(100, 0, 4, 1, 2*int(region.Len/(4*kib)))
	_, _, failed = count(ws)
	require.GreaterOrEqual(t, failed, uint64(len(bad)))
	_, sectors, _ := v.Failures()
	var found []int64
	for _, s := range sectors {
		found = append(found, s.Offset)
	}
	require.Equal(t, bad, found, "every damaged sector, and nothing else")

	// A lost write: keep three blocks as they are, write the region over,
	// then put the old blocks back behind the engine's back (sound sectors,
	// in their places, of this run: only their age is wrong). Reading the
	// region finds every sector of those blocks and nothing else new.
	phase(0, 0, 1, 1, int(region.Len/(4*kib)))
	lost := []int64{0, 260 * kib, region.Len - 8*kib} // none holds a damaged sector above
	old, err := iobuf.New(len(lost), int(4*kib), 6)
	require.NoError(t, err)
	defer old.Close()
	for i, off := range lost {
		_, err := unix.Pread(fd, old.Slot(i, 4*kib), off)
		require.NoError(t, err)
	}
	phase(0, 0, 1, 1, int(region.Len/(4*kib)))
	for i, off := range lost {
		_, err := unix.Pwrite(fd, old.Slot(i, 4*kib), off)
		require.NoError(t, err)
	}
	before := len(sectors)
	_, ws = phase(100, 0, 4, 1, 2*int(region.Len/(4*kib)))
	_, _, failed = count(ws)
	require.GreaterOrEqual(t, failed, uint64(len(lost)))
	_, sectors, _ = v.Failures()
	require.True(t, v.LostWrites())
	var stale []int64
	for _, s := range sectors {
		if s.Problem == verify.Stale.String() {
			stale = append(stale, s.Offset)
		}
	}
	var want []int64
	for _, off := range lost {
		for s := off; s < off+4*kib; s += verify.SectorSize {
			want = append(want, s)
		}
	}
	require.Equal(t, want, stale, "every sector of the blocks put back, and nothing else")
	require.Len(t, sectors, before+len(want))

	// No false lost write where writes and reads of 4 and 8 KiB crowd 16
	// units: overlapping writes leave their units' floors alone, and a
	// read that a write overlapped is not judged by its age.
	small := workload.Region{Len: 64 * kib}
	v2, err := engine.NewVerifier(100, []engine.VerifyTarget{{Region: small.Len, Unit: 4 * kib}})
	require.NoError(t, err)
	crowd := func(read, qd, workers, limit int, sizes ...workload.BlockSize) []*engine.Worker {
		h := &harness{t: t, eng: f(), limit: limit, verify: v2,
			spec:    workload.Spec{BlockSizes: sizes, ReadPct: read, RandomPct: 100, QueueDepth: qd, Workers: workers},
			targets: []engine.Target{{FD: fd, Region: small}}}
		if read == 0 {
			h.spec.RandomPct = 0
		}
		return h.run()
	}
	crowd(0, 1, 1, int(small.Len/(4*kib)), bs...) // every unit written once
	ws = crowd(50, 8, 2, 20000, workload.BlockSize{Bytes: 4 * kib, Weight: 1}, workload.BlockSize{Bytes: 8 * kib, Weight: 1})
	verified, _, failed = count(ws)
	n2, sectors2, _ := v2.Failures()
	require.Zero(t, failed, "a false positive while 4 and 8 KiB reads and writes overlap on 16 units: %v", sectors2)
	require.Zero(t, n2)
	require.Positive(t, v2.Judged(), "no read was ever judged for lost writes")
	t.Logf("lost writes: %d of %d verified reads judged by their age", v2.Judged(), verified)
}
