package runner

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/target"
)

// TestDeviceDeltaGuardsCounterWrap: the window's device counts are the
// halved differences of two summed readings; a counter that went back
// between them (it wrapped, or the device was replaced) counts 0, where
// the unsigned difference would have been nearly 2^64.
func TestDeviceDeltaGuardsCounterWrap(t *testing.T) {
	before := map[string]target.DiskStats{
		"sda": {ReadOps: 200, ReadSectors: 800, WriteOps: 10, FlushOps: 4, FlushTicks: 6},
		"sdb": {ReadOps: 1 << 40, WriteOps: 50},
	}
	after := map[string]target.DiskStats{
		"sda": {ReadOps: 400, ReadSectors: 1600, WriteOps: 30, FlushOps: 8, FlushTicks: 2006},
		"sdb": {ReadOps: 6, WriteOps: 70}, // reads went back
	}
	d := deviceDelta([]string{"sda", "sdb", "sdc"}, nil, before, after)
	require.EqualValues(t, 100, d.ReadOps, "sda's 100; sdb's wrapped reads count 0; sdc was never read")
	require.EqualValues(t, 400*target.SectorSize, d.ReadBytes)
	require.EqualValues(t, 10+10, d.WriteOps)
	require.EqualValues(t, 2, d.FlushOps)
	require.InDelta(t, 1.0, d.FlushSeconds, 1e-12)
	require.Equal(t, []string{"sda", "sdb", "sdc"}, d.Devices)
}
