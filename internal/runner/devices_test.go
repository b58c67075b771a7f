package runner

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/devlat"
	"github.com/ioprobe/ioprobe/internal/target"
	"github.com/ioprobe/ioprobe/pkg/result"
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

// TestDeviceDeltaTakesAPartitionsFlushesFromItsDisk: the kernel counts a
// flush on the whole disk only (a partition's flush fields stay 0): two
// partitions of one disk take its flushes once, and say so.
func TestDeviceDeltaTakesAPartitionsFlushesFromItsDisk(t *testing.T) {
	before := map[string]target.DiskStats{"sda1": {WriteOps: 10}, "sda2": {WriteOps: 4}, "sda": {WriteOps: 14, FlushOps: 2}}
	after := map[string]target.DiskStats{"sda1": {WriteOps: 30}, "sda2": {WriteOps: 8}, "sda": {WriteOps: 38, FlushOps: 22, FlushTicks: 4000}}
	d := deviceDelta([]string{"sda1", "sda2"}, map[string]string{"sda1": "sda", "sda2": "sda"}, before, after)
	require.EqualValues(t, 10+2, d.WriteOps, "the partitions' own writes")
	require.EqualValues(t, 10, d.FlushOps, "the disk's flushes, once")
	require.InDelta(t, 2.0, d.FlushSeconds, 1e-12)
	require.Equal(t, []string{"sda"}, d.FlushDevices)
}

// TestOwnReadsLeaveTheKernelsCounts: ioprobe's own check reads are taken
// out of the kernel's reads: as the programs counted the marked requests
// when they ran and the kernel takes the mark, else as the guard counted
// its reads in the window, and then the latency says it holds them.
func TestOwnReadsLeaveTheKernelsCounts(t *testing.T) {
	checks := &result.SafetyChecks{WindowReadOps: 25, WindowReadBytes: 25 << 16}
	rs := []devlat.Reading{{Own: 20, OwnBytes: 20 << 16}, {Own: 6, OwnBytes: 6 << 16}}
	for _, c := range []struct {
		name     string
		rs       []devlat.Reading
		marks    bool
		own      uint64
		inLatent bool
	}{
		{"marked", rs, true, 26, false},
		{"no hints", rs, false, 25, true},
		{"no programs", nil, true, 25, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := &result.DeviceStats{ReadOps: 100, ReadBytes: 100 << 16, WriteOps: 500}
			ownReads(d, c.rs, checks, c.marks)
			require.Equal(t, c.own, d.OwnReadOps)
			require.Equal(t, 100-c.own, d.ReadOps)
			require.Equal(t, (100-c.own)<<16, d.ReadBytes)
			require.EqualValues(t, 500, d.WriteOps)
			require.Equal(t, c.inLatent, d.OwnInLatency != "", d.OwnInLatency)
		})
	}
	d := &result.DeviceStats{ReadOps: 3}
	ownReads(d, nil, checks, false)
	require.EqualValues(t, 0, d.ReadOps, "never below zero")
	require.EqualValues(t, 3, d.OwnReadOps)
}
