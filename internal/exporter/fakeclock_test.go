package exporter

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock that moves only when a test moves it. Timers fire
// when the clock reaches them; fireNext waits (in real time) until the
// code under test has set a timer, then moves the clock to the earliest
// one and fires it.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	timers  []*fakeTimer
	changed chan struct{} // closed (and replaced) when a timer is added
}

type fakeTimer struct {
	c  *fakeClock
	at time.Time
	ch chan time.Time
}

func newFakeClock(now time.Time) *fakeClock {
	return &fakeClock{now: now, changed: make(chan struct{})}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.ch <- c.now
		return t
	}
	c.timers = append(c.timers, t)
	close(c.changed)
	c.changed = make(chan struct{})
	return t
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.Index(c.timers, t)
	if i < 0 {
		return false
	}
	c.timers = slices.Delete(c.timers, i, i+1)
	return true
}

// advance moves the clock by d, firing the timers it passes.
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.timers = slices.DeleteFunc(c.timers, func(t *fakeTimer) bool {
		if t.at.After(c.now) {
			return false
		}
		t.ch <- t.at
		return true
	})
}

// fireNext waits until a timer is set, moves the clock to the earliest
// and fires it, and returns how far the clock moved.
func (c *fakeClock) fireNext(t *testing.T) time.Duration {
	t.Helper()
	// Not a timing assertion: a bound on how long a broken scheduler can
	// hang the test.
	giveUp := time.After(30 * time.Second)
	for {
		c.mu.Lock()
		if len(c.timers) > 0 {
			first := slices.MinFunc(c.timers, func(a, b *fakeTimer) int { return a.at.Compare(b.at) })
			d := first.at.Sub(c.now)
			c.mu.Unlock()
			c.advance(d)
			return d
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-giveUp:
			t.Fatal("no timer was set")
		}
	}
}

// pending is how many timers are set.
func (c *fakeClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}
