package exporter

import (
	"context"
	"time"
)

// clock is the scheduler's time: the wall clock in the daemon, a fake one
// that tests move by hand, so that hours of schedules and back-off run in
// milliseconds and never depend on how busy the machine is.
type clock interface {
	Now() time.Time
	// NewTimer fires once, d from now.
	NewTimer(d time.Duration) timer
}

// timer is the part of *time.Timer the scheduler uses.
type timer interface {
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it did.
	Stop() bool
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) NewTimer(d time.Duration) timer { return wallTimer{time.NewTimer(d)} }

type wallTimer struct{ t *time.Timer }

func (w wallTimer) C() <-chan time.Time { return w.t.C }
func (w wallTimer) Stop() bool          { return w.t.Stop() }

// sleep waits d on c and reports whether it did (false: ctx ended first).
func sleep(ctx context.Context, c clock, d time.Duration) bool {
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

// until returns a context that ends when ctx does or when c reaches at.
// The timer exists before until returns and is gone once stop returns.
func until(ctx context.Context, c clock, at time.Time) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	t := c.NewTimer(at.Sub(c.Now()))
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-t.C():
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		t.Stop()
		cancel()
		<-done
	}
}
