package runner

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/target"
	"github.com/ioprobe/ioprobe/internal/testwait"
)

// stuckGuard is a guard over one writable target whose looks block until
// released, as a read of storage that stopped answering does.
func stuckGuard(t *testing.T, deadline time.Duration) (g *guard, entered *atomic.Int32, release func()) {
	t.Helper()
	g = newGuard([]*openTarget{{t: &target.Target{Path: "/data/probe.dat", Writable: true}}}, deadline)
	require.NotNil(t, g)
	entered = &atomic.Int32{}
	rel := make(chan struct{})
	g.scan = func(*target.Target, *target.ReadCount) error {
		entered.Add(1)
		<-rel
		return nil
	}
	var once atomic.Bool
	release = func() {
		if once.CompareAndSwap(false, true) {
			close(rel)
		}
	}
	t.Cleanup(release)
	return g, entered, release
}

// A look that does not finish within the deadline stops the writes, fail
// closed, naming the target; asking for looks meanwhile never waits, and
// closing the guard does not wait for the stuck look.
func TestGuardLookThatDoesNotAnswerStopsTheWrites(t *testing.T) {
	g, entered, _ := stuckGuard(t, 100*time.Millisecond)
	g.request()
	for range 1000 {
		g.request() // the interval ticks: never blocked by the look
	}
	select {
	case f := <-g.foundC():
		require.True(t, f.unanswered)
		require.Equal(t, "/data/probe.dat", f.stop.Target)
		require.Equal(t, []string{string(target.RefuseUnverifiable)}, f.stop.Refusals)
		require.Contains(t, f.stop.Reason, "did not finish within 100ms")
		require.Contains(t, stopMessage(&f), "stopped writing to /data/probe.dat: its look for filesystems and labels did not finish within 100ms")
		g.stop = &f
	case <-time.After(30 * time.Second): // a hang detector, not a speed threshold
		t.Fatal("a look that does not answer never stopped the writes")
	}
	require.EqualValues(t, 1, entered.Load(), "one look at a time")
	last := make(chan *guardFind, 1)
	go func() { last <- g.last(nil) }()
	select {
	case f := <-last:
		require.Same(t, g.stop, f)
	case <-time.After(30 * time.Second):
		t.Fatal("ending the guard waited for the stuck look")
	}
	require.Zero(t, g.summary().Looks, "the stuck look has not finished")
}

// The run's last look is waited for no longer than lastGrace once the run
// was interrupted, and the result says it was skipped.
func TestGuardLastLookOfAnInterruptedRun(t *testing.T) {
	g, entered, release := stuckGuard(t, time.Hour)
	hurry := make(chan struct{})
	close(hurry)
	done := make(chan *guardFind, 1)
	go func() { done <- g.last(hurry) }()
	select {
	case f := <-done:
		require.Nil(t, f)
		require.True(t, g.skipped)
	case <-time.After(30 * time.Second):
		t.Fatal("the last look of an interrupted run was waited for")
	}
	require.EqualValues(t, 1, entered.Load())
	release()
	require.Eventually(t, func() bool { return g.summary().Looks == 1 }, testwait.Patience, time.Millisecond,
		"the look counts once it finishes")
}

// A look that answers is as before: nothing found, counted.
func TestGuardLookThatAnswers(t *testing.T) {
	g, _, release := stuckGuard(t, time.Hour)
	release()
	f := g.last(make(chan struct{}))
	require.Nil(t, f)
	require.False(t, g.skipped)
	require.Equal(t, 1, g.summary().Looks)
}
