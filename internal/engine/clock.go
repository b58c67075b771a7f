package engine

import (
	_ "unsafe" // for go:linkname
)

// Nanotime is the runtime's monotonic clock in nanoseconds: one vDSO
// clock_gettime(CLOCK_MONOTONIC), about half the cost of time.Now, which
// reads the wall clock too. Latency is the difference of two readings.
//
//go:linkname Nanotime runtime.nanotime
func Nanotime() int64
