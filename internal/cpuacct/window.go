package cpuacct

import (
	"errors"
	"fmt"
	"time"
)

// Usage is what the CPU spent over a Window.
type Usage struct {
	// Elapsed is the window's length on the monotonic clock.
	Elapsed time.Duration
	// ProcessUser and ProcessSystem are this process's CPU time, all
	// threads (getrusage RUSAGE_SELF).
	ProcessUser, ProcessSystem time.Duration
	// Host is the /proc/stat delta in USER_HZ ticks: the aggregate line
	// and each online CPU. Zero when /proc/stat could not be read.
	Host Stat
	// UserHZ is the tick rate of Host.
	UserHZ uint64
}

// ProcessCPU is user + system time of the process.
func (u Usage) ProcessCPU() time.Duration { return u.ProcessUser + u.ProcessSystem }

// HostBusySeconds is the host's busy CPU time summed over all CPUs.
func (u Usage) HostBusySeconds() float64 { return u.ticks(u.Host.All.Busy()) }

// HostTotalSeconds is the host's CPU time of every mode summed over all
// CPUs: about Elapsed × online CPUs.
func (u Usage) HostTotalSeconds() float64 { return u.ticks(u.Host.All.Total()) }

// HostBusyFraction is busy ÷ total over all CPUs, from 0 to 1: the
// average busy share of one CPU, esxtop's "% processor time" ÷ 100.
func (u Usage) HostBusyFraction() float64 {
	total := u.Host.All.Total()
	if total == 0 {
		return 0
	}
	return float64(u.Host.All.Busy()) / float64(total)
}

func (u Usage) ticks(n uint64) float64 {
	if u.UserHZ == 0 {
		return 0
	}
	return float64(n) / float64(u.UserHZ)
}

// Window is a CPU measurement window: Start samples the process and the
// host, Stop samples them again and returns the difference.
type Window struct {
	r           Reader
	t0          time.Time
	user0, sys0 time.Duration
	host0       Stat
	procErr     error
	hostErr     error
}

// Start opens a window on the live /proc.
func Start() *Window { return Reader{}.Start() }

// Start opens a window reading the host through r. Sampling errors are
// kept and returned by Stop, so starting never fails.
func (r Reader) Start() *Window {
	w := &Window{r: r, t0: time.Now()}
	w.host0, w.hostErr = r.Stat()
	w.user0, w.sys0, w.procErr = processTimes()
	return w
}

// Stop returns what the CPU spent since Start. It ends nothing, so it may
// be called again for a longer window from the same start. When one side
// could not be sampled its figures are zero and the error says which; the
// other side is still returned.
func (w *Window) Stop() (Usage, error) {
	u := Usage{UserHZ: UserHZ()}
	user, sys, procErr := processTimes()
	host, hostErr := w.r.Stat()
	u.Elapsed = time.Since(w.t0)

	var errs []error
	if err := errors.Join(w.procErr, procErr); err != nil {
		errs = append(errs, fmt.Errorf("process CPU: %w", err))
	} else {
		u.ProcessUser = nonNegative(user - w.user0)
		u.ProcessSystem = nonNegative(sys - w.sys0)
	}
	if err := errors.Join(w.hostErr, hostErr); err != nil {
		errs = append(errs, fmt.Errorf("host CPU: %w", err))
	} else {
		u.Host = host.Sub(w.host0)
	}
	return u, errors.Join(errs...)
}

func nonNegative(d time.Duration) time.Duration {
	if d < 0 {
		return 0
	}
	return d
}
