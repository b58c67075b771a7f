package cpuacct

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUserHZFromAuxv(t *testing.T) {
	hz, ok := auxvClkTck()
	require.True(t, ok, "the kernel passes AT_CLKTCK to every process")
	// USER_HZ is 100 on every architecture Go supports on Linux.
	require.Equal(t, uint64(100), hz)
	require.Equal(t, hz, UserHZ())
}
