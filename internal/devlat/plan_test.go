package devlat

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPlanFindsEveryDevice: the filter holds every watched device where
// the programs' search finds it, and finds no other; partitions share
// their disk's tag slots, and a partition's disk (not watched itself)
// counts its flushes for the first partition. Hundreds of devices (the
// exporter's globs on a large host) collide in the hash and still fit.
func TestPlanFindsEveryDevice(t *testing.T) {
	devs := []Device{
		{Name: "sda1", Major: 8, Minor: 1, Disk: "sda", DiskMajor: 8, HWQueues: 1, Tags: 64},
		{Name: "sda2", Major: 8, Minor: 2, Disk: "sda", DiskMajor: 8, HWQueues: 1, Tags: 64},
		{Name: "nvme0n1", Major: 259, Minor: 0, Disk: "nvme0n1", DiskMajor: 259, HWQueues: 2, Tags: 1023},
	}
	table, slots, err := plan(devs)
	require.NoError(t, err)
	require.EqualValues(t, 64+2*1023, slots, "sda's partitions share one region")
	for i, d := range devs {
		w, ok := lookup(table, d.kernelDev())
		require.True(t, ok, d.Name)
		require.EqualValues(t, i, w.Slot)
		require.Zero(t, w.Flags)
	}
	sda1, _ := lookup(table, devs[0].kernelDev())
	sda2, _ := lookup(table, devs[1].kernelDev())
	require.Equal(t, sda1.Base, sda2.Base)
	disk, ok := lookup(table, 8<<20)
	require.True(t, ok, "sda, for its partitions' flushes")
	require.Equal(t, watch{Dev: 8 << 20, Slot: 0, Flags: flushesOnly, Base: sda1.Base, NrHw: 1, Depth: 64}, disk)
	_, ok = lookup(table, 8<<20|3)
	require.False(t, ok)

	var many []Device
	for i := range 600 {
		many = append(many, Device{Name: fmt.Sprint("d", i), Major: uint32(7 + i/256), Minor: uint32(i % 256), HWQueues: 1, Tags: 2})
		many[i].Disk, many[i].DiskMajor, many[i].DiskMinor = many[i].Name, many[i].Major, many[i].Minor
	}
	table, _, err = plan(many)
	require.NoError(t, err)
	require.Zero(t, len(table)&(len(table)-1), "a power of two")
	for i, d := range many {
		w, ok := lookup(table, d.kernelDev())
		require.True(t, ok, d.Name)
		require.EqualValues(t, i, w.Slot)
	}
	_, ok = lookup(table, 100<<20)
	require.False(t, ok)
}
