package engine

import "runtime"

// yieldEvery is how often an engine loop yields: under sysmon's 10 ms
// preemption slice, and rare enough to cost nothing measurable (each yield
// wakes an idle thread to look for work: at 2 ms that was about 2% of a
// RAM-disk read loop's CPU in a profile, at 5 ms it is under 1%).
const yieldEvery = 5_000_000 // ns

// shortCall is sysmon's shortest tick: a call that returns sooner cannot
// have lost its P.
const shortCall = 20_000 // ns

// Yielder makes a goroutine that lives in system calls yield its processor
// every few milliseconds.
//
// Why: the runtime's sysmon preempts a goroutine that has run for 10 ms on
// one scheduling tick, and an I/O loop whose system calls return with its P
// still attached never reaches the scheduler by itself, so every 10 ms
// sysmon takes its P away in the middle of a pread. Each time it does,
// sysmon drops back to polling every 20 µs, and climbs back to 10 ms sleeps
// only after about a millisecond of doubling: some 5,000 wake-ups and
// context switches a second, charged to the process. On zram (4 KiB reads
// at QD1) a bare Go pread loop spent 3.3-3.5 µs of CPU per read that way
// and 2.9-3.0 µs with a Gosched every millisecond. Yielding starts a new
// scheduling tick, so sysmon never preempts and sleeps 10 ms; it costs one
// trip through the scheduler per period.
type Yielder struct{ next int64 }

// Tick is called after each I/O with the latest Nanotime reading (now)
// and how long the I/O's system call held the thread (held). It yields
// after a short call once the period has passed since the last yield. A
// long call (beyond sysmon's 20 µs tick) is no moment to yield: such a
// goroutine waits on a real device, other goroutines are likely waiting for
// its P, and the runtime reschedules it by itself when it takes the P away.
// (The sync engine's lanes, more goroutines than processors at a queue
// depth above GOMAXPROCS, reach their depth only through sysmon taking the
// processors of those blocked in a read: a loop of long calls must not keep
// sysmon from its 20 µs polling, which TickRing's late yields would.)
func (y *Yielder) Tick(now, held int64) {
	switch {
	case y.next == 0:
		y.next = now + yieldEvery
	case now >= y.next && held < shortCall:
		runtime.Gosched()
		y.next = now + yieldEvery
	}
}

// TickRing is Tick for a ring's loop, the one goroutine of a worker, locked
// to its thread, whose queue depth is kept in the kernel: when no call has
// been short for half a period more (7.5 ms), it yields after a long one
// too, before sysmon's 10 ms. A ring that waits for a batch of completions
// in every io_uring_enter (QD 32, 32 awaited per call) never makes a short
// call, and on zram sysmon preempted it every 10 ms (a signal cutting its
// wait short), took its P in the call and went back to polling every
// 20 µs: 2,500 sysmon sleeps a second, 2% of the process's CPU. (A yield of
// a goroutine locked to its thread costs two thread hand-offs, so the ring
// does not yield more often.)
func (y *Yielder) TickRing(now, held int64) {
	switch {
	case y.next == 0:
		y.next = now + yieldEvery
	case now >= y.next && (held < shortCall || now >= y.next+yieldEvery/2):
		runtime.Gosched()
		y.next = now + yieldEvery
	}
}
