package engine

// Sleeper waits until an instant on the Nanotime clock for a paced lane
// (the pacer's next slot) so that a lane at a low rate costs the process
// nothing between its I/Os.
//
// Why not time.Sleep: every Go timer that fires also ends the deep sleep of
// the runtime's sysmon thread (it sleeps until the next timer), and the
// thread that runs the woken goroutine wakes a second one to look for work
// while processors are idle; at 20 I/Os a second that was 4 to 6 context
// switches per I/O besides the I/O's own two. A Sleeper is a timerfd read
// through the runtime's network poller: the goroutine parks, the one thread
// that waits in epoll wakes when the timer expires and runs it, and sysmon
// stays asleep (see docs/performance.md, "The idle daemon"). Where a timerfd
// cannot be had (not Linux, or the descriptor limit), it naps with
// time.Sleep in steps of at most maxSleep, as the pacer did before.
//
// A Sleeper belongs to one goroutine. Control.Stop wakes every Sleeper made
// from it at once, so a lane at one I/O a minute still stops at once.
type Sleeper struct {
	ctl *Control
	t   *timerFD // nil: nap
}

// NewSleeper returns a Sleeper that Stop wakes. Close it when the lane ends.
func (c *Control) NewSleeper() *Sleeper {
	s := &Sleeper{ctl: c}
	if t, err := newTimerFD(); err == nil {
		s.t = t
		t.watch(&c.stop)
	}
	c.mu.Lock()
	if c.sleepers == nil {
		c.sleepers = map[*Sleeper]struct{}{}
	}
	c.sleepers[s] = struct{}{}
	c.mu.Unlock()
	return s
}

// Until sleeps until Nanotime reaches deadline. It returns false, at once,
// when the run stops first.
func (s *Sleeper) Until(deadline int64) bool {
	for {
		if s.ctl.Stopped() {
			return false
		}
		d := deadline - Nanotime()
		if d <= 0 {
			return true
		}
		if s.t == nil || s.t.arm(deadline) != nil {
			if !nap(s.ctl, d) {
				return false
			}
			continue
		}
		// Stop stores the flag, then re-arms every timer to fire at
		// once: checked after arming, a stop is either seen here or
		// its re-arming comes after ours.
		if s.ctl.Stopped() {
			return false
		}
		if s.t.wait() != nil {
			s.t.close()
			s.t = nil // closed under us: nap from now on
		}
	}
}

// wake makes a sleeping Until look at the stop flag now.
func (s *Sleeper) wake() {
	if s.t != nil {
		_ = s.t.fire() // an instant long past: the timer fires at once
	}
}

// Close releases the timer. The Sleeper must not be sleeping.
func (s *Sleeper) Close() {
	s.ctl.mu.Lock()
	delete(s.ctl.sleepers, s)
	t := s.t
	s.t = nil
	s.ctl.mu.Unlock()
	if t != nil {
		t.close()
	}
}
