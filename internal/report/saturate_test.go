package report

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSaturatingConversions: a document's figure out of an integer's
// range is that range's bound, never a wrapped value.
func TestSaturatingConversions(t *testing.T) {
	require.Equal(t, int64(math.MaxInt64), satInt64(1e300))
	require.Equal(t, int64(math.MinInt64), satInt64(-1e300))
	require.Equal(t, int64(0), satInt64(math.NaN()))
	require.Equal(t, int64(3), satInt64(2.5))
	require.Equal(t, uint64(math.MaxUint64), satUint64(math.Inf(1)))
	require.Equal(t, uint64(0), satUint64(-4))
	require.Equal(t, uint64(1<<62), satUint64(1<<62))
	require.Equal(t, "16 EiB", iecf(math.MaxUint64))
	require.Equal(t, "2 h 1 min", seconds(7260))
	require.Equal(t, "59 min 59 s", seconds(3599.99))
	require.Equal(t, "1.5 s", seconds(1.5))
}
