package hostfs

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ioprobe/ioprobe/internal/testwait"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blocker is a call that blocks until released, as a stat on a filesystem
// whose server went away: it counts how often it was entered.
type blocker struct {
	release chan struct{}
	entered atomic.Int32
}

func newBlocker() *blocker { return &blocker{release: make(chan struct{})} }

func (b *blocker) call() (int, error) {
	b.entered.Add(1)
	<-b.release
	return 42, nil
}

// A call that does not answer returns, at its deadline, an error naming
// the object; later calls on the same object join the pending one (no
// new goroutine, fn not entered again) and fail at once once its deadline
// is past; after the answer comes, the next call asks again.
func TestDoDeadlineNamesTheObjectAndDoesNotPileUp(t *testing.T) {
	c := NewCalls(8)
	b := newBlocker()
	ctx := context.Background()
	const limit = 50 * time.Millisecond
	what := "loop device loop1 (its backing file /x/img, on the fuse mount /x)"

	before := runtime.NumGoroutine()
	start := time.Now()
	_, err := Do(ctx, c, "loop1", what, limit, b.call)
	waited := time.Since(start)
	var na *NoAnswerError
	require.ErrorAs(t, err, &na)
	require.ErrorIs(t, err, ErrNoAnswer)
	require.Contains(t, err.Error(), what)
	require.Contains(t, err.Error(), "did not answer within")
	require.GreaterOrEqual(t, waited, limit, "it waited for the deadline")
	require.Equal(t, what, c.Pending()[0].What)

	// Many more askers, at once and one after another: one goroutine.
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := Do(ctx, c, "loop1", what, limit, b.call)
			assert.ErrorIs(t, err, ErrNoAnswer)
		}()
	}
	wg.Wait()
	for range 20 {
		_, err := Do(ctx, c, "loop1", what, limit, b.call)
		require.ErrorIs(t, err, ErrNoAnswer)
	}
	require.EqualValues(t, 1, b.entered.Load(), "the object was asked once")
	require.Equal(t, 1, c.Started())
	require.Len(t, c.Pending(), 1)
	// The askers' own goroutines end as they return; what stays is the one
	// waiting in the call. (Counted here, not in require.Eventually, whose
	// condition runs on goroutines of its own.)
	for deadline := time.Now().Add(10 * time.Second); runtime.NumGoroutine() > before+1 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond) //hygiene:sleep polling the goroutine count, which a helper's goroutines would change
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), before+1, "one goroutine waits in the call, no more")

	// Released: the pending call ends and the next one asks afresh.
	close(b.release)
	require.Eventually(t, func() bool { return len(c.Pending()) == 0 }, testwait.Patience, time.Millisecond)
	v, err := Do(ctx, c, "loop1", what, limit, b.call)
	require.NoError(t, err)
	require.Equal(t, 42, v)
	require.EqualValues(t, 2, b.entered.Load())
}

// A caller that joins a call pending for longer than its deadline is told
// at once, and how long it has been waiting.
func TestDoJoinsAnOldCallWithoutWaiting(t *testing.T) {
	c := NewCalls(8)
	b := newBlocker()
	defer close(b.release)
	_, err := Do(context.Background(), c, "k", "nfs:/export", 20*time.Millisecond, b.call)
	require.ErrorIs(t, err, ErrNoAnswer)
	start := time.Now()
	_, err = Do(context.Background(), c, "k", "nfs:/export", 20*time.Millisecond, b.call)
	require.ErrorIs(t, err, ErrNoAnswer)
	// Not a speed threshold: a joiner does not wait a second deadline's
	// worth, which a loaded machine cannot make it do by chance.
	require.Less(t, time.Since(start), time.Second)
	var na *NoAnswerError
	require.ErrorAs(t, err, &na)
	require.GreaterOrEqual(t, na.Pending, 20*time.Millisecond)
	require.EqualError(t, err, "nfs:/export did not answer within 20ms", "the same words as the first caller's")
}

// The context ends the wait (a signal), not the call.
func TestDoStopsWaitingWhenTheContextEnds(t *testing.T) {
	c := NewCalls(8)
	b := newBlocker()
	defer close(b.release)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Do(ctx, c, "k", "the nfs mount /mnt", time.Hour, b.call)
		done <- err
	}()
	require.Eventually(t, func() bool { return b.entered.Load() == 1 }, testwait.Patience, time.Millisecond)
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
		require.Contains(t, err.Error(), "stopped waiting for the nfs mount /mnt")
	case <-time.After(30 * time.Second): // a hang detector, not a speed threshold
		t.Fatal("Do did not return when its context ended")
	}
}

// At most max objects may be waiting; beyond that Do starts nothing.
func TestDoBoundsPendingCalls(t *testing.T) {
	c := NewCalls(2)
	b := newBlocker()
	defer close(b.release)
	for _, k := range []string{"a", "b"} {
		_, err := Do(context.Background(), c, k, k, time.Millisecond, b.call)
		require.ErrorIs(t, err, ErrNoAnswer)
	}
	_, err := Do(context.Background(), c, "c", "the third", time.Hour, b.call)
	var na *NoAnswerError
	require.ErrorAs(t, err, &na)
	require.True(t, na.Full)
	require.EqualError(t, err, "the third was not asked: 2 earlier calls to the host's filesystems are still waiting for an answer")
	require.EqualValues(t, 2, b.entered.Load())
}

// Answers, errors and panics come back as they are.
func TestDoAnswers(t *testing.T) {
	c := NewCalls(2)
	v, err := Do(context.Background(), c, "ok", "ok", time.Hour, func() (string, error) { return "fine", nil })
	require.NoError(t, err)
	require.Equal(t, "fine", v)
	boom := errors.New("ENOTCONN")
	_, err = Do(context.Background(), c, "err", "err", time.Hour, func() (string, error) { return "", boom })
	require.ErrorIs(t, err, boom)
	_, err = Do(context.Background(), c, "panic", "the thing", time.Hour, func() (string, error) { panic("oops") })
	require.ErrorContains(t, err, "asking the thing panicked: oops")
	require.Empty(t, c.Pending())
}
