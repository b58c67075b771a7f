package engine

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestYielderYieldsAfterShortCallsOncePerPeriod(t *testing.T) {
	const p = yieldEvery
	require.Less(t, int64(p), int64(10_000_000), "the period must stay under sysmon's 10 ms preemption slice")
	var y Yielder
	y.Tick(5_000_000, 3_000)
	require.EqualValues(t, 5_000_000+p, y.next, "the first tick only sets the deadline")
	y.Tick(5_000_000+p-1, 3_000)
	require.EqualValues(t, 5_000_000+p, y.next)
	y.Tick(5_000_000+p, 3_000) // yields
	require.EqualValues(t, 5_000_000+2*p, y.next)
	// Past the deadline, a long call does not yield, the next short one does.
	y.Tick(5_000_000+2*p+100_000, 50_000)
	require.EqualValues(t, 5_000_000+2*p, y.next)
	y.Tick(5_000_000+2*p+500_000, 3_000)
	require.EqualValues(t, 5_000_000+3*p+500_000, y.next)
	// Only long calls: a lane never yields after one.
	deadline := int64(5_000_000 + 3*p + 500_000)
	y.Tick(deadline+2*p, 50_000)
	require.EqualValues(t, deadline, y.next, "a lane does not yield after a long call")
}

// A ring's loop yields after short calls as a lane does, and when none has
// been short for half a period more, after a long one, before sysmon's
// 10 ms slice.
func TestYielderRingYieldsLateAfterLongCalls(t *testing.T) {
	const p = yieldEvery
	var y Yielder
	y.TickRing(1_000_000, 3_000)
	deadline := int64(1_000_000 + p)
	y.TickRing(deadline, 3_000) // yields
	deadline += p
	require.EqualValues(t, deadline, y.next)
	y.TickRing(deadline+p/2-1, 50_000)
	require.EqualValues(t, deadline, y.next, "long calls, not yet half a period late")
	y.TickRing(deadline+p/2, 50_000)
	require.EqualValues(t, deadline+p/2+p, y.next, "yielded after a long call")
	require.Less(t, int64(p+p/2), int64(10_000_000), "the late yield still comes before sysmon's 10 ms")
}
