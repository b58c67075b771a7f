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
// Lost writes: every write carries a stamp from one counter, and each unit
// of a target remembers the stamp of the latest write that had the unit to
// itself from its issue to its completion (its floor). A read during which
// no write touched its units must find every sector of this run stamped at
// least that high; an older sound sector is a write the device lost.
//
// Everything on the I/O path is lock-free: the written-units bitmaps are
// updated with atomic ORs, generations and floors with atomic adds and
// compare-and-swaps; only failures, which are rare, take a lock.
type Verifier struct {
	run     uint64
	targets []targetBooks // by engine.Target.Index
	stamps  atomic.Uint64 // the last write stamp handed out
	judged  atomic.Uint64 // reads compared with their units' floors
	// lost says whether generations and floors are kept (they fit in
	// maxLostWriteBytes).
	lost bool

	mu       sync.Mutex
	failures int
	sectors  map[int64]verifyFailure // distinct failing sectors, at most maxSectors
	dropped  bool                    // a failing sector was not kept: the list is full
}

// targetBooks is the bookkeeping of one target of a Verifier, built from
// its VerifyTarget: which units this run wrote, and for lost writes each
// unit's generations and floor.
type targetBooks struct {
	formatted bool
	unit      int64 // bytes per bitmap bit, generation and floor
	written   []atomic.Uint64
	// gen counts the writes issued (high 32 bits) and completed (low 32
	// bits) on each unit; floor is each unit's floor (0: none).
	gen   []atomic.Uint64
	floor []atomic.Uint64
}

// genIssued is one issued write in a generation word.
const genIssued = 1 << 32

// inFlight is the number of writes issued on a unit and not completed.
func inFlight(g uint64) uint64 { return g>>32 - g&(genIssued-1) }

type verifyFailure struct {
	target int
	f      verify.Failure
}

// maxSectors bounds the failing sectors a Verifier remembers.
const maxSectors = 1000

// maxBitmapBytes bounds the written-units bitmap of one target.
const maxBitmapBytes = 256 << 20

