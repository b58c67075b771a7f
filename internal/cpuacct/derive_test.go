package cpuacct

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// A 5 s window on 2 CPUs at USER_HZ 100 is 1000 ticks; 400 of them busy.
func exampleUsage() Usage {
	return Usage{
		Elapsed:       5 * time.Second,
		ProcessUser:   1500 * time.Millisecond,
		ProcessSystem: 500 * time.Millisecond,
		Host: Stat{All: CPUTimes{User: 300, System: 80, IRQ: 10, SoftIRQ: 10, Idle: 550, IOWait: 50,
			Guest: 20}},
		UserHZ: 100,
	}
}

func TestDeriveHandComputed(t *testing.T) {
	u := exampleUsage()
	require.Equal(t, 4.0, u.HostBusySeconds())
	require.Equal(t, 10.0, u.HostTotalSeconds())
	require.Equal(t, 0.4, u.HostBusyFraction())

	// 100,000 ops of 8 KiB in 5 s: 20,000 IOPS, 163.84 MB/s.
	c := Derive(u, Work{Ops: 100_000, Bytes: 100_000 * 8192, ElapsedSeconds: 5, LogicalCPUs: 2, ClockHz: 2.5e9})
	want := result.CPU{
		ProcessUserSeconds:     1.5,
		ProcessSystemSeconds:   0.5,
		ProcessCPUSecondsPerIO: 2.0 / 100_000, // 20 µs
		HostBusyCores:          0.8,           // 4 busy CPU-seconds / 5 s
		HostUtilizationPct:     80,            // 40% of each of 2 CPUs, summed
		HostCPUSecondsPerIO:    4.0 / 100_000, // 40 µs
		CyclesPerIO:            100_000,       // 40 × 2.5e9 × 2 / (100 × 20,000)
		IOPSPerCPUPct:          250,           // 20,000 / 80
		MBPerSecondPerCPUPct:   2.048,         // 163.84 / 80
	}
	requireCPU(t, want, c)
}

// Table 2 and Table 4 of the esx2 report, LSI Logic 4 KB random write:
// 817 IOPS at 10.7% CPU summed over 4 CPUs.
func TestDeriveESX2Row(t *testing.T) {
	u := Usage{Host: Stat{All: CPUTimes{User: 800, System: 270, Idle: 38930}}, UserHZ: 100} // 100 s × 4 CPUs
	c := Derive(u, Work{Ops: 81_700, Bytes: 81_700 * 4096, ElapsedSeconds: 100, LogicalCPUs: 4, ClockHz: 2e9})
	require.InDelta(t, 10.7, c.HostUtilizationPct, 1e-9)
	require.InDelta(t, 817/10.7, c.IOPSPerCPUPct, 1e-9) // 76.36
	require.InDelta(t, 817*4096/1e6/10.7, c.MBPerSecondPerCPUPct, 1e-12)
}

// The vsphere5 formula, with its host (80 logical threads at a rated
// 2.4 GHz): at 50% average processor time and 1,000,000 IOPS, 96,000
// cycles per I/O.
func TestDeriveVSphere5Formula(t *testing.T) {
	u := Usage{Host: Stat{All: CPUTimes{User: 4000, Idle: 4000}}, UserHZ: 100} // 1 s × 80 CPUs, half busy
	c := Derive(u, Work{Ops: 1_000_000, ElapsedSeconds: 1, LogicalCPUs: 80, ClockHz: 2.4e9})
	require.InDelta(t, 96_000, c.CyclesPerIO, 1e-6)
	require.InDelta(t, 4000.0, c.HostUtilizationPct, 1e-9)
}

// cycles_per_io in the report's form equals busy CPU-seconds × Hz ÷ ops
// (its units: % × cycles/s × CPUs ÷ (% × ops/s) = cycles/op).
func TestCyclesFormsAgree(t *testing.T) {
	for _, tc := range []struct {
		busy, idle uint64
		cpus       int
		ops        uint64
		elapsed    float64
		hz         float64
	}{
		{400, 600, 2, 100_000, 5, 2.5e9},
		{12_345, 67_655, 16, 7_777_777, 50, 3.1e9},
		{1, 999_999, 64, 3, 156.25, 1.2e9},
	} {
		u := Usage{Host: Stat{All: CPUTimes{System: tc.busy, Idle: tc.idle}}, UserHZ: 100}
		// The window is the measured time on every CPU.
		require.InDelta(t, tc.elapsed*float64(tc.cpus), u.HostTotalSeconds(), 1e-9)
		c := Derive(u, Work{Ops: tc.ops, ElapsedSeconds: tc.elapsed, LogicalCPUs: tc.cpus, ClockHz: tc.hz})

		iops := float64(tc.ops) / tc.elapsed
		busyPct := 100 * u.HostBusyFraction()
		reportForm := busyPct * tc.hz * float64(tc.cpus) / (100 * iops)
		secondsForm := u.HostBusySeconds() * tc.hz / float64(tc.ops)
		require.InEpsilon(t, reportForm, c.CyclesPerIO, 1e-12)
		require.InEpsilon(t, secondsForm, c.CyclesPerIO, 1e-12)
		require.InEpsilon(t, c.HostCPUSecondsPerIO*tc.hz, c.CyclesPerIO, 1e-12)
		require.InEpsilon(t, u.HostBusySeconds()/tc.elapsed, c.HostBusyCores, 1e-12)
	}
}

