package engine

import (
	"sync/atomic"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Flushes (--fsync N, --fdatasync N, fio's semantics): a worker flushes a
// target after every N writes it issued there. The count is per worker and
// target, shared by the worker's lanes on that target (the sync engine has
// one goroutine per queue slot), so it is an atomic; a ring engine is its
// only user and pays one uncontended atomic add per write.

// flushState is a worker's flush setting and its write counts.
type flushState struct {
	every    uint64 // 0: never
	datasync bool
	writes   []atomic.Uint64 // per target of the worker
}

func newFlushState(spec *workload.Spec, targets int) flushState {
	n, datasync := spec.FlushEvery()
	f := flushState{every: uint64(n), datasync: datasync}
	if n > 0 {
		f.writes = make([]atomic.Uint64, targets)
	}
	return f
}

// Flushes says whether the worker flushes at all.
func (w *Worker) Flushes() bool { return w.flush.every > 0 }

// FlushDatasync says whether the worker's flush is an fdatasync (else an
// fsync).
func (w *Worker) FlushDatasync() bool { return w.flush.datasync }

// FlushDue counts one write issued on lane s and reports whether it is the
// Nth since the last flush of the lane's target: the caller then flushes
// that target once the write has completed. fio issues the flush as the
// job's next I/O (io_u.c: get_rw_ddir), so a job whose budget its last
// write spent ends without one: neither does a worker here.
func (w *Worker) FlushDue(s *Lane) bool {
	if w.flush.every == 0 {
		return false
	}
	return w.flush.writes[s.Target].Add(1)%w.flush.every == 0 && !w.budget.spent()
}

// CompleteFlush is the one place an engine reports the outcome of a flush
// on lane s: res is 0 or -errno, t0 and t1 its start and end. A completed
// flush counts only while the control measures; a failed one is an error
// of the writes it was to make durable, always reported.
func (w *Worker) CompleteFlush(s *Lane, res int64, t0, t1 int64) {
	if w.TraceFlush != nil {
		w.TraceFlush(s, res)
	}
	if res == 0 {
		if w.Ctl.Measuring() {
			s.Sync.Latency.RecordAtomic(t1 - t0)
		}
		return
	}
	name := "fsync"
	if w.flush.datasync {
		name = "fdatasync"
	}
	errno := 0
	if res < 0 {
		errno = int(-res)
	}
	w.Ctl.fail(s, &IOError{Target: s.Target, Path: s.Path, Worker: s.Worker, Write: true, Flush: name,
		Errno: errno, Result: res, Class: ClassOf(errno, res, 0)})
}
