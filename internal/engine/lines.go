package engine

import (
	"sync/atomic"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// LineStats counts the completed I/Os of one access specification line in
// one lane (Lane.Lines, indexed by IO.Line). Only specs with more
// than one line keep them, so the one-line case pays one nil check per I/O.
type LineStats struct {
	ReadOps, WriteOps     atomic.Uint64
	ReadBytes, WriteBytes atomic.Uint64
	LatencyNs             atomic.Uint64 // sum, for the line's mean
}

// newLineStats returns per-line counters for spec, or nil for one line.
func newLineStats(spec *workload.Spec) []LineStats {
	if n := len(spec.Normalized()); n > 1 {
		return make([]LineStats, n)
	}
	return nil
}

// countLine records a completed I/O in its line's counters.
func (s *Lane) countLine(op *IO, ns int64) {
	ls := &s.Lines[op.Line]
	if op.Write {
		ls.WriteOps.Add(1)
		ls.WriteBytes.Add(uint64(op.Len))
	} else {
		ls.ReadOps.Add(1)
		ls.ReadBytes.Add(uint64(op.Len))
	}
	ls.LatencyNs.Add(uint64(ns))
}

// Hold waits ns (Iometer's transfer delay before a burst, op.DelayNs), in
// slices of at most 50 ms so that a stop is noticed quickly. It returns
// false if the run stopped meanwhile. A blocking lane calls it before it
// issues the burst's first I/O; a ring engine keeps reaping instead.
func Hold(c *Control, ns int64) bool {
	end := Nanotime() + ns
	for {
		d := end - Nanotime()
		if d <= 0 {
			return !c.Stopped()
		}
		if !nap(c, d) {
			return false
		}
	}
}