// A window longer than the measured time (the runner started it a little
// early) keeps the busy share, so the cost per I/O is not inflated by CPU
// time spent outside the measurement.
func TestDeriveWindowLongerThanMeasurement(t *testing.T) {
	u := exampleUsage()
	u.Host.All.User *= 2
	u.Host.All.System *= 2
	u.Host.All.IRQ *= 2
	u.Host.All.SoftIRQ *= 2
	u.Host.All.Idle *= 2
	u.Host.All.IOWait *= 2 // 10 s of ticks for a 5 s measurement
	c := Derive(u, Work{Ops: 100_000, ElapsedSeconds: 5, LogicalCPUs: 2, ClockHz: 2.5e9})
	require.InDelta(t, 40.0/1e6, c.HostCPUSecondsPerIO, 1e-15)
	require.InDelta(t, 80.0, c.HostUtilizationPct, 1e-9)
}

func TestDeriveZeroGuards(t *testing.T) {
	busy := exampleUsage()
	idle := Usage{Host: Stat{All: CPUTimes{Idle: 1000}}, UserHZ: 100}
	for name, tc := range map[string]struct {
		u Usage
		w Work
	}{
		"no ops":        {busy, Work{ElapsedSeconds: 5, LogicalCPUs: 2, ClockHz: 2.5e9}},
		"no time":       {busy, Work{Ops: 10, Bytes: 40960, LogicalCPUs: 2, ClockHz: 2.5e9}},
		"idle host":     {idle, Work{Ops: 10, Bytes: 40960, ElapsedSeconds: 5, LogicalCPUs: 2, ClockHz: 2.5e9}},
		"not measured":  {Usage{}, Work{Ops: 10, Bytes: 40960, ElapsedSeconds: 5, LogicalCPUs: 2, ClockHz: 2.5e9}},
		"NaN elapsed":   {busy, Work{Ops: 10, ElapsedSeconds: math.NaN(), LogicalCPUs: 2, ClockHz: 2.5e9}},
		"Inf elapsed":   {busy, Work{Ops: 10, ElapsedSeconds: math.Inf(1), LogicalCPUs: 2, ClockHz: 2.5e9}},
		"no clock rate": {busy, Work{Ops: 10, ElapsedSeconds: 5, LogicalCPUs: 2}},
		"nothing":       {Usage{}, Work{}},
	} {
		c := Derive(tc.u, tc.w)
		_, err := json.Marshal(c)
		require.NoError(t, err, name)
		for _, v := range []float64{c.ProcessUserSeconds, c.ProcessSystemSeconds, c.ProcessCPUSecondsPerIO,
			c.HostBusyCores, c.HostUtilizationPct, c.HostCPUSecondsPerIO, c.CyclesPerIO, c.IOPSPerCPUPct,
			c.MBPerSecondPerCPUPct} {
			require.False(t, math.IsNaN(v) || math.IsInf(v, 0) || v < 0, "%s: %+v", name, c)
		}
	}

	c := Derive(idle, Work{Ops: 10, Bytes: 40960, ElapsedSeconds: 5, LogicalCPUs: 2, ClockHz: 2.5e9})
	require.Zero(t, c.HostUtilizationPct)
	require.Zero(t, c.IOPSPerCPUPct)
	require.Zero(t, c.MBPerSecondPerCPUPct)
	require.Zero(t, c.CyclesPerIO)

	c = Derive(busy, Work{ElapsedSeconds: 5, LogicalCPUs: 2, ClockHz: 2.5e9})
	require.Zero(t, c.ProcessCPUSecondsPerIO)
	require.Zero(t, c.HostCPUSecondsPerIO)
	require.Equal(t, 80.0, c.HostUtilizationPct) // the host was busy even if no I/O completed
	require.Equal(t, 1.5, c.ProcessUserSeconds)
}

func TestDeriveLogicalCPUsFromWindow(t *testing.T) {
	// A caller without host info still gets a sum over the CPUs the
	// window saw.
	u := exampleUsage()
	u.Host.CPUs = []CPU{{ID: 0}, {ID: 1}}
	c := Derive(u, Work{Ops: 100_000, ElapsedSeconds: 5, ClockHz: 2.5e9})
	require.InDelta(t, 80.0, c.HostUtilizationPct, 1e-9)
}

func requireCPU(t *testing.T, want, got result.CPU) {
	t.Helper()
	wantJSON, err := json.Marshal(want)
	require.NoError(t, err)
	var wantMap, gotMap map[string]float64
	require.NoError(t, json.Unmarshal(wantJSON, &wantMap))
	gotJSON, err := json.Marshal(got)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(gotJSON, &gotMap))
	require.Len(t, gotMap, len(wantMap))
	for k, v := range wantMap {
		require.InEpsilon(t, v, gotMap[k], 1e-12, k)
	}
}
