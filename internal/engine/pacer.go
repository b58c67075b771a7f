package engine

import (
	"math"
	"math/bits"
	"time"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

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
	dir      *dirPacer
	sleep    *Sleeper
	slept    bool // the last NextWait or Wait slept
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

// SleepWith makes NextWait and Wait sleep with s (see Sleeper) instead of
// napping.
func (p *Pacer) SleepWith(s *Sleeper) { p.sleep = s }

// Slept reports whether the last NextWait or Wait slept (its goroutine
// went through the scheduler: see Yielder).
func (p *Pacer) Slept() bool { return p.slept }

// sleepFor sleeps d ns from now: until now+d with the pacer's Sleeper,
// else a nap of at most maxSleep. False: stopped.
func (p *Pacer) sleepFor(c *Control, now, d int64) bool {
	p.slept = true
	if p.sleep != nil {
		return p.sleep.Until(now + d)
	}
	return nap(c, d)
}

// Sleep sleeps d ns from now, as NextWait does between its tries, for a
// lane that draws with Next under a lock and must not sleep holding it.
// False: stopped.
func (p *Pacer) Sleep(c *Control, now, d int64) bool { return p.sleepFor(c, now, d) }

// Paced reports whether the pacer limits anything.
func (p *Pacer) Paced() bool { return p.interval > 0 || p.dir != nil }

// Next draws the next I/O of g into op once the pacer lets one start at
// now and returns 0 (op.Due is then its intended start), or returns how
// long until one may start, having drawn nothing the caller must issue.
// Unpaced, it is g.Next.
func (p *Pacer) Next(now int64, g *workload.Generator, op *IO) int64 {
	if p.dir != nil {
		return p.dir.next(now, g, op)
	}
	if d := p.Delay(now); d > 0 {
		return d
	}
	g.Next(&op.Op)
	op.Due = p.due
	return 0
}

// NextWait is Next for a lane that blocks: it sleeps until an I/O may
// start (with its Sleeper, else in naps of at most 50 ms), then draws it.
// False: stopped.
func (p *Pacer) NextWait(c *Control, g *workload.Generator, op *IO) bool {
	if p.interval == 0 && p.dir == nil {
		// Unpaced: the caller's loop has just seen the run going.
		g.Next(&op.Op)
		op.Due = 0
		return true
	}
	p.slept = false
	for {
		now := int64(0)
		if p.Paced() {
			now = Nanotime()
		}
		d := p.Next(now, g, op)
		if d == 0 {
			return !c.Stopped()
		}
		if !p.sleepFor(c, now, d) {
			return false
		}
	}
}

// Due is the intended start (a Nanotime reading) of the I/O that the last
// Wait or Delay let start: its slot on the schedule. 0 when unpaced.
func (p *Pacer) Due() int64 { return p.due }

// Wait blocks until the next I/O is due: with the pacer's Sleeper until
// its slot, else in naps of at most 50 ms so that stop is noticed quickly.
// It returns false if stopped while waiting.
func (p *Pacer) Wait(c *Control) bool {
	p.slept = false
	if p.interval == 0 {
		return true
	}
	for {
		now := Nanotime()
		d := p.Delay(now)
		if d == 0 {
			return !c.Stopped()
		}
		if !p.sleepFor(c, now, d) {
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

// dirPacer is fio's rate per direction (rate=, rate_iops=R,W): each
// direction runs on its own schedule from the first I/O, the epoch. With
// the linear process (fio's default) an I/O of a direction is due once
// the bytes issued before it in that direction, at the direction's
// bytes per second, have had their time (backend.c: usec_for_io), so
// rate_iops counts an I/O of twice the smallest size as two. With the
// Poisson process the gaps are exponential at the direction's I/Os per
// second (the bytes over the smallest transfer). A direction without a
// rate is always due. The direction the generator drew is issued when it
// is due; when it is ahead of its schedule and the other direction of a
// mix is due, the other is issued instead; when both are ahead, the one
// due first is, once due (io_u.c: rate_ddir). So rate_iops=300 on a
// 70/30 mix runs 300 reads and 300 writes a second, as fio does.
type dirPacer struct {
	bps     [2]uint64 // bytes per second; 0: the direction is not limited
	iops    [2]float64
	poisson bool
	mixed   bool  // both directions have a share: the pacer may switch
	epoch   int64 // 0: not started
	issued  [2]uint64
	last    [2]int64 // Poisson: ns from the epoch to the next I/O
	due     [2]int64 // when the next I/O of each direction is due (absolute)
	rng     uint64
	// A drawn I/O whose direction was ahead of its schedule, kept for
	// when it is due.
	pending bool
	held    workload.Op
	heldAt  int64
}

// newDirPacer paces one of a worker's lanes to bps bytes per second per
// direction (its share of the worker's), for a spec with minBlock as its
// smallest transfer and readPct of its I/Os reads.
func newDirPacer(bps [2]float64, minBlock int64, readPct int, poisson bool, seed uint64) *dirPacer {
	d := &dirPacer{poisson: poisson, mixed: readPct > 0 && readPct < 100, rng: seed | 1}
	for i, r := range bps {
		if r > 0 {
			d.bps[i] = max(uint64(r), 1)
			d.iops[i] = math.Max(r/float64(minBlock), 1e-9)
		}
	}
	return d
}

func (d *dirPacer) next(now int64, g *workload.Generator, op *IO) int64 {
	if d.epoch == 0 {
		d.epoch = now
		d.due = [2]int64{now, now}
	}
	if d.pending {
		if w := d.heldAt - now; w > 0 {
			return w
		}
		d.pending = false
		op.Op = d.held
	} else {
		g.Draw(&op.Op)
		dir := d.choose(now, op.Write)
		if w := d.due[dir] - now; d.bps[dir] > 0 && w > 0 {
			op.Write = dir == 1
			d.pending, d.held, d.heldAt = true, op.Op, d.due[dir]
			return w
		}
		op.Write = dir == 1
	}
	g.Place(&op.Op)
	d.book(op)
	return 0
}

// choose is fio's rate_ddir: the drawn direction when it is due; else
// the other of a mix when that one is due; else whichever is due first.
func (d *dirPacer) choose(now int64, write bool) int {
	dir := 0
	if write {
		dir = 1
	}
	if d.bps[dir] == 0 || d.due[dir] <= now || !d.mixed {
		return dir
	}
	other := dir ^ 1
	if d.bps[other] == 0 || d.due[other] <= now {
		return other
	}
	if d.due[other] < d.due[dir] {
		return other
	}
	return dir
}

// book counts the I/O just drawn against its direction's schedule and
// sets its intended start (the time its direction was due).
func (d *dirPacer) book(op *IO) {
	dir := 0
	if op.Write {
		dir = 1
	}
	if d.bps[dir] == 0 {
		op.Due = 0
		return
	}
	op.Due = d.due[dir]
	if d.poisson {
		d.last[dir] += int64(1e9 / d.iops[dir] * -math.Log(d.uniform()))
		d.due[dir] = d.epoch + d.last[dir]
		return
	}
	d.issued[dir] += uint64(op.Len)
	// issued × 1e9 / bps without overflow (hi < bps unless the schedule
	// reaches past 2^64 ns).
	hi, lo := bits.Mul64(d.issued[dir], 1e9)
	ns, _ := bits.Div64(hi%d.bps[dir], lo, d.bps[dir])
	d.due[dir] = d.epoch + int64(ns)
}

// uniform returns a number in (0, 1] (xorshift64*).
func (d *dirPacer) uniform() float64 {
	d.rng ^= d.rng >> 12
	d.rng ^= d.rng << 25
	d.rng ^= d.rng >> 27
	return float64((d.rng*2685821657736338717)>>11+1) / (1 << 53)
}
