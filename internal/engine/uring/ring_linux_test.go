package uring

import (
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

func TestRingSetup(t *testing.T) {
	requireUring(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, n := range []uint32{1, 3, 32, 100} {
		r, err := newRing(n)
		require.NoError(t, err)
		require.GreaterOrEqual(t, r.sqEntries(), int(n))
		require.GreaterOrEqual(t, len(r.cqes), int(n), "every I/O in flight needs a CQ slot")
		if r.flags&setupDeferTaskrun != 0 {
			require.NotZero(t, r.flags&setupSingleIssuer, "DEFER_TASKRUN without SINGLE_ISSUER")
		}
		require.NoError(t, r.close())
		require.Equal(t, -1, r.fd)
	}
	_, err := newRing(maxEntries + 1)
	require.ErrorContains(t, err, "queue depth × targets")
}

func TestDescribeNamesFlags(t *testing.T) {
	requireUring(t)
	e := New()
	require.Regexp(t, `^setup flags (none|[A-Z_|]+)$`, e.Describe())
	require.Equal(t, "SUBMIT_ALL|SINGLE_ISSUER", describeFlags(setupSingleIssuer|setupSubmitAll))
	require.Equal(t, "none", describeFlags(0))
}

// A paced ring with nothing in flight sleeps in io_uring_enter with a
// timeout; the wait must end with ETIME, not hang.
func TestTimedWaitExpires(t *testing.T) {
	requireUring(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r, err := newRing(2)
	require.NoError(t, err)
	defer r.close()
	began := time.Now()
	var errno unix.Errno
	for errno = unix.EINTR; errno == unix.EINTR; {
		_, errno = r.submitAndWait(1, int64(2*time.Millisecond))
	}
	require.Equal(t, unix.ETIME, errno)
	require.GreaterOrEqual(t, time.Since(began), 2*time.Millisecond)
}

// lockedWithDir skips without io_uring, locks the test's goroutine to its
// thread (as the engine's Run does) for the test, and returns a descriptor
// of a temporary directory: a target for loops that issue no I/O.
func lockedWithDir(t *testing.T) int {
	t.Helper()
	requireUring(t)
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	fd, err := unix.Open(t.TempDir(), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// The engine registers its targets and buffers, so the kernel neither looks
// up a file nor pins pages per I/O; each slot is its own fixed buffer, the
// slot's buffer in the worker's memory.
func TestLoopRegistersFilesAndBuffers(t *testing.T) {
	fd := lockedWithDir(t)
	spec := workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 8192, Weight: 1}}, ReadPct: 100, RandomPct: 100, QueueDepth: 3, Workers: 1}.WithDefaults()
	ws, err := engine.NewWorkers(engine.WorkerSet{Spec: &spec, Ctl: engine.NewControl(0, nil),
		Targets: []engine.Target{{FD: fd, Region: workload.Region{Len: 1 << 20}}, {FD: fd, Region: workload.Region{Len: 1 << 20}, Index: 1}}})
	require.NoError(t, err)
	defer engine.CloseWorkers(ws)
	l, err := newLoop(ws[0])
	require.NoError(t, err)
	defer l.r.close()
	require.True(t, l.r.filesRegistered)
	require.True(t, l.r.bufsRegistered)
	require.Equal(t, uint8(sqeFixedFile), l.sqeFlags)
	require.Equal(t, uint8(opReadFixed), l.readOp)
	require.Equal(t, uint8(opWriteFixed), l.writeOp)
	require.Len(t, l.slots, 6)
	require.Len(t, ws[0].Lanes(), 2, "one lane per target")
	for i, s := range l.slots {
		tg, q := i/3, i%3
		require.Same(t, &ws[0].Slot(tg, q, 8192)[0], &s.buf[0], "slot %d", i)
		require.Same(t, &l.targets[tg], s.tgt)
		require.EqualValues(t, tg, l.targets[tg].fd, "fixed-file index")
	}
	require.Len(t, l.free, 6)
	require.EqualValues(t, 0, l.free[len(l.free)-1])
}

// A ring registers its descriptor with its thread (as t/io_uring does)
// and calls io_uring_enter by index; close gives the index back, so the
// next ring on the thread gets the same one. A paced ring, whose goroutine
// moves between threads, does neither and is bound to no thread.
func TestLoopRegistersTheRingWithItsThread(t *testing.T) {
	fd := lockedWithDir(t)
	newWorker := func(rate int) *engine.Worker {
		spec := workload.Spec{ReadPct: 100, RandomPct: 100, QueueDepth: 2, Workers: 1, RateIOPS: rate}.WithDefaults()
		ws, err := engine.NewWorkers(engine.WorkerSet{Spec: &spec, Ctl: engine.NewControl(0, nil),
			Targets: []engine.Target{{FD: fd, Region: workload.Region{Len: 1 << 20}}}})
		require.NoError(t, err)
		t.Cleanup(func() { engine.CloseWorkers(ws) })
		return ws[0]
	}
	l, err := newLoop(newWorker(0))
	require.NoError(t, err)
	if l.r.enterFlags == 0 {
		l.r.close()
		t.Skip("the kernel does not register ring descriptors (Linux < 5.18)") //hygiene:skip a kernel feature, not something make test installs
	}
	require.Equal(t, uint32(enterRegisteredRing), l.r.enterFlags)
	index := l.r.enterFD
	// A no-op through the registered index completes.
	*l.r.nextSQE() = sqe{opcode: opNop, userData: 7}
	_, errno := l.r.submitAndWait(1, 0)
	require.Zero(t, errno)
	require.EqualValues(t, 1, l.r.completions())
	require.EqualValues(t, 7, l.r.cqes[l.r.cqHeadLocal&l.r.cqMask].userData)
	require.NoError(t, l.r.close())

	l2, err := newLoop(newWorker(0))
	require.NoError(t, err)
	require.Equal(t, index, l2.r.enterFD, "close gave the index back")
	require.NoError(t, l2.r.close())

	paced, err := newLoop(newWorker(20))
	require.NoError(t, err)
	defer paced.sleep.Close()
	require.Zero(t, paced.r.enterFlags, "a paced ring's goroutine is not locked to a thread: by descriptor")
	require.Zero(t, paced.r.flags&threadBound, "nor is the ring bound to one: %s", describeFlags(paced.r.flags))
	require.NoError(t, paced.r.close())
}

func TestSuits(t *testing.T) {
	// A regular file on ext4 or xfs takes RWF_NOWAIT; elsewhere the temp
	// directory's file system decides, so only those are asserted.
	f, err := os.CreateTemp(t.TempDir(), "suits")
	require.NoError(t, err)
	_, err = f.Write(make([]byte, 8192))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	fd, err := unix.Open(f.Name(), unix.O_RDONLY, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	var st unix.Statfs_t
	require.NoError(t, unix.Fstatfs(fd, &st))
	if st.Type == unix.EXT4_SUPER_MAGIC || st.Type == unix.XFS_SUPER_MAGIC {
		require.NoError(t, New().Suits(fd))
	}
	// zram is bio-based and cannot take non-blocking I/O.
	zfd, err := unix.Open("/dev/zram0", unix.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		t.Skipf("no /dev/zram0: %v", err) //hygiene:skip the machine's zram device
	}
	defer unix.Close(zfd)
	if sz, _ := os.ReadFile("/sys/block/zram0/disksize"); string(sz) == "0\n" {
		t.Skip("/dev/zram0 has no size") //hygiene:skip the machine's zram device
	}
	require.ErrorContains(t, New().Suits(zfd), "cannot take non-blocking I/O")
}

// A paced ring whose completion outlasts its brief wait waits for it in
// the runtime's poller, and comes back with it: a 5 ms IORING_OP_TIMEOUT,
// five times the brief wait. And a completion already there when the wait
// begins ends it at once (the poller forgets an edge that came before).
func TestPacedRingWaitsInThePoller(t *testing.T) {
	requireUring(t)
	r, err := newRingWithout(4, threadBound)
	require.NoError(t, err)
	defer r.close()
	require.NoError(t, r.enablePoll())
	ts := unix.NsecToTimespec(int64(5 * time.Millisecond))
	for i := range 3 {
		t0 := time.Now()
		*r.nextSQE() = sqe{opcode: opTimeout, addr: uint64(uintptr(unsafe.Pointer(&ts))), len: 1, userData: uint64(i)}
		require.Zero(t, r.submitAndWaitBrief(1))
		require.GreaterOrEqual(t, time.Since(t0), 5*time.Millisecond, "the timeout ran its course")
		require.EqualValues(t, 1, r.completions())
		c := r.cqes[r.cqHeadLocal&r.cqMask]
		require.EqualValues(t, i, c.userData)
		require.EqualValues(t, -int32(unix.ETIME), c.res)
		r.cqHeadLocal++
		atomic.StoreUint32(r.cqHead, r.cqHeadLocal)
	}
	*r.nextSQE() = sqe{opcode: opNop, userData: 7}
	_, errno := r.submit()
	require.Zero(t, errno)
	for r.completions() == 0 {
		runtime.Gosched() // a NOP completes inline; the CQE is posted by the submitting thread's task work at the latest
	}
	require.NoError(t, r.poll.wait(1), "a completion there before the wait ends it")
	runtime.KeepAlive(&ts)
}
