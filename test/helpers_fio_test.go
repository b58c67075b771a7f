package test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// diskstat reads the device's counters: reads, read sectors, writes,
// write sectors, flushes (/sys/block/DEV/stat fields 1, 3, 5, 7, 16).
func diskstat(t *testing.T, dev string) [5]uint64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "stat"))
	require.NoError(t, err)
	f := strings.Fields(string(b))
	require.GreaterOrEqual(t, len(f), 16, "a kernel that counts flushes (5.5+)")
	var out [5]uint64
	for i, k := range []int{0, 2, 4, 6, 15} {
		out[i], err = strconv.ParseUint(f[k], 10, 64)
		require.NoError(t, err)
	}
	return out
}
