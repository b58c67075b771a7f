package syncio

import (
	"sync"

	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Engine is the sync engine.
type Engine struct{}

// New returns the sync engine.
func New() *Engine { return &Engine{} }

// Name implements engine.Engine.
func (*Engine) Name() workload.EngineName { return workload.EngineSync }

// Available implements engine.Engine: pread and pwrite are always there.
func (*Engine) Available() error { return nil }

type lane struct {
	fd    int
	buf   []byte
	gen   *workload.Generator
	stats *engine.Lane
	pacer engine.Pacer
	sleep *engine.Sleeper // paced lanes: the pacer's (closed when the lane ends)
	// turn is the worker's targets in turn (Spec.FilesInTurn): the
	// worker's lanes take them together (see drawBooked); nil: one target.
	turn []turnTarget
	// book, when set, is shared by the lanes that draw from the same
	// stream and book against the same budget: a budgeted worker's lanes
	// on one target, or its lanes over its targets in turn. nil: the
	// lane draws and books alone (one lane on its target, or no budget
	// to book against but the run's time).
	book *booking
}

// booking makes a lane's draw and its booking against the worker's
// budget one step, under mu, for lanes that share a stream.
//
// On one target the lanes share its sequential position (and, with a
// map, its blocks). Were the draw and the booking two steps, a lane could
// draw the pass's last block and be delayed before booking it
// (preempted; paced lanes wake together and draw at once) while other
// lanes drew on past the pass's end and booked the budget's last I/O:
// its draw then refused, so the pass's first block was read once more
// and the delayed lane's block never (issue 35: in two loops over 18
// blocks one block read once and another three times, where fio reads
// each exactly once a loop). Under mu the I/Os booked are always the
// first ones drawn.
//
// With the targets in turn, the rotation (engine.Turn: every I/Os to
// one target, then the next, fio's get_next_file_rr, file_service_nr;
// under loops a target whose pass is done passed over) is drawn in the
// same step: were the choice of target made apart (a counter bumped,
// then the budget taken), a lane could choose target 0 for the worker's
// last I/O and book it only after another lane had chosen target 1 for
// the I/O after it and booked the last of the budget: target 1 one I/O
// more than its pass, target 0 one less (257 and 255 I/Os of a 1 MiB
// pass at 4 KiB).
//
// mu is held for no system call and no sleep: a paced lane sleeps
// without it and draws again.
type booking struct {
	mu   sync.Mutex
	turn *engine.Turn // the worker's targets in turn; nil: one target's lanes
}

// turnTarget is one target of a lane that takes its targets in turn.
type turnTarget struct {
	fd    int
	gen   *workload.Generator
	stats *engine.Lane
}

// Run implements engine.Engine.
func (e *Engine) Run(w *engine.Worker) error {
	lanes, err := newLanes(w)
	if err != nil {
		for _, l := range lanes {
			if l.sleep != nil {
				l.sleep.Close()
			}
		}
		return err
	}
	w.SetReady()
	var wg sync.WaitGroup
	for _, l := range lanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if l.sleep != nil {
				defer l.sleep.Close()
			}
			<-w.Start
			l.run(w)
		}()
	}
	wg.Wait()
	// Each lane has one I/O in flight, handed over and completed by one
	// call: fio's queue figures follow from the counts (the lanes count
	// only while measuring), with the worker's depth the lanes it runs.
	var ops uint64
	for _, l := range lanes {
		for _, t := range l.targets() {
			ops += t.stats.Read.Latency.Count() + t.stats.Write.Latency.Count()
		}
	}
	w.Depth.SubmittedEach(ops, w.QueueDepth)
	return nil
}

// newLanes sets up the worker's lanes: QueueDepth on each target, or, with
// the targets in turn (fio's file_service_type), QueueDepth in all, each
// going over every target in turn.
func newLanes(w *engine.Worker) ([]*lane, error) {
	turn := w.Spec.FilesInTurn > 0 && len(w.Targets) > 1
	n := len(w.Targets) * w.QueueDepth
	if turn {
		n = w.QueueDepth
	}
	lanes := make([]*lane, 0, n)
	add := func(l *lane) {
		l.pacer = w.LanePacer(n, len(lanes))
		if l.pacer.Paced() {
			l.sleep = w.Ctl.NewSleeper()
			l.pacer.SleepWith(l.sleep)
		}
		lanes = append(lanes, l)
	}
	if turn {
		shared := &booking{}
		for q := 0; q < w.QueueDepth; q++ {
			l := &lane{buf: w.Slot(0, q, w.Spec.MaxBlock()), book: shared}
			for t, tgt := range w.Targets {
				gen, err := w.Generator(t, q)
				if err != nil {
					return lanes, err
				}
				l.turn = append(l.turn, turnTarget{fd: tgt.FD, gen: gen, stats: w.NewLane(t)})
			}
			add(l)
		}
		// The rotation asks the first lane's generators whether a
		// target's pass is done: every lane's share the target's cursor.
		gens := make([]*workload.Generator, len(w.Targets))
		for t, tt := range lanes[0].turn {
			gens[t] = tt.gen
		}
		shared.turn = engine.NewTurn(w.Spec, gens)
		return lanes, nil
	}
	for t, tgt := range w.Targets {
		// A budget's I/Os are the first of each target's stream: its
		// lanes draw and book in one step (see booking). Lanes of
		// different targets need not: the budget is the worker's, its
		// share per target whatever the order of their bookings.
		var book *booking
		if w.Spec.Budgeted() && w.QueueDepth > 1 {
			book = &booking{}
		}
		for q := 0; q < w.QueueDepth; q++ {
			gen, err := w.Generator(t, q)
			if err != nil {
				return lanes, err
			}
			add(&lane{fd: tgt.FD, buf: w.Slot(t, q, w.Spec.MaxBlock()), gen: gen, stats: w.NewLane(t), book: book})
		}
	}
	return lanes, nil
}

