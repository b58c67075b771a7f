package uring

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// maxWait bounds one timed wait of a paced ring, so that a stop is noticed
// quickly even at a low rate.
const maxWait = int64(50 * time.Millisecond)

// slot is one queue position: a fixed target and buffer, and the I/O it
// carries. Its index in loop.slots is the SQE's user_data and, when the
// buffers are registered, the fixed buffer's index.
type slot struct {
	op   engine.IO
	t0   int64 // when the io_uring_enter that submitted op began
	buf  []byte
	addr uint64 // &buf[0], for the SQE
	tgt  *target
}

// target is the ring's state on one target: a single generator and a
// single lane, since the ring is the only writer.
type target struct {
	fd   int32 // fixed-file index when files are registered, else the descriptor
	gen  *workload.Generator
	lane *engine.Lane
	seq  uint64 // writes stamped so far
	// The adaptive rule's memory of the target: its last I/O prepared
	// (lastOff, lastEnd) and the batch it went in (lastBatch, 0: none
	// yet), and its last I/O of the batches already with the kernel
	// (prevOff, prevEnd; hasPrev): an I/O that touches the latter starts
	// a new call.
	lastOff, lastEnd int64
	lastBatch        uint64
	prevOff, prevEnd int64
	hasPrev          bool
}

// loop is one worker's ring and its queue slots.
type loop struct {
	w        *engine.Worker
	r        *ring
	slots    []slot
	targets  []target
	free     []uint32 // slots with no I/O in flight (a stack)
	batch    []uint32 // slots prepared since the last io_uring_enter
	readOp   uint8
	writeOp  uint8
	sqeFlags uint8
	pacer    engine.Pacer
	// sleep: a paced ring with nothing in flight waits for its next slot
	// here, in the runtime's poller, not in io_uring_enter (see
	// engine.Sleeper); nil when unpaced.
	sleep *engine.Sleeper
	// brief: a paced ring, its group's only worker, waits for its
	// completions first without telling the scheduler (see briefWait):
	// with more paced workers than processors, one whose slot came would
	// wait for a processor as long as another's brief wait lasts.
	brief bool

	// Submission, as fio does it (iodepth_batch_submit,
	// iodepth_batch_complete_min and _max): at most batchMax I/Os go to
	// the kernel in one io_uring_enter (1 by default: the kernel plugs a
	// submission of three or more, and the block layer merges contiguous
	// I/Os submitted together, so a sequential stream would reach the
	// device in other sizes than it asked for); with its queue full the
	// loop waits for completeMin completions (0: it polls), and refills
	// at most completeMax slots before it submits again. Completions are
	// recorded as soon as they are seen; their slots wait in ready (a
	// stack) until a pass releases them, so that the queue stays as deep
	// as fio keeps it (fio reaps one completion, then queues and submits
	// one I/O). submitErr is an io_uring_enter failure met while
	// filling, returned by run.
	batchMax    int
	completeMin int
	completeMax int
	ready       []uint32
	submitErr   error

	// The adaptive rule (workload.Spec.Adaptive; batchMax is then every
	// slot): an I/O that touches another of the batch being prepared on
	// its target (edges), or the last one handed to the kernel for its
	// target, starts a new io_uring_enter, so no two I/Os that could
	// merge are ever submitted together, and a pass that found no such
	// I/O hands all it drew to the kernel in one call. contiguous says
	// whether the last I/O drawn touched its target's previous one (a
	// stream that merges): then the loop refills one completed slot per
	// pass, as fio, so that a sequential stream is submitted and counted
	// (iodepth_level) exactly as fio's; otherwise every completed slot.
	adaptive   bool
	edges      edges
	contiguous bool

	// Flushes (--fsync, --fdatasync), as fio does them on an
	// asynchronous engine: once a flush is due on a target (flushDue,
	// else -1) the loop issues nothing more, waits for every I/O in
	// flight, then submits the flush alone and resumes when it completes.
	// Its latency is then the flush's own, not the writes' before it.
	flushDue      int
	flushInFlight bool
	flushT0       int64 // when the io_uring_enter that submitted it began (0: not yet)

	// Iometer's transfer delay: a drawn I/O that starts a burst of a line
	// with a delay waits in slot held (else -1) until holdUntil, while
	// the loop keeps reaping; like Iometer's worker, the ring issues
	// nothing else meanwhile. delays says whether any line has one.
	delays    bool
	held      int
	holdUntil int64

	// spent: the worker's stop-after budget is spent; the loop issues
	// nothing more and returns once what is in flight has completed.
	spent bool

	// With the targets in turn (Spec.FilesInTurn, fio's
	// file_service_type=roundrobin:N) the slots are the worker's
	// QueueDepth over all its targets: each I/O goes to the target
	// the rotation gives (engine.Turn); nil: every slot keeps its own
	// target.
	turn *engine.Turn
}

