package engine

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestYielderYieldsAfterAMillisecondOfShortCalls(t *testing.T) {
	var y Yielder
	y.Tick(5_000_000, 3_000)
	require.EqualValues(t, 6_000_000, y.next, "the first tick only sets the deadline")
	y.Tick(5_999_999, 3_000)
	require.EqualValues(t, 6_000_000, y.next)
	y.Tick(6_000_000, 3_000) // yields
	require.EqualValues(t, 7_000_000, y.next)
	y.Tick(9_500_000, 3_000) // late: yields once and starts a new millisecond
	require.EqualValues(t, 10_500_000, y.next)
	// A call that held the thread longer than a sysmon tick restarts the
	// millisecond instead of yielding.
	y.Tick(10_600_000, 50_000)
	require.EqualValues(t, 11_600_000, y.next)
}
