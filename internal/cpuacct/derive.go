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

// Derive computes the reports' CPU figures of one run (result.DeriveCPU
// holds their formulas). With f the host's busy fraction over the window
// (busy ÷ total ticks, all CPUs) and N the logical CPUs, the host was busy
// f × N cores, f × 100 × N percent summed over CPUs, at f × N × Hz cycles
// per second.
//
// Busy CPU-seconds are f × N × E rather than the raw busy ticks ÷ USER_HZ:
// the busy fraction is a ratio of two counters from the same samples, so a
// window slightly longer than the measured time, or a USER_HZ guess, does
// not skew the per-I/O cost. When the window is exactly the measured time
// on N CPUs the two are the same number.
func Derive(u Usage, w Work) result.CPU {
	f := math.Min(math.Max(u.HostBusyFraction(), 0), 1)
	n := float64(w.LogicalCPUs)
	if w.LogicalCPUs <= 0 {
		n = float64(len(u.Host.CPUs))
	}
	rates := result.Summary{Ops: w.Ops, Bytes: w.Bytes, ElapsedSeconds: w.ElapsedSeconds}
	rates.SetRates()
	return result.DeriveCPU(result.CPUWork{
		Ops: w.Ops, IOPS: rates.IOPS, MBPerSecond: rates.MBPerSecond, ElapsedSeconds: w.ElapsedSeconds,
		BusyCores: f * n, UtilizationPct: f * 100 * n, BusyHz: f * n * w.ClockHz,
		ProcessUser: u.ProcessUser.Seconds(), ProcessSystem: u.ProcessSystem.Seconds(), ProcessCPU: u.ProcessCPU().Seconds(),
	})
}