// flushTag marks a CQE's user_data as a flush's (the low bits are the
// target's index); a slot's user_data is below it.
const flushTag = uint64(1) << 32

// Run implements engine.Engine.
func (e *Engine) Run(w *engine.Worker) error {
	if err := e.Available(); err != nil {
		return fmt.Errorf("uring: %w", err)
	}
	// An unpaced ring is set up with SINGLE_ISSUER and DEFER_TASKRUN:
	// every io_uring_enter must come from the thread that created it, so
	// its goroutine is locked to that thread (completions are then posted
	// only when the thread asks, with no task work interrupting it).
	//
	// A paced ring is not, and its goroutine is free: it spends nearly
	// all its time asleep in the runtime's poller (engine.Sleeper), and a
	// locked goroutine parks there only by handing its processor to
	// another thread, which must wake to poll, and back when the timer
	// fires: at a canary's 20 I/Os a second that was 4 futex calls and
	// 2 more context switches per I/O than the goroutine's own thread
	// waking from the poller and running it (docs/performance.md, "The
	// idle daemon"). Without DEFER_TASKRUN a completion's task work is
	// queued to the thread that submitted it and run when it enters the
	// kernel; a paced ring submits and waits in one io_uring_enter
	// (submitAndWaitBrief), so that thread is the one waiting; should the
	// goroutine move between submitting and a later wait, the kernel
	// interrupts the submitting thread's sleep to run the work, and the
	// runtime restarts the call. The ring's descriptor is then not
	// registered with a thread either (registerRing).
	if !w.Paced() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	l, err := newLoop(w)
	if err != nil {
		return fmt.Errorf("uring: worker %d: %w", w.ID, err)
	}
	if l.sleep != nil {
		defer l.sleep.Close()
	}
	w.WaitStart()
	runErr := l.run()
	if err := l.r.close(); err != nil && runErr == nil {
		runErr = fmt.Errorf("uring: worker %d: %w", w.ID, err)
	}
	return runErr
}

// newLoop sets up the ring, the lanes and the slots, and registers the
// targets and buffers. Registration is an optimisation: when the kernel
// refuses it (an old kernel, a locked-memory limit), the loop uses plain
// descriptors and READ/WRITE with the same buffers.
func newLoop(w *engine.Worker) (*loop, error) {
	n := w.QueueDepth * len(w.Targets)
	turn := w.Spec.FilesInTurn > 0 && len(w.Targets) > 1
	if turn {
		n = w.QueueDepth
	}
	if n <= 0 {
		return nil, fmt.Errorf("nothing to do: queue depth %d, %d targets", w.QueueDepth, len(w.Targets))
	}
	locked := !w.Paced() // Run locks an unpaced ring's goroutine to its thread
	var without uint32
	if !locked {
		without = threadBound
	}
	r, err := newRingWithout(uint32(n), without)
	if err != nil {
		return nil, err
	}
	batchMax, completeMin, completeMax := w.Spec.Submission(n)
	l := &loop{
		w:           w,
		r:           r,
		slots:       make([]slot, n),
		targets:     make([]target, len(w.Targets)),
		free:        make([]uint32, 0, n),
		batch:       make([]uint32, 0, n),
		readOp:      opRead,
		writeOp:     opWrite,
		pacer:       w.LanePacer(1, 0),
		batchMax:    batchMax,
		completeMin: completeMin,
		completeMax: completeMax,
		ready:       make([]uint32, 0, n),

		flushDue: -1,
		held:     -1,
	}
	if l.adaptive = w.Spec.Adaptive(); l.adaptive {
		l.edges = newEdges(n)
	}
	for _, ln := range w.Spec.Normalized() {
		l.delays = l.delays || ln.DelayMs > 0
	}
	if l.pacer.Paced() {
		l.sleep = w.Ctl.NewSleeper()
		l.brief = w.Spec.Workers <= 1
	}
	fds := make([]int32, len(w.Targets))
	for t, tgt := range w.Targets {
		gen, err := w.Generator(t, 0)
		if err != nil {
			if l.sleep != nil {
				l.sleep.Close()
			}
			r.close()
			return nil, err
		}
		fds[t] = int32(tgt.FD)
		l.targets[t] = target{fd: int32(tgt.FD), gen: gen, lane: w.NewLane(t)}
	}
	if turn {
		gens := make([]*workload.Generator, len(l.targets))
		for t := range l.targets {
			gens[t] = l.targets[t].gen
		}
		l.turn = engine.NewTurn(w.Spec, gens)
	}
	if r.registerFiles(fds) == nil {
		for t := range l.targets {
			l.targets[t].fd = int32(t)
		}
		l.sqeFlags = sqeFixedFile
	}
	iovs := make([]unix.Iovec, n)
	for i := range l.slots {
		t, q := i/w.QueueDepth, i%w.QueueDepth
		buf := w.Slot(t, q, w.Spec.MaxBlock()) // with the targets in turn: t is 0

		l.slots[i] = slot{buf: buf, addr: uint64(uintptr(unsafe.Pointer(&buf[0]))), tgt: &l.targets[t]}
		iovs[i] = unix.Iovec{Base: &buf[0]}
		iovs[i].SetLen(len(buf))
	}
	if len(iovs) <= maxRegisteredBufs && r.registerBuffers(iovs) == nil {
		l.readOp, l.writeOp = opReadFixed, opWriteFixed
	}
	if locked {
		_ = r.registerRing() // by descriptor when it cannot (Linux < 5.18)
	} else {
		_ = r.enablePoll() // else a long wait blocks in io_uring_enter
	}
	// Slot 0 is handed out first.
	for i := n - 1; i >= 0; i-- {
		l.free = append(l.free, uint32(i))
	}
	return l, nil
}

