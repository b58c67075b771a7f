package result

import "math"

// CPUWork is what the CPU figures are computed from: the work of the
// measured window and the CPU it cost. For one run the busy figures come
// from /proc/stat (cpuacct); for merged runs they are each host's
// time-weighted averages summed over hosts.
type CPUWork struct {
	Ops            uint64
	IOPS           float64
	MBPerSecond    float64
	ElapsedSeconds float64
	// BusyCores is the host CPU-seconds spent per second (busy fraction ×
	// logical CPUs), UtilizationPct the same in the reports' percent
	// summed over CPUs, BusyHz the cycles per second they stand for
	// (busy cores × clock rate).
	BusyCores, UtilizationPct, BusyHz float64
	ProcessUser, ProcessSystem        float64 // seconds
	// ProcessCPU is user + system seconds, summed before converting to
	// seconds where the caller can (one run: from the durations).
	ProcessCPU float64
}

// DeriveCPU computes the reports' CPU figures, the one definition of
// their formulas (docs/output.md, CPU):
//
//	host_busy_cores            = busy cores
//	host_utilization_pct       = busy % summed over CPUs (esx2; may exceed 100)
//	host_cpu_seconds_per_io    = busy cores × E ÷ ops
//	cycles_per_io              = busy cores × Hz × E ÷ ops
//	                           = host_busy_pct × Hz × CPUs ÷ (100 × IOPS)   (vsphere5)
//	iops_per_cpu_pct           = IOPS ÷ host_utilization_pct                 (esx2)
//	mb_per_second_per_cpu_pct  = MB/s ÷ host_utilization_pct
//	process_cpu_seconds_per_io = (user + system) ÷ ops
//
// A figure that divides by zero (no ops, no elapsed time, an idle or
// unmeasured host) or is not a finite non-negative number is 0, so the
// JSON always encodes.
func DeriveCPU(w CPUWork) CPU {
	ops := float64(w.Ops)
	c := CPU{
		ProcessUserSeconds:     finite(w.ProcessUser),
		ProcessSystemSeconds:   finite(w.ProcessSystem),
		ProcessCPUSecondsPerIO: div(w.ProcessCPU, ops),
		HostBusyCores:          finite(w.BusyCores),
		HostUtilizationPct:     finite(w.UtilizationPct),
		HostCPUSecondsPerIO:    div(w.BusyCores*w.ElapsedSeconds, ops),
		CyclesPerIO:            div(w.BusyHz*w.ElapsedSeconds, ops),
	}
	c.IOPSPerCPUPct = div(w.IOPS, c.HostUtilizationPct)
	c.MBPerSecondPerCPUPct = div(w.MBPerSecond, c.HostUtilizationPct)
	return c
}

// SetRates computes the rates from the counts and the elapsed time: the
// one definition of IOPS and MB/s (10^6 bytes). They stay 0 without
// elapsed time.
func (s *Summary) SetRates() {
	e := s.ElapsedSeconds
	if !(e > 0) {
		return
	}
	s.IOPS = float64(s.Ops) / e
	s.ReadIOPS = float64(s.ReadOps) / e
	s.WriteIOPS = float64(s.WriteOps) / e
	s.ThroughputBytesPerSecond = float64(s.Bytes) / e
	s.MBPerSecond = s.ThroughputBytesPerSecond / 1e6
}

// div is a ÷ b, or 0 when b is not a positive finite number.
func div(a, b float64) float64 {
	if !(b > 0) || math.IsInf(b, 0) {
		return 0
	}
	return finite(a / b)
}

// finite is v, or 0 when v is NaN, infinite or negative.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0
	}
	return v
}