// targets are the lane's targets: its one, or those it takes in turn.
func (l *lane) targets() []turnTarget {
	if l.turn == nil {
		return []turnTarget{{fd: l.fd, gen: l.gen, stats: l.stats}}
	}
	return l.turn
}

// draw draws the lane's next I/O into op once its pacer lets it start,
// and books it against the worker's budget. False: the run stopped or the
// budget is spent. slept says whether the lane slept for its pacer.
func (l *lane) draw(w *engine.Worker, op *engine.IO) (ok, slept bool) {
	if l.book != nil {
		return l.drawBooked(w, op)
	}
	if !l.pacer.NextWait(w.Ctl, l.gen, op) {
		return false, l.pacer.Slept()
	}
	return w.Take(op.Len), l.pacer.Slept()
}

// drawBooked is draw for a lane that shares its stream (see booking):
// with the targets in turn it points the lane at the target of the
// worker's next I/O; it draws the I/O and books it, all under the lanes'
// lock, and sleeps for its pacer without it.
func (l *lane) drawBooked(w *engine.Worker, op *engine.IO) (ok, slept bool) {
	s := l.book
	for {
		var now int64
		if l.pacer.Paced() {
			now = engine.Nanotime()
		}
		s.mu.Lock()
		gen, at := l.gen, 0
		if s.turn != nil {
			if at, ok = s.turn.Target(); !ok {
				s.mu.Unlock()
				return false, slept
			}
			gen = l.turn[at].gen
		}
		d := l.pacer.Next(now, gen, op)
		if d == 0 {
			ok = !w.Ctl.Stopped() && w.Take(op.Len)
			if ok && s.turn != nil {
				s.turn.Took()
				t := &l.turn[at]
				l.fd, l.gen, l.stats = t.fd, t.gen, t.stats
			}
			s.mu.Unlock()
			return ok, slept
		}
		s.mu.Unlock()
		slept = true
		if !l.pacer.Sleep(w.Ctl, now, d) {
			return false, slept
		}
	}
}

// run is the hot loop: no allocation; no lock but, for lanes that share
// a stream, theirs around a draw (booking), held for no system call.
func (l *lane) run(w *engine.Worker) {
	ctl := w.Ctl
	var op engine.IO
	var seq uint64
	var y engine.Yielder
	for !ctl.Stopped() {
		ok, slept := l.draw(w, &op)
		if slept {
			y = engine.Yielder{} // it has just been through the scheduler
		}
		if !ok {
			return // stopped, or the worker's stop-after budget is spent
		}
		if op.DropCache {
			w.DropCache(l.fd)
		}
		if op.DelayNs > 0 && !engine.Hold(ctl, op.DelayNs) {
			return // Iometer's delay before a burst, cut short by a stop
		}
		b := l.buf[:op.Len]
		if w.Issue != nil {
			w.Issue(l.stats, &op)
		}
		var res, t0 int64
		if op.Write {
			seq++
			w.PrepareWrite(l.stats, &op, b, seq)
			t0 = engine.Nanotime()
			res = pwrite(l.fd, b, op.Offset)
		} else {
			w.PrepareRead(l.stats, &op)
			t0 = engine.Nanotime()
			res = pread(l.fd, b, op.Offset)
		}
		t1 := engine.Nanotime()
		w.Complete(l.stats, &op, b, res, t0, t1)
		if w.Trace != nil {
			w.Trace(l.stats, &op, res)
		}
		if op.Write && w.FlushDue(l.stats) {
			t0, t1 = l.flush(w)
		}
		y.Tick(t1, t1-t0)
	}
}

// flush fsyncs or fdatasyncs the lane's target after the write that made
// a flush due, and returns the flush's start and end.
func (l *lane) flush(w *engine.Worker) (t0, t1 int64) {
	var err error
	t0 = engine.Nanotime()
	if w.FlushDatasync() {
		err = unix.Fdatasync(l.fd)
	} else {
		err = unix.Fsync(l.fd)
	}
	t1 = engine.Nanotime()
	var res int64
	if err != nil {
		res = -int64(errnoOf(err))
	}
	w.CompleteFlush(l.stats, res, t0, t1)
	return t0, t1
}

func errnoOf(err error) unix.Errno {
	if e, ok := err.(unix.Errno); ok {
		return e
	}
	return unix.EIO
}
