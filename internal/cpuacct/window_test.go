package cpuacct

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func spin(d time.Duration) uint64 {
	var x uint64 = 1
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := 0; i < 10_000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	return x
}

var sink uint64

func TestWindowBusyLoopRaisesProcessCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc/stat") //hygiene:skip not Linux
	}
	idle := Start()
	time.Sleep(100 * time.Millisecond) //hygiene:sleep an idle window to measure, not a wait for an event
	idleUsage, err := idle.Stop()
	require.NoError(t, err)

	busy := Start()
	sink += spin(200 * time.Millisecond)
	busyUsage, err := busy.Stop()
	require.NoError(t, err)

	require.Positive(t, busyUsage.ProcessUser)
	require.Greater(t, busyUsage.ProcessCPU(), idleUsage.ProcessCPU())
	require.Positive(t, busyUsage.HostBusyFraction(), "spinning keeps one CPU of the host busy")
	require.Positive(t, busyUsage.Host.All.Total())
	require.GreaterOrEqual(t, busyUsage.Elapsed, 200*time.Millisecond)

	h, _ := Reader{}.Host()
	require.Len(t, busyUsage.Host.CPUs, h.LogicalCPUs)
}

func TestWindowStopIsCumulative(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc/stat") //hygiene:skip not Linux
	}
	w := Start()
	sink += spin(20 * time.Millisecond)
	first, err := w.Stop()
	require.NoError(t, err)
	sink += spin(20 * time.Millisecond)
	second, err := w.Stop()
	require.NoError(t, err)
	require.GreaterOrEqual(t, second.ProcessCPU(), first.ProcessCPU())
	require.Greater(t, second.Elapsed, first.Elapsed)
}

func TestWindowFixtureHost(t *testing.T) {
	// A host whose counters do not move between samples: zero deltas, no
	// error, process CPU still measured.
	w := fixtureReader("xeon-pstate").Start()
	sink += spin(10 * time.Millisecond)
	u, err := w.Stop()
	require.NoError(t, err)
	require.Equal(t, CPUTimes{}, u.Host.All)
	require.Len(t, u.Host.CPUs, 8)
	require.Zero(t, u.HostBusyFraction())
	require.Positive(t, u.ProcessCPU())
}

func TestWindowWithoutProcfs(t *testing.T) {
	u, err := fixtureReader("does-not-exist").Start().Stop()
	require.ErrorContains(t, err, "host CPU")
	require.NotContains(t, err.Error(), "process CPU")
	require.Equal(t, Stat{}, u.Host)
	require.Zero(t, u.HostBusyFraction())
}
