package engine

import (
	"fmt"
	"github.com/ioprobe/ioprobe/internal/iobuf"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// Error classes: a small fixed set so that counting an error never
// allocates and the exporter's `error` label stays bounded.
const (
	ErrIO       = iota // EIO: the device said the I/O failed
	ErrNoSpace         // ENOSPC, EDQUOT
	ErrNoDevice        // ENXIO, ENODEV: the device went away
	ErrInvalid         // EINVAL, EFAULT: alignment or an engine bug
	ErrShort           // fewer bytes than asked, no errno
	ErrVerify          // data read back does not match what was written
	ErrOther           // anything else
	NumErrClasses
)

// ErrClassNames are the label values of the error classes.
var ErrClassNames = [NumErrClasses]string{"eio", "enospc", "enodev", "einval", "short", "verify", "other"}

// ClassOf classifies a failed I/O: errno when the kernel gave one, a short
// transfer otherwise.
func ClassOf(errno int, res, want int64) int {
	switch unix.Errno(errno) {
	case 0:
		if res >= 0 && res < want {
			return ErrShort
		}
		return ErrOther
	case unix.EIO:
		return ErrIO
	case unix.ENOSPC, unix.EDQUOT:
		return ErrNoSpace
	case unix.ENXIO, unix.ENODEV:
		return ErrNoDevice
	case unix.EINVAL, unix.EFAULT:
		return ErrInvalid
	case unix.EILSEQ:
		return ErrVerify
	}
	return ErrOther
}

// IOError describes one failed I/O.
type IOError struct {
	Target int
	Path   string
	Detail string // what verification found, for class verify
	Flush  string // "fsync" or "fdatasync" when the failed operation was a flush
	Worker int
	Write  bool
	Offset int64
	Len    int64
	Errno  int
	Result int64
	Class  int
}

func (e *IOError) Error() string {
	op := "read"
	if e.Write {
		op = "write"
	}
	what := ErrClassNames[e.Class]
	if e.Detail != "" {
		what = e.Detail
	} else if e.Errno != 0 {
		what = unix.Errno(e.Errno).Error()
	} else if e.Class == ErrShort {
		what = fmt.Sprintf("short transfer: %d of %d bytes", e.Result, e.Len)
	}
	where := e.Path
	if where == "" {
		where = fmt.Sprintf("target %d", e.Target)
	}
	if e.Flush != "" {
		return fmt.Sprintf("%s of %s (worker %d): %s", e.Flush, where, e.Worker, what)
	}
	return fmt.Sprintf("%s of %d bytes at offset %d of %s (worker %d): %s", op, e.Len, e.Offset, where, e.Worker, what)
}

// OpStats counts one direction (read or write) of one lane.
type OpStats struct {
	Latency result.Histogram // ns; its count is the op count
	// Intended is the latency from each I/O's intended start (its slot
	// on the pacer's schedule) to its completion, ns; nil unless the lane
	// is paced (a rate limit).
	Intended *result.Histogram
	bytes    atomic.Uint64
	errors   [NumErrClasses]atomic.Uint64
	// With --verify, reads whose data was checked and found sound, and
	// reads that could not be checked (not written by this run).
	verified, unverified atomic.Uint64
}

// Verified is the number of reads whose data was checked and sound.
func (o *OpStats) Verified() uint64 { return o.verified.Load() }

// Unverified is the number of reads --verify could not check.
func (o *OpStats) Unverified() uint64 { return o.unverified.Load() }

// Bytes transferred by completed I/Os.
func (o *OpStats) Bytes() uint64 { return o.bytes.Load() }

// ErrorCount returns the failures of class c.
func (o *OpStats) ErrorCount(c int) uint64 { return o.errors[c].Load() }

// Lane holds the statistics of one single-writer I/O stream: one
// goroutine (sync) or one ring (uring) records into it; snapshots read it
// concurrently.
type Lane struct {
	Target int    // index into the worker's Targets
	Path   string // that target's path
	Worker int
	Read   OpStats
	Write  OpStats
	// Sync holds the flushes (--fsync, --fdatasync): their latency; a
	// failed flush counts as an error of the writes (Write).
	Sync OpStats
	// Lines counts each access specification line (nil for one line).
	Lines []LineStats
	// fill fills the lane's writes with fio's buffer contents.
	fill iobuf.Filler
}

// Done records a completed I/O of len bytes and latency ns.
func (s *Lane) Done(op *IO, ns int64) {
	o := s.ops(op.Write)
	o.Latency.RecordAtomic(ns)
	o.bytes.Add(uint64(op.Len))
	if s.Lines != nil {
		s.countLine(op, ns)
	}
}

// ops returns the lane's counters of one direction.
func (s *Lane) ops(write bool) *OpStats {
	if write {
		return &s.Write
	}
	return &s.Read
}

func (s *Lane) countError(write bool, class int) {
	s.ops(write).errors[class].Add(1)
}

// Complete is the one place an engine reports the outcome of an I/O: res is
// the syscall or CQE result (bytes, or -errno), t0 and t1 its start and end
// on the monotonic clock; op.Due, when the lane is paced, its intended
// start. Counting happens only while the control measures; failures are
// always reported.
func Complete(c *Control, s *Lane, op *IO, res int64, t0, t1 int64) {
	complete(c, s, op, res, t0, t1, c.Measuring())
}

// complete is Complete with the window's state read by the caller, who
// may have counted the I/O elsewhere already (--verify's judged reads):
// one reading, so that both counts fall in the same window.
func complete(c *Control, s *Lane, op *IO, res int64, t0, t1 int64, measuring bool) {
	if res == op.Len {
		if measuring {
			s.Done(op, t1-t0)
			if op.Due != 0 { // a paced lane: the latency from the intended start
				if o := s.ops(op.Write); o.Intended != nil {
					o.Intended.RecordAtomic(t1 - op.Due)
				}
			}
		}
		return
	}
	errno := 0
	if res < 0 {
		errno = int(-res)
	}
	c.Fail(s, op, errno, res)
}