// run is the hot loop: release the slots of completed I/Os (fio's reap),
// fill every free slot, handing the I/Os to the kernel batchMax at a time
// as they are drawn; submit the last batch and wait for completions in one
// io_uring_enter; record every completion there is. Once the control says
// stop it submits nothing more and returns when every I/O in flight has
// completed. It allocates nothing and takes no lock.
func (l *loop) run() error {
	ctl := l.w.Ctl
	var y engine.Yielder
	for {
		var waitNs int64
		if !ctl.Stopped() {
			l.release()
			waitNs = l.fill()
			if l.submitErr != nil {
				return l.submitErr
			}
		} else {
			l.free = append(l.free, l.ready...)
			l.ready = l.ready[:0]
			if l.held >= 0 {
				l.free = append(l.free, uint32(l.held)) // its delay outlived the run
				l.held = -1
			}
		}
		if len(l.free) == len(l.slots) && !l.flushInFlight && waitNs == 0 {
			return nil // stopped, and nothing in flight
		}
		if waitNs > 0 && l.sleep != nil && l.idle() {
			// Nothing in flight, nothing prepared: only the pacer's
			// slot (or a delay) to wait for. Until returns false on a
			// stop, which the next pass sees.
			l.sleep.Until(engine.Nanotime() + waitNs)
			y = engine.Yielder{} // it has just been through the scheduler
			continue
		}
		minComplete := l.waitFor()
		if minComplete == 0 {
			waitNs = 0 // completions in hand, or polling: do not sleep
		}
		t0 := engine.Nanotime()
		n := len(l.batch)
		for _, i := range l.batch {
			l.slots[i].t0 = t0
		}
		if l.flushInFlight && l.flushT0 == 0 {
			l.flushT0 = t0
		}
		l.batch = l.batch[:0]
		if n > 0 {
			if l.adaptive {
				l.edges.next()
			}
			if l.w.Commit != nil {
				l.w.Commit()
			}
		}
		var errno unix.Errno
		if l.brief && waitNs == 0 && minComplete > 0 {
			// Paced, waiting for completions only: see briefWait.
			errno = l.r.submitAndWaitBrief(minComplete)
		} else {
			_, errno = l.r.submitAndWait(minComplete, min(waitNs, maxWait))
		}
		t1 := engine.Nanotime()
		switch errno {
		case 0, unix.EINTR, unix.ETIME, unix.EAGAIN, unix.EBUSY:
			// EINTR: a signal (the Go runtime preempts with SIGURG)
			// cut the wait short; ETIME: a paced wait ran out;
			// EAGAIN, EBUSY: the kernel could not take the SQEs now.
			// In every case unsubmitted SQEs stay queued for the
			// next pass.
		default:
			return fmt.Errorf("uring: worker %d: io_uring_enter: %w", l.w.ID, errno)
		}
		if n > 0 && ctl.Measuring() {
			l.w.Depth.Submitted(n, l.inFlight())
		}
		l.reap(t1)
		y.TickRing(t1, t1-t0)
	}
}

