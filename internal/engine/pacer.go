package engine

import "time"

// Pacer spaces the I/Os of one lane to a fixed rate on an absolute
// schedule: the lane's k-th I/O is due at start + k × interval, its slot.
// The slot is the I/O's intended start, from which its latency from the
// intended start is measured (Due).
//
// No slot is ever dropped or moved. After a stall the lane is behind
// schedule and every I/O whose slot has passed is issued at once, one
// after the other as fast as the lane goes (at most the lane's own queue
// depth in flight, as unpaced), until the lane is back on schedule. So a
// stall of 5 s at 20 IOPS shows as the 100 I/Os that came due during it,
// each as late as it really went, and the run still issues every I/O its
// rate promised. The other choice, skipping the schedule ahead and
// back-filling the skipped slots with made-up latencies (HdrHistogram's
// expected interval), records I/Os that never ran; this one only records
// I/Os that did, each against its own slot. What a lane stopped while
// behind had not yet issued is not counted (see docs/output.md).
type Pacer struct {
	interval int64 // ns between I/Os; 0: unpaced
	next     int64 // the next slot; 0: not started
	due      int64 // the slot of the I/O last allowed to start
}

// maxSleep bounds one sleep of Wait and Hold, so that a stop is noticed
// quickly even at a low rate or a long delay.
const maxSleep = int64(50 * time.Millisecond)

// nap sleeps d ns, at most maxSleep, unless the run has stopped (false).
func nap(c *Control, d int64) bool {
	if c.Stopped() {
		return false
	}
	time.Sleep(time.Duration(min(d, maxSleep)))
	return true
}

// NewPacer returns a pacer for iops I/Os per second (0: unpaced).
func NewPacer(iops float64) Pacer {
	if iops <= 0 {
		return Pacer{}
	}
	return Pacer{interval: max(int64(1e9/iops), 1)}
}

// Paced reports whether the pacer limits anything.
func (p *Pacer) Paced() bool { return p.interval > 0 }

// Due is the intended start (a Nanotime reading) of the I/O that the last
// Wait or Delay let start: its slot on the schedule. 0 when unpaced.
func (p *Pacer) Due() int64 { return p.due }

// Wait blocks until the next I/O is due, in sleeps of at most 50 ms so
// that stop is noticed quickly. It returns false if stopped while waiting.
func (p *Pacer) Wait(c *Control) bool {
	if p.interval == 0 {
		return true
	}
	for {
		d := p.Delay(Nanotime())
		if d == 0 {
			return !c.Stopped()
		}
		if !nap(c, d) {
			return false
		}
	}
}

// Delay returns how long until the next I/O is due at now (0: it is due),
// and books its slot (see Due) when it is 0. The first call starts the
// schedule at now. Ring engines use it to decide how many I/Os to submit
// before they next wait.
func (p *Pacer) Delay(now int64) int64 {
	if p.interval == 0 {
		return 0
	}
	if p.next == 0 {
		p.next = now
	}
	if d := p.next - now; d > 0 {
		return d
	}
	p.due = p.next
	p.next += p.interval
	return 0
}
