package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Until returns true once the deadline has passed, and never before it.
func TestSleeperWakesAtItsDeadline(t *testing.T) {
	ctl := engine.NewControl(0, nil)
	s := ctl.NewSleeper()
	defer s.Close()
	for _, d := range []time.Duration{-time.Millisecond, 0, 50 * time.Microsecond, 2 * time.Millisecond} {
		deadline := engine.Nanotime() + int64(d)
		require.True(t, s.Until(deadline))
		require.GreaterOrEqual(t, engine.Nanotime(), deadline, "woke before its deadline (%s)", d)
	}
}

// A stop wakes a Sleeper whose deadline is an hour away, and one that
// starts sleeping after the stop does not sleep at all: a lane of a
// one-I/O-an-hour canary still stops at once. If the wake were lost this
// test would hang until go test's timeout.
func TestSleeperWokenByStop(t *testing.T) {
	ctl := engine.NewControl(0, nil)
	s, done := sleepAnHour(t, ctl)
	ctl.Stop()
	require.False(t, <-done, "a stopped sleep reports the stop")
	require.False(t, s.Until(engine.Nanotime()+int64(time.Hour)), "after a stop, no sleep")
}

// An error budget that runs out stops the run, and wakes sleepers too.
func TestSleeperWokenByErrorBudget(t *testing.T) {
	ctl := engine.NewControl(1, nil)
	_, done := sleepAnHour(t, ctl)
	ctl.Fail(&engine.Lane{}, &engine.IO{Op: workload.Op{Len: 4096}}, 5, -5)
	require.False(t, <-done)
}

// sleepAnHour starts a Sleeper of ctl sleeping for an hour and returns it
// with the channel its Until's answer comes on, once it is most likely
// asleep (either way a stop must wake it).
func sleepAnHour(t *testing.T, ctl *engine.Control) (*engine.Sleeper, <-chan bool) {
	s := ctl.NewSleeper()
	t.Cleanup(s.Close)
	done := make(chan bool, 1)
	go func() { done <- s.Until(engine.Nanotime() + int64(time.Hour)) }()
	//hygiene:sleep the point: Until parked in the poller before the stop, so that the stop's wake is tested, not the flag
	time.Sleep(10 * time.Millisecond)
	return s, done
}

// Sleeping allocates nothing: a paced lane sleeps once per I/O.
func TestSleeperAllocatesNothing(t *testing.T) {
	ctl := engine.NewControl(0, nil)
	s := ctl.NewSleeper()
	defer s.Close()
	allocs := testing.AllocsPerRun(50, func() { s.Until(engine.Nanotime() + 20_000) })
	require.Zero(t, allocs)
}