// release hands the slots of completed I/Os back to fill: completeMax of
// them while the loop runs at its queue depth, as fio reaps; every one
// once it does not (paced, holding a delay, its budget spent, or a flush
// waiting for the queue to drain), when refilling one at a time would
// only add passes.
func (l *loop) release() {
	n := len(l.ready)
	if n == 0 {
		return
	}
	if len(l.free) == 0 && !l.pacer.Paced() && !l.delays && !l.spent && l.flushDue < 0 {
		most := l.completeMax
		if l.adaptive && l.contiguous {
			most = 1
		}
		n = min(n, most)
	}
	l.free = append(l.free, l.ready[len(l.ready)-n:]...)
	l.ready = l.ready[:len(l.ready)-n]
	if l.w.Ctl.Measuring() {
		l.w.Depth.Reaped(n)
	}
}

// inFlight is the number of I/Os handed to the kernel or about to be, and
// completed ones not yet released: the depth fio counts.
func (l *loop) inFlight() int {
	n := len(l.slots) - len(l.free)
	if l.held >= 0 {
		n--
	}
	return n
}

// waitFor is how many completions the next io_uring_enter waits for:
// none while completed slots wait to be released; one, or with the queue
// full fio's iodepth_batch_complete_min (0: none, the loop polls), never
// more than are in the kernel.
func (l *loop) waitFor() uint32 {
	switch {
	case len(l.ready) > 0:
		return 0
	case l.completeMin == 1 || l.flushInFlight:
		return 1
	case len(l.free) > 0 || l.held >= 0:
		return 1 // not full: fio waits only with its queue full
	case l.completeMin == 0:
		return 0
	}
	return uint32(max(1, min(l.completeMin, l.inFlight())))
}

// submit hands the prepared batch to the kernel (fio's commit) when the
// next I/O, drawn but not yet prepared, would make it too long, or, by the
// adaptive rule, would touch one of it. The adaptive rule's call also
// posts and reaps the completions that have come (GETEVENTS without a
// wait), so that none waits for the pass's last call to be seen.
func (l *loop) submit() {
	t0 := engine.Nanotime()
	for _, i := range l.batch {
		l.slots[i].t0 = t0
	}
	n := len(l.batch)
	l.batch = l.batch[:0]
	if l.w.Commit != nil {
		l.w.Commit()
	}
	var errno unix.Errno
	if l.adaptive {
		l.edges.next()
		_, errno = l.r.submitAndWait(0, 0)
		l.reap(engine.Nanotime())
	} else {
		_, errno = l.r.submit()
	}
	switch errno {
	case 0, unix.EINTR, unix.EAGAIN, unix.EBUSY:
		// As in run: what the kernel did not take goes with the next
		// io_uring_enter.
	default:
		l.submitErr = fmt.Errorf("uring: worker %d: io_uring_enter: %w", l.w.ID, errno)
	}
	if l.w.Ctl.Measuring() {
		l.w.Depth.Submitted(n, l.inFlight()-1) // the drawn I/O is not in flight yet
	}
}

// idle reports whether the ring has nothing in flight and nothing
// prepared: every slot free but the one a delay holds, no flush, no
// completed slot waiting to be released.
func (l *loop) idle() bool {
	free := len(l.free)
	if l.held >= 0 {
		free++
	}
	return free == len(l.slots) && !l.flushInFlight && len(l.batch) == 0 && len(l.ready) == 0
}

// fill prepares an I/O in every free slot the pacer allows. It returns how
// long to wait for the pacer (or a delay), or 0.
func (l *loop) fill() int64 {
	if l.flushDue >= 0 {
		if !l.flushInFlight && len(l.free) == len(l.slots) {
			l.prepFlush()
		}
		return 0
	}
	paced := l.pacer.Paced()
	var now int64
	if paced || l.delays {
		now = engine.Nanotime()
	}
	for l.flushDue < 0 {
		if l.held >= 0 {
			if d := l.holdUntil - now; d > 0 {
				return d
			}
			i := uint32(l.held)
			l.held = -1
			l.prep(i)
			continue
		}
		if len(l.free) == 0 || l.spent {
			break
		}
		i := l.free[len(l.free)-1]
		s := &l.slots[i]
		if l.turn != nil {
			at, ok := l.turn.Target()
			if !ok {
				l.spent = true
				break
			}
			s.tgt = &l.targets[at]
		}
		if d := l.pacer.Next(now, s.tgt.gen, &s.op); d > 0 {
			return d
		}
		l.free = l.free[:len(l.free)-1]
		if !l.w.Take(s.op.Len) {
			l.free = append(l.free, i)
			l.spent = true
			break
		}
		if l.turn != nil {
			l.turn.Took()
		}
		if s.op.DropCache {
			l.w.DropCache(l.w.Targets[s.tgt.lane.Target].FD)
		}
		if s.op.DelayNs > 0 {
			l.held, l.holdUntil = int(i), now+s.op.DelayNs
			continue
		}
		l.prep(i)
	}
	return 0
}

