package engine

import "runtime"

const (
	yieldEvery = 1_000_000 // ns: how often a loop of short calls yields
	shortCall  = 20_000    // ns: sysmon's shortest tick
)

// Yielder makes a goroutine that lives in short system calls yield its
// processor about once a millisecond.
//
// Why: the runtime's sysmon preempts a goroutine that has run for 10 ms on
// one scheduling tick, and an I/O loop whose system calls return quickly
// never reaches the scheduler by itself, so every 10 ms sysmon takes its P
// away in the middle of a pread. Each time it does, sysmon drops back to
// polling every 20 µs, and climbs back to 10 ms sleeps only after about a
// millisecond of doubling: some 5,000 wake-ups and context switches a
// second, charged to the process. On zram (4 KiB reads at QD1) that was
// 3.5 µs of CPU per read instead of 3.0 µs in a bare loop. A Gosched every
// millisecond starts a new scheduling tick, so sysmon never preempts and
// sleeps 10 ms; it costs one trip through the scheduler per millisecond.
type Yielder struct{ next int64 }

// Tick is called after each I/O with the latest Nanotime reading (now)
// and how long the I/O's system call took (held). It yields once every
// full millisecond of short calls. A call held longer than a sysmon tick
// (20 µs) may have gone through the scheduler already, and yielding a
// goroutine that waits on a real device only delays its next I/O, so such
// a call starts the millisecond again.
func (y *Yielder) Tick(now, held int64) {
	if held > shortCall || y.next == 0 {
		y.next = now + yieldEvery
		return
	}
	if now >= y.next {
		runtime.Gosched()
		y.next = now + yieldEvery
	}
}