// maxLostWriteBytes bounds the generations and floors of all targets (16
// bytes per unit); beyond, lost writes are not looked for.
const maxLostWriteBytes = 256 << 20

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
	var allUnits int64
	for i, t := range targets {
		if t.Unit <= 0 || t.Unit%verify.SectorSize != 0 {
			return nil, fmt.Errorf("verify: target %d: bad unit %d", i, t.Unit)
		}
		allUnits += (t.Region + t.Unit - 1) / t.Unit
	}
	v.lost = allUnits*16 <= maxLostWriteBytes
	for _, t := range targets {
		vt := targetBooks{formatted: t.Formatted, unit: t.Unit}
		units := (t.Region + t.Unit - 1) / t.Unit
		if v.lost {
			vt.gen, vt.floor = make([]atomic.Uint64, units), make([]atomic.Uint64, units)
		}
		if !t.Formatted {
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

// LostWrites says whether reads are checked for lost writes (the units'
// generations and floors fit in memory).
func (v *Verifier) LostWrites() bool { return v.lost }

// Judged is how many reads were compared with their units' floors: reads
// that no write overlapped, of units this run wrote.
func (v *Verifier) Judged() uint64 { return v.judged.Load() }

// units returns the first and last unit that [off, off+n) touches.
func (t *targetBooks) units(off, n int64) (int64, int64) {
	return off / t.unit, (off + n - 1) / t.unit
}

// covered returns the first and last unit that [off, off+n) covers whole
// (last < first when none): a write of part of a unit leaves the rest as
// it was.
func (t *targetBooks) covered(off, n int64) (int64, int64) {
	return (off + t.unit - 1) / t.unit, (off+n)/t.unit - 1
}

// genSum is the sum of the generations of the units [off, off+n) touches,
// and whether a write to one of them is in flight.
func (t *targetBooks) genSum(off, n int64) (sum uint64, writing bool) {
	first, last := t.units(off, n)
	for u := first; u <= last; u++ {
		g := t.gen[u].Load()
		writing = writing || inFlight(g) != 0
		sum += g
	}
	return sum, writing
}

// issueWrite notes a write about to be issued on [off, off+n) and returns
// its mark: the sum of its units' generations after the issue, or 0 when
// another write to one of them is in flight.
func (v *Verifier) issueWrite(target int, off, n int64) uint64 {
	t := &v.targets[target]
	if t.gen == nil {
		return 0
	}
	var sum uint64
	alone := true
	first, last := t.units(off, n)
	for u := first; u <= last; u++ {
		g := t.gen[u].Add(genIssued)
		alone = alone && inFlight(g) == 1
		sum += g
	}
	if !alone {
		return 0
	}
	return sum
}

// completeWrite notes a completed write. If no other write to its units
// was in flight, issued or completed while it was (each generation moved
// by its own completion only), what it wrote is what they hold, and the
// floors of the units it covered whole rise to its stamp.
func (v *Verifier) completeWrite(target int, off, n int64, mark, stamp uint64) {
	t := &v.targets[target]
	if t.gen == nil {
		return
	}
	var sum uint64
	first, last := t.units(off, n)
	for u := first; u <= last; u++ {
		sum += t.gen[u].Add(1)
	}
	if mark == 0 || sum != mark+uint64(last-first+1) {
		return
	}
	first, last = t.covered(off, n)
	for u := first; u <= last; u++ {
		for {
			f := t.floor[u].Load()
			if f >= stamp || t.floor[u].CompareAndSwap(f, stamp) {
				break
			}
		}
	}
}

// issueRead returns the mark of a read about to be issued on [off,
// off+n): the sum of its units' generations, or 0 when a write to one of
// them is in flight or none was ever issued (nothing to compare with).
func (v *Verifier) issueRead(target int, off, n int64) uint64 {
	t := &v.targets[target]
	if t.gen == nil {
		return 0
	}
	sum, writing := t.genSum(off, n)
	if writing {
		return 0
	}
	return sum
}

// readMark is a read that may be judged for lost writes: its range and
// the mark issueRead gave it.
type readMark struct {
	off, n int64
	mark   uint64
}

// quiet says whether no write touched the read's units since it was
// issued: then they hold what their last writes wrote, and a sound sector
// older than its unit's floor is a lost write.
func (v *Verifier) quiet(target int, r readMark) bool {
	if r.mark == 0 {
		return false
	}
	sum, _ := v.targets[target].genSum(r.off, r.n)
	return sum == r.mark
}

// check verifies buf, read at off as part of the read r: every sector
// sound and in its place and, when no write touched the read's units
// since it was issued, none older than its unit's floor. It returns the
// first bad sector.
func (v *Verifier) check(target int, key uint64, buf []byte, off int64, r readMark) verify.Failure {
	if f := verify.Check(buf, off, key); f.Problem != verify.OK || !v.quiet(target, r) {
		return f
	}
	t := &v.targets[target]
	if off == r.off {
		v.judged.Add(1)
	}
	for s := int64(0); s+verify.SectorSize <= int64(len(buf)); s += verify.SectorSize {
		floor := t.floor[(off+s)/t.unit].Load()
		if floor == 0 {
			continue
		}
		// Every write of this run is checksummed: a plain sector, or one
		// of another run, is older than the floor.
		if run, seq, summed := verify.Stamp(buf[s:s+verify.SectorSize], key); !summed || run != v.run || seq < floor {
			// A floor rises only after its write's completion shows in
			// the generations. If they still show no write since the
			// read was issued, the floor just read was already the
			// unit's when the read was issued: the sector is stale.
			// Otherwise a write that came after the read raised it.
			if !v.quiet(target, r) {
				return verify.Failure{}
			}
			return verify.Failure{Offset: off + s, Problem: verify.Stale}
		}
	}
	return verify.Failure{}
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
	// A unit counts as written only when the write covers all of it.
	first, last := t.covered(off, n)
	for u := first; u <= last; u++ {
		t.written[u/64].Or(1 << (u % 64))
	}
}

// fail records a read that failed its check: every bad sector of buf (read
// at off), not only the first.
func (v *Verifier) fail(target int, key uint64, buf []byte, off int64, first verify.Failure, r readMark) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.failures++
	for f := first; f.Problem != verify.OK; {
		v.sector(target, f)
		next := f.Offset + verify.SectorSize - off
		if next >= int64(len(buf)) {
			break
		}
		f = v.check(target, key, buf[next:], off+next, r)
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

// PrepareWrite readies buf for the write op on lane s, just before it is
// issued. Every sector is stamped in the self-describing format under the
// target's key, so a file ioprobe filled stays recognisable as ioprobe's
// and every later read of it can be judged: with --verify checksummed,
// with the write's stamp, and the issue noted; otherwise plain (offset,
// worker, the lane's seq: no two written blocks are alike, and a
// deduplicating device is not flattered). A write of an ioprobe file
// that is not whole sectors (buffered) writes the parts of the sectors
// at its ends whose header it does not cover as they are (keepSectors),
// so that the file stays ioprobe's. A fio job's buffer contents that are
// not random (fillWrite: compressible, repeated, zeros, a pattern) are
// written as fio's bytes, whole, with neither headers nor kept sectors:
// the file was given up before its first such write.
func (w *Worker) PrepareWrite(s *Lane, op *IO, buf []byte, seq uint64) {
	t := &w.Targets[s.Target]
	v := w.Verify
	if v == nil {
		if w.fillWrite(s, op, buf) {
			verify.Mark(buf, op.Offset, t.Key, w.Seed^uint64(w.ID), seq)
			if t.Key != 0 && (op.Offset%verify.SectorSize != 0 || len(buf)%verify.SectorSize != 0) {
				keepSectors(t.FD, buf, op.Offset)
			}
		}
		return
	}
	// The issue is noted first, then the stamp taken: a write that
	// follows another on a unit (issued after it completed) then always
	// carries the higher stamp, which the floors rely on.
	op.VerifyMark = v.issueWrite(t.Index, op.Offset, op.Len)
	op.VerifyStamp = v.stamps.Add(1)
	verify.Format(buf, op.Offset, t.Key, v.run, op.VerifyStamp)
}

// PrepareRead notes, as the read op on lane s is issued, whether its data
// can be verified when it completes, and whether for lost writes.
func (w *Worker) PrepareRead(s *Lane, op *IO) {
	v := w.Verify
	if v == nil {
		op.Verify = false
		return
	}
	ti := w.Targets[s.Target].Index
	op.Verify = v.Verifiable(ti, op.Offset, op.Len)
	op.VerifyMark = 0
	if op.Verify {
		op.VerifyMark = v.issueRead(ti, op.Offset, op.Len)
	}
}

// Complete reports the outcome of op on lane s (res: bytes, or -errno; t0
// and t1 its start and end on the monotonic clock); buf holds the data.
// With --verify it checks what a read returned, and records what a write
// covered, before counting.
func (w *Worker) Complete(s *Lane, op *IO, buf []byte, res, t0, t1 int64) {
	v := w.Verify
	if v == nil || res != op.Len {
		Complete(w.Ctl, s, op, res, t0, t1)
		return
	}
	ti, key := w.Targets[s.Target].Index, w.Targets[s.Target].Key
	// Read once: a read judged here is counted below in the same window
	// (a second reading could fall on the other side of its start or end).
	measuring := w.Ctl.Measuring()
	switch {
	case op.Write:
		v.written(ti, op.Offset, op.Len)
		v.completeWrite(ti, op.Offset, op.Len, op.VerifyMark, op.VerifyStamp)
	case !op.Verify:
		if measuring {
			s.Read.unverified.Add(1)
		}
	default:
		r := readMark{off: op.Offset, n: op.Len, mark: op.VerifyMark}
		if f := v.check(ti, key, buf[:op.Len], op.Offset, r); f.Problem != verify.OK {
			v.fail(ti, key, buf[:op.Len], op.Offset, f, r)
			w.Ctl.fail(s, &IOError{Target: s.Target, Path: s.Path, Worker: s.Worker, Offset: f.Offset, Len: verify.SectorSize,
				Class: ErrVerify, Detail: "verify: " + f.Problem.String() + foundAt(f)})
			return
		}
		if measuring {
			s.Read.verified.Add(1)
		}
	}
	complete(w.Ctl, s, op, res, t0, t1, measuring)
}

func foundAt(f verify.Failure) string {
	if f.Problem == verify.Misplaced {
		return fmt.Sprintf(" (it belongs at %d)", f.Found)
	}
	return ""
}
