package engine

import "sync/atomic"

// budget is a worker's stop-after amount (workload.Spec.Budgeted): the
// I/Os and bytes its lanes may still issue. The counters are the
// worker's own, so lanes of different workers never touch the same
// cache line; only the lanes of one worker (the sync engine's) share
// them, one uncontended-in-practice atomic add per I/O.
type budget struct {
	on       bool
	maxCount int64 // 0: no limit on the number of I/Os
	maxBytes int64
	count    atomic.Int64
	bytes    atomic.Int64
}

func newBudget(loops int, ioCount, ioBytes, regions int64) budget {
	if loops <= 0 {
		return budget{}
	}
	if ioBytes == 0 {
		ioBytes = regions
	}
	return budget{on: true, maxCount: ioCount * int64(loops), maxBytes: ioBytes * int64(loops)}
}

// Take books one I/O of n bytes against the worker's budget, as fio
// does before it issues: the I/O goes ahead while fewer than the
// budget's I/Os and bytes have been issued before it. False means the
// budget is spent and the caller issues nothing more (the last I/O may
// pass the byte budget by less than its length, as fio's does).
func (w *Worker) Take(n int64) bool {
	if d := w.deadline.Load(); d > 0 && Nanotime() >= d {
		return false // the worker's own run time is over
	}
	b := &w.budget
	if !b.on {
		return true
	}
	if b.maxCount > 0 && b.count.Add(1) > b.maxCount {
		return false
	}
	return b.bytes.Add(n)-n < b.maxBytes
}

// spent reports whether the budget allows no more I/O (the last Take
// booked its end).
func (b *budget) spent() bool {
	if !b.on {
		return false
	}
	return (b.maxCount > 0 && b.count.Load() >= b.maxCount) || b.bytes.Load() >= b.maxBytes
}

// SetDeadline ends the worker's I/O at the monotonic instant d (Nanotime),
// before the run's own end: a job of a point whose jobs run for
// different times (fio's runtime per job) stops at its own. Take then
// refuses the next I/O, and the engine returns once what is in flight
// has completed.
func (w *Worker) SetDeadline(d int64) { w.deadline.Store(d) }
