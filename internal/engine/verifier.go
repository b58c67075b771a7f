package engine

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/ioprobe/ioprobe/internal/verify"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Verifier is --verify for one run: writes are formatted so that every
// sector describes itself (internal/verify), and reads are checked. A
// target ioprobe filled is formatted throughout, so every read of it is
// checked; on any other target only what this run wrote can be, and a read
// is checked when every unit it covers had been written before it was
// issued (a write that is still in flight cannot make a read's old data
// look wrong).
//
// Everything on the I/O path is lock-free: the written-units bitmaps are
// updated with atomic ORs; only failures, which are rare, take a lock.
type Verifier struct {
	run     uint64
	targets []verifyTarget // by engine.Target.Index

	mu       sync.Mutex
	failures int
	sectors  map[int64]verifyFailure // distinct failing sectors, at most maxSectors
	dropped  bool                    // a failing sector was not kept: the list is full
}

type verifyTarget struct {
	formatted bool
	unit      int64 // bytes per bitmap bit
	written   []atomic.Uint64
}

type verifyFailure struct {
	target int
	f      verify.Failure
}

// maxSectors bounds the failing sectors a Verifier remembers.
const maxSectors = 1000

// maxBitmapBytes bounds the written-units bitmap of one target.
const maxBitmapBytes = 256 << 20

// VerifyTarget describes one target to NewVerifier.
type VerifyTarget struct {
	Formatted bool  // every sector is already in the verify format
	Region    int64 // bytes of the target that I/O touches
	Unit      int64 // granularity of the written-units bitmap (a multiple of 512)
}

// NewVerifier prepares verification for a run with id run over targets
// (indexed as engine.Target.Index).
func NewVerifier(run uint64, targets []VerifyTarget) (*Verifier, error) {
	v := &Verifier{run: run, sectors: map[int64]verifyFailure{}}
	for i, t := range targets {
		vt := verifyTarget{formatted: t.Formatted, unit: t.Unit}
		if !t.Formatted {
			if t.Unit <= 0 || t.Unit%verify.SectorSize != 0 {
				return nil, fmt.Errorf("verify: target %d: bad unit %d", i, t.Unit)
			}
			units := (t.Region + t.Unit - 1) / t.Unit
			words := (units + 63) / 64
			if words*8 > maxBitmapBytes {
				return nil, &workload.FieldError{Field: "--verify", Value: "on",
					Reason: fmt.Sprintf("remembering which of the %d units of %d bytes were written takes more than %d MiB; use a smaller --size or larger, aligned transfers", units, t.Unit, maxBitmapBytes>>20)}
			}
			vt.written = make([]atomic.Uint64, words)
		}
		v.targets = append(v.targets, vt)
	}
	return v, nil
}

// Run is the run id written into every sector.
func (v *Verifier) Run() uint64 { return v.run }

// Format prepares buf for a write at off: every sector stamped.
func (v *Verifier) Format(buf []byte, off int64, seq uint64) {
	verify.Format(buf, off, v.run, seq)
}

// Verifiable says, when a read is issued, whether its data can be checked.
func (v *Verifier) Verifiable(target int, off, n int64) bool {
	t := &v.targets[target]
	if t.formatted {
		return true
	}
	for u := off / t.unit; u <= (off+n-1)/t.unit; u++ {
		if t.written[u/64].Load()&(1<<(u%64)) == 0 {
			return false
		}
	}
	return true
}

// written records a completed write.
func (v *Verifier) written(target int, off, n int64) {
	t := &v.targets[target]
	if t.formatted {
		return
	}
	// A unit counts as written only when the write covers all of it: a
	// write of part of a unit leaves the rest as it was.
	first := (off + t.unit - 1) / t.unit
	last := (off+n)/t.unit - 1
	for u := first; u <= last; u++ {
		t.written[u/64].Or(1 << (u % 64))
	}
}

// fail records a read that failed its check: every bad sector of buf (read
// at off), not only the first.
func (v *Verifier) fail(target int, buf []byte, off int64, first verify.Failure) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.failures++
	for f := first; f.Problem != verify.OK; {
		v.sector(target, f)
		next := f.Offset + verify.SectorSize - off
		if next >= int64(len(buf)) {
			break
		}
		f = verify.Check(buf[next:], off+next)
	}
}

func (v *Verifier) sector(target int, f verify.Failure) {
	if _, ok := v.sectors[f.Offset]; !ok {
		if len(v.sectors) < maxSectors {
			v.sectors[f.Offset] = verifyFailure{target: target, f: f}
		} else {
			v.dropped = true
		}
	}
}

// VerifyFailure is one failing sector.
type VerifyFailure struct {
	Target  int    // engine.Target.Index
	Offset  int64  // byte offset of the sector
	Problem string // what is wrong with it
}

// Failures returns the number of reads that failed their check, the
// distinct failing sectors (at most 1000), in offset order, and whether
// more sectors failed than are listed.
func (v *Verifier) Failures() (int, []VerifyFailure, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make([]VerifyFailure, 0, len(v.sectors))
	for _, s := range v.sectors {
		out = append(out, VerifyFailure{Target: s.target, Offset: s.f.Offset, Problem: s.f.Problem.String() + foundAt(s.f)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Target != out[j].Target {
			return out[i].Target < out[j].Target
		}
		return out[i].Offset < out[j].Offset
	})
	return v.failures, out, v.dropped
}

// PrepareWrite readies buf for the write op on lane s: with --verify every
// sector is formatted, otherwise the first 16 bytes are stamped so that no
// two written blocks are alike.
func (w *Worker) PrepareWrite(op *workload.Op, buf []byte, seq uint64) {
	if w.Verify != nil {
		w.Verify.Format(buf, op.Offset, seq)
		return
	}
	Stamp(buf, op.Offset, seq)
}

// PrepareRead notes, as the read op on lane s is issued, whether its data
// can be verified when it completes.
func (w *Worker) PrepareRead(s *Stats, op *workload.Op) {
	op.Verify = w.Verify != nil && w.Verify.Verifiable(w.Targets[s.Target].Index, op.Offset, op.Len)
}

// Complete reports the outcome of op on lane s (res: bytes, or -errno; t0
// and t1 its start and end on the monotonic clock); buf holds the data.
// With --verify it checks what a read returned, and records what a write
// covered, before counting.
func (w *Worker) Complete(s *Stats, op *workload.Op, buf []byte, res, t0, t1 int64) {
	v := w.Verify
	if v == nil || res != op.Len {
		Complete(w.Ctl, s, op, res, t0, t1)
		return
	}
	ti := w.Targets[s.Target].Index
	switch {
	case op.Write:
		v.written(ti, op.Offset, op.Len)
	case !op.Verify:
		if w.Ctl.Measuring() {
			s.Read.unverified.Add(1)
		}
	default:
		if f := verify.Check(buf[:op.Len], op.Offset); f.Problem != verify.OK {
			v.fail(ti, buf[:op.Len], op.Offset, f)
			w.Ctl.fail(s, &IOError{Target: s.Target, Path: s.Path, Worker: s.Worker, Offset: f.Offset, Len: verify.SectorSize,
				Class: ErrVerify, Detail: "verify: " + f.Problem.String() + foundAt(f)})
			return
		}
		if w.Ctl.Measuring() {
			s.Read.verified.Add(1)
		}
	}
	Complete(w.Ctl, s, op, res, t0, t1)
}

func foundAt(f verify.Failure) string {
	if f.Problem == verify.Misplaced {
		return fmt.Sprintf(" (it belongs at %d)", f.Found)
	}
	return ""
}
