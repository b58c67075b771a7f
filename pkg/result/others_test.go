package result

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOthersNotesOnlyAboveTheThreshold(t *testing.T) {
	u64 := func(n uint64) *uint64 { return &n }
	r := run("h", 2, latencies(1000, 100_000, 10_000, 1), nil, 2, 50)
	r.Summary.Device = &DeviceStats{Devices: []string{"loop3"}, ReadOps: 1000, ReadBytes: 1000 * 8192}
	require.Empty(t, r.OthersNotes(), "not measured: nothing to say")

	r.Summary.HostOthers = &HostOthers{CPUFraction: 0.81, DeviceOps: u64(250), DeviceBytes: u64(250 * 8192)}
	notes := r.OthersNotes()
	require.Equal(t, []string{
		"others used 1.62 of 2 CPUs during the window (81.0% of the host's CPU): the CPU figures are the host's, not ioprobe's alone",
		"others did 250 of the 1,000 I/Os and 2.05 MB of the 8.19 MB the device loop3 served during the window (25.0%): " +
			"the kernel's counts are not ioprobe's alone, and ioprobe's figures were measured beside that load",
	}, notes)

	// At the threshold, nothing; just above, the note.
	r.Summary.HostOthers = &HostOthers{CPUFraction: OthersThreshold, DeviceOps: u64(100), DeviceBytes: u64(100 * 8192)}
	require.Empty(t, r.OthersNotes())
	r.Summary.HostOthers.CPUFraction = OthersThreshold + 0.001
	require.Len(t, r.OthersNotes(), 1)
	require.True(t, strings.HasPrefix(r.OthersNotes()[0], "others used 0.20 of 2 CPUs"))

	// Few bytes but many I/Os is a share of the device too.
	r.Summary.HostOthers = &HostOthers{DeviceOps: u64(500), DeviceBytes: u64(500 * 512)}
	require.InDelta(t, 0.5, r.Summary.OthersDeviceShare(), 1e-12)

	// A buffered run (or one without a device count) has no device part.
	r.Summary.HostOthers = &HostOthers{CPUFraction: 0.05}
	require.Zero(t, r.Summary.OthersDeviceShare())
	require.Empty(t, r.OthersNotes())
}

func TestMergeOthersNeedsEveryRun(t *testing.T) {
	a := run("h1", 4, latencies(1000, 100_000, 10_000, 1), nil, 2, 50)
	b := run("h1", 4, latencies(1000, 100_000, 10_000, 2), nil, 2, 50)
	b.StartedAt = b.StartedAt.Add(10e9)
	a.Summary.HostOthers = &HostOthers{CPUFraction: 0.5}
	m, err := MergeRepeats(a, b)
	require.NoError(t, err)
	require.Nil(t, m.Summary.HostOthers, "one run did not measure it")

	b.Summary.HostOthers = &HostOthers{CPUFraction: 0.25}
	m, err = MergeRepeats(a, b)
	require.NoError(t, err)
	require.InDelta(t, 0.375, m.Summary.HostOthers.CPUFraction, 1e-12, "one machine, its repeats time-weighted")
	require.Nil(t, m.Summary.HostOthers.DeviceOps)
}
