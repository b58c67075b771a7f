package engine

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestYielderYieldsAfterShortCallsOncePerPeriod(t *testing.T) {
	var y Yielder
	y.Tick(5_000_000, 3_000)
	require.EqualValues(t, 7_000_000, y.next, "the first tick only sets the deadline")
	y.Tick(6_999_999, 3_000)
	require.EqualValues(t, 7_000_000, y.next)
	y.Tick(7_000_000, 3_000) // yields
	require.EqualValues(t, 9_000_000, y.next)
	// Past the deadline, a long call does not yield, the next short one does.
	y.Tick(9_100_000, 50_000)
	require.EqualValues(t, 9_000_000, y.next)
	y.Tick(12_500_000, 3_000)
	require.EqualValues(t, 14_500_000, y.next)
}
