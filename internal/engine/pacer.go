package engine

import "time"

// Pacer spaces the I/Os of one lane to a fixed rate. It schedules against
// absolute deadlines, so a late I/O is followed by early ones until the
// lane is back on schedule (up to one second of catch-up, so a long stall
// does not turn into a burst).
type Pacer struct {
	interval int64 // ns between I/Os; 0: unpaced
	next     int64
}

// NewPacer returns a pacer for iops I/Os per second (0: unpaced).
func NewPacer(iops float64) Pacer {
	if iops <= 0 {
		return Pacer{}
	}
	return Pacer{interval: int64(1e9 / iops)}
}

// Paced reports whether the pacer limits anything.
func (p *Pacer) Paced() bool { return p.interval > 0 }

// Wait blocks until the next I/O may start, in slices of at most 50 ms so
// that stop is noticed quickly. It returns false if stopped while waiting.
func (p *Pacer) Wait(c *Control) bool {
	if p.interval == 0 {
		return true
	}
	now := Nanotime()
	if p.next == 0 || now-p.next > int64(time.Second) {
		p.next = now
	}
	for {
		d := p.next - now
		if d <= 0 {
			break
		}
		if c.Stopped() {
			return false
		}
		time.Sleep(time.Duration(min(d, int64(50*time.Millisecond))))
		now = Nanotime()
	}
	p.next += p.interval
	return !c.Stopped()
}

// Delay returns how long until the next I/O may start (0: now), and books
// the slot when it is 0. Ring engines use it to decide how many I/Os to
// submit before they next wait.
func (p *Pacer) Delay(now int64) int64 {
	if p.interval == 0 {
		return 0
	}
	if p.next == 0 || now-p.next > int64(time.Second) {
		p.next = now
	}
	if d := p.next - now; d > 0 {
		return d
	}
	p.next += p.interval
	return 0
}
