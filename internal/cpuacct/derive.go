package cpuacct

import (
	"math"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// Work is what the measured window achieved, and the host it ran on.
type Work struct {
	Ops            uint64  // completed I/Os
	Bytes          uint64  // bytes they transferred
	ElapsedSeconds float64 // the measured time the ops were counted over
	LogicalCPUs    int     // result.Host.LogicalCPUs; 0: the CPUs the window saw
	ClockHz        float64 // result.Host.ClockHz
}

// Derive computes the reports' CPU figures. With f the host's busy
// fraction over the window (busy ÷ total ticks, all CPUs), N the logical
// CPUs and E the elapsed seconds:
//
//	host_busy_cores            = f × N               (busy CPU-seconds ÷ E)
//	host_utilization_pct       = f × 100 × N         (summed over CPUs, esx2; may exceed 100)
//	host_cpu_seconds_per_io    = f × N × E ÷ ops     (busy CPU-seconds ÷ ops)
//	cycles_per_io              = (f × 100) × Hz × N ÷ (100 × IOPS)   (vsphere5)
//	                           = busy CPU-seconds × Hz ÷ ops
//	iops_per_cpu_pct           = IOPS ÷ host_utilization_pct          (esx2)
//	mb_per_second_per_cpu_pct  = (bytes ÷ 10^6 ÷ E) ÷ host_utilization_pct
//	process_cpu_seconds_per_io = (user + system) ÷ ops
//
// Busy CPU-seconds are f × N × E rather than the raw busy ticks ÷ USER_HZ:
// the busy fraction is a ratio of two counters from the same samples, so a
// window slightly longer than the measured time, or a USER_HZ guess, does
// not skew the per-I/O cost. When the window is exactly the measured time
// on N CPUs the two are the same number.
//
// Figures that divide by zero (no ops, no elapsed time, an idle or
// unmeasured host) are 0, never NaN or Inf, so the JSON always encodes.
func Derive(u Usage, w Work) result.CPU {
	f := math.Min(math.Max(u.HostBusyFraction(), 0), 1)
	n := float64(w.LogicalCPUs)
	if w.LogicalCPUs <= 0 {
		n = float64(len(u.Host.CPUs))
	}
	e := w.ElapsedSeconds
	ops := float64(w.Ops)
	iops := div(ops, e)
	mbps := div(float64(w.Bytes)/1e6, e)
	busyPct := f * 100 // average per CPU: % of total host capacity
	util := busyPct * n
	busySeconds := f * n * e

	c := result.CPU{
		ProcessUserSeconds:     u.ProcessUser.Seconds(),
		ProcessSystemSeconds:   u.ProcessSystem.Seconds(),
		ProcessCPUSecondsPerIO: div(u.ProcessCPU().Seconds(), ops),
		HostBusyCores:          f * n,
		HostUtilizationPct:     util,
		HostCPUSecondsPerIO:    div(busySeconds, ops),
		CyclesPerIO:            div(busyPct*w.ClockHz*n, 100*iops),
		IOPSPerCPUPct:          div(iops, util),
		MBPerSecondPerCPUPct:   div(mbps, util),
	}
	for _, p := range []*float64{&c.ProcessUserSeconds, &c.ProcessSystemSeconds, &c.ProcessCPUSecondsPerIO,
		&c.HostBusyCores, &c.HostUtilizationPct, &c.HostCPUSecondsPerIO, &c.CyclesPerIO,
		&c.IOPSPerCPUPct, &c.MBPerSecondPerCPUPct} {
		*p = finite(*p)
	}
	return c
}

// div is a ÷ b, or 0 when b is not a positive finite number.
func div(a, b float64) float64 {
	if !(b > 0) || math.IsInf(b, 0) {
		return 0
	}
	return finite(a / b)
}

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0
	}
	return v
}
