package hostfs

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// DefaultDeadline is how long a call that asks another filesystem is
// waited for. A local filesystem answers a stat in microseconds and a
// healthy NFS server in milliseconds; one that has not answered in
// seconds is not answering, and the check it serves fails closed rather
// than hold up a run, its interval ticks or a signal.
const DefaultDeadline = 5 * time.Second

// MaxPending is how many calls may be waiting in the kernel at once, over
// the whole process. Each holds a goroutine, and an OS thread, for as long
// as the kernel does; with one per object (Do) a host needs as many dead
// objects as this before the bound is reached, and then calls fail at
// once instead of piling up.
const MaxPending = 64

// ErrNoAnswer is what errors.Is finds in a *NoAnswerError.
var ErrNoAnswer = errors.New("did not answer in time")

// NoAnswerError is a call that did not answer within its deadline, or was
// not started because MaxPending calls were waiting already.
type NoAnswerError struct {
	What    string        // what did not answer: "loop device loop1 (its backing file /x/img, on the fuse mount /x)"
	Limit   time.Duration // the call's deadline
	Pending time.Duration // how long its call had been waiting when the caller gave up
	Full    bool          // not asked: too many calls are waiting already
	Waiting int           // with Full: how many
}

func (e *NoAnswerError) Error() string {
	if e.Full {
		return fmt.Sprintf("%s was not asked: %d earlier calls to the host's filesystems are still waiting for an answer", e.What, e.Waiting)
	}
	// The same words however long the call has waited: a daemon logs a
	// job's failure again only when its reason changes.
	return fmt.Sprintf("%s did not answer within %s", e.What, roundDur(e.Limit))
}

// Unwrap makes errors.Is(err, ErrNoAnswer) true.
func (e *NoAnswerError) Unwrap() error { return ErrNoAnswer }

func roundDur(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

// Calls runs calls that may block in the kernel, each on a goroutine of
// its own, at most one per object and MaxPending (or the bound given to
// NewCalls) in all. The zero value is not ready; use NewCalls.
type Calls struct {
	max     int
	mu      sync.Mutex
	pending map[string]*call
	started int // calls started, over the lifetime (for tests and the daemon's figures)
}

type call struct {
	what    string
	started time.Time
	done    chan struct{}
	val     any
	err     error
}

// NewCalls makes a Calls that lets at most max calls wait at once.
func NewCalls(max int) *Calls {
	return &Calls{max: max, pending: map[string]*call{}}
}

// shared is the process's Calls: the bound on goroutines stuck in the
// kernel is the process's, whichever check started them.
var shared = NewCalls(MaxPending)

// Shared is the Calls every Host without its own uses.
func Shared() *Calls { return shared }

// PendingCall is a call that has not answered yet.
type PendingCall struct {
	What string
	For  time.Duration
}

// Pending lists the calls waiting for an answer, the oldest first.
func (c *Calls) Pending() []PendingCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]PendingCall, 0, len(c.pending))
	now := time.Now()
	for _, cl := range c.pending {
		out = append(out, PendingCall{What: cl.what, For: now.Sub(cl.started)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].For > out[j].For })
	return out
}

// Started is how many calls were started (not joined) over c's life.
func (c *Calls) Started() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.started
}

// Do runs fn on a goroutine of its own and waits for its answer until
// limit has passed since the call began, or ctx ends. key names the
// object fn asks about ("loop:loop1 7:1 /x/img"): while a call for key
// has not answered, Do starts no other and waits for that one's answer
// instead (a filesystem that never answers costs one goroutine per
// object, however often it is asked), and a caller that comes after that
// call's deadline has passed fails at once. what names the object in the
// error: a *NoAnswerError when the deadline passed or too many calls are
// waiting, ctx's error (wrapped) when ctx ended first.
//
// A call that answers after its callers gave up is dropped: the next Do
// for key asks again.
func Do[T any](ctx context.Context, c *Calls, key, what string, limit time.Duration, fn func() (T, error)) (T, error) {
	var zero T
	c.mu.Lock()
	cl := c.pending[key]
	if cl == nil {
		if len(c.pending) >= c.max {
			n := len(c.pending)
			c.mu.Unlock()
			return zero, &NoAnswerError{What: what, Limit: limit, Full: true, Waiting: n}
		}
		cl = &call{what: what, started: time.Now(), done: make(chan struct{})}
		c.pending[key] = cl
		c.started++
		go c.run(key, cl, func() (any, error) { return fn() })
	}
	c.mu.Unlock()

	answer := func() (T, error) {
		if cl.err != nil {
			return zero, cl.err
		}
		v, ok := cl.val.(T)
		if !ok {
			return zero, fmt.Errorf("hostfs: the pending call for %q answered a %T", key, cl.val)
		}
		return v, nil
	}
	select {
	case <-cl.done:
		return answer()
	default:
	}
	left := time.Until(cl.started.Add(limit))
	if left <= 0 {
		return zero, &NoAnswerError{What: what, Limit: limit, Pending: time.Since(cl.started)}
	}
	t := time.NewTimer(left)
	defer t.Stop()
	select {
	case <-cl.done:
		return answer()
	case <-t.C:
		select {
		case <-cl.done:
			return answer()
		default:
		}
		return zero, &NoAnswerError{What: what, Limit: limit, Pending: time.Since(cl.started)}
	case <-ctx.Done():
		return zero, fmt.Errorf("stopped waiting for %s: %w", what, context.Cause(ctx))
	}
}

// run is the goroutine of one call: it may never return (a filesystem
// that never answers), which is why there is one per key.
func (c *Calls) run(key string, cl *call, fn func() (any, error)) {
	defer func() {
		if p := recover(); p != nil {
			cl.err = fmt.Errorf("hostfs: asking %s panicked: %v", cl.what, p)
		}
		c.mu.Lock()
		if c.pending[key] == cl {
			delete(c.pending, key)
		}
		c.mu.Unlock()
		close(cl.done)
	}()
	cl.val, cl.err = fn()
}