// prep writes the SQE of the I/O drawn into slot i, once a full batch
// before it has gone to the kernel.
func (l *loop) prep(i uint32) {
	s := &l.slots[i]
	t := s.tgt
	if l.adaptive {
		l.split(t, s.op.Offset, s.op.Offset+s.op.Len)
	}
	if len(l.batch) >= l.batchMax {
		l.submit()
	}
	opcode := l.readOp
	if s.op.Write {
		t.seq++
		l.w.PrepareWrite(t.lane, &s.op, s.buf[:s.op.Len], t.seq)
		opcode = l.writeOp
		if l.w.FlushDue(t.lane) {
			l.flushDue = t.lane.Target
		}
	} else {
		l.w.PrepareRead(t.lane, &s.op)
	}
	*l.r.nextSQE() = sqe{
		opcode:   opcode,
		flags:    l.sqeFlags,
		fd:       t.fd,
		off:      uint64(s.op.Offset),
		addr:     s.addr,
		len:      uint32(s.op.Len),
		userData: uint64(i),
		bufIndex: uint16(i), // ignored unless the opcode is a fixed one
	}
	l.batch = append(l.batch, i)
	if l.w.Issue != nil {
		l.w.Issue(t.lane, &s.op)
	}
}

// split applies the adaptive rule to the I/O [off, end) just drawn on
// target t: when it touches an I/O of the batch being prepared on t, or
// t's last I/O of an earlier batch (already with the kernel, or waiting in
// the device's queue), the batch goes to the kernel first, so that the
// block layer never finds the two in one plug. It then records the I/O in
// the batch. A few hash probes per I/O; nothing allocated.
func (l *loop) split(t *target, off, end int64) {
	e := &l.edges
	t.settle(e.batch)
	idx := t.lane.Target
	touches := e.add(idx, off, end) || t.hasPrev && (off == t.prevEnd || end == t.prevOff)
	l.contiguous = touches
	if touches && len(l.batch) > 0 {
		l.submit() // moves e to the next batch
		t.settle(e.batch)
		e.add(idx, off, end)
	}
	t.lastOff, t.lastEnd, t.lastBatch = off, end, e.batch
}

// settle makes the target's last I/O its last one with the kernel once
// its batch is no longer the one being prepared (batch).
func (t *target) settle(batch uint64) {
	if t.lastBatch != 0 && t.lastBatch != batch {
		t.prevOff, t.prevEnd, t.hasPrev = t.lastOff, t.lastEnd, true
	}
}

// prepFlush writes the SQE of the flush due, once nothing is in flight.
func (l *loop) prepFlush() {
	t := &l.targets[l.flushDue]
	var flags uint32
	if l.w.FlushDatasync() {
		flags = fsyncDatasync
	}
	*l.r.nextSQE() = sqe{
		opcode:   opFsync,
		flags:    l.sqeFlags,
		fd:       t.fd,
		rwFlags:  flags,
		userData: flushTag | uint64(t.lane.Target),
	}
	l.flushInFlight, l.flushT0 = true, 0
}

// reap records every completion in the CQ ring with t1, the one clock
// reading taken when io_uring_enter returned. With DEFER_TASKRUN the kernel
// posts completions only inside that call, so every CQE reaped here arrived
// before t1; without it, one that lands while the loop reaps is stamped up
// to the loop's length (well under a microsecond per CQE) early.
func (l *loop) reap(t1 int64) {
	r := l.r
	w, trace := l.w, l.w.Trace
	head := r.cqHeadLocal
	tail := atomic.LoadUint32(r.cqTail)
	for ; head != tail; head++ {
		c := &r.cqes[head&r.cqMask]
		if c.userData&flushTag != 0 {
			t := &l.targets[uint32(c.userData)]
			w.CompleteFlush(t.lane, int64(c.res), l.flushT0, t1)
			l.flushInFlight, l.flushDue = false, -1
			continue
		}
		i, res := uint32(c.userData), int64(c.res)
		s := &l.slots[i]
		w.Complete(s.tgt.lane, &s.op, s.buf, res, s.t0, t1)
		if trace != nil {
			trace(s.tgt.lane, &s.op, res)
		}
		l.ready = append(l.ready, i)
	}
	r.cqHeadLocal = head
	atomic.StoreUint32(r.cqHead, head)
}
