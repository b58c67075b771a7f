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
}

// Run implements engine.Engine.
func (e *Engine) Run(w *engine.Worker) error {
	n := len(w.Targets) * w.QueueDepth
	lanes := make([]*lane, 0, n)
	for t, tgt := range w.Targets {
		for q := 0; q < w.QueueDepth; q++ {
			gen, err := w.Generator(t, q)
			if err != nil {
				for _, l := range lanes {
					if l.sleep != nil {
						l.sleep.Close()
					}
				}
				return err
			}
			l := &lane{
				fd:    tgt.FD,
				buf:   w.Slot(t, q, w.Spec.MaxBlock()),
				gen:   gen,
				stats: w.NewLane(t),
				pacer: w.LanePacer(n, len(lanes)),
			}
			if l.pacer.Paced() {
				l.sleep = w.Ctl.NewSleeper()
				l.pacer.SleepWith(l.sleep)
			}
			lanes = append(lanes, l)
		}
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
		ops += l.stats.Read.Latency.Count() + l.stats.Write.Latency.Count()
	}
	w.Depth.SubmittedEach(ops, w.QueueDepth)
	return nil
}

// run is the hot loop: no allocation, no lock.
func (l *lane) run(w *engine.Worker) {
	ctl := w.Ctl
	var op engine.IO
	var seq uint64
	var y engine.Yielder
	for !ctl.Stopped() {
		if !l.pacer.NextWait(ctl, l.gen, &op) {
			return
		}
		if l.pacer.Slept() {
			y = engine.Yielder{} // it has just been through the scheduler
		}
		if !w.Take(op.Len) {
			return // the worker's stop-after budget is spent
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
