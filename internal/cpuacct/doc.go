// Package cpuacct measures what the CPU spent while I/O ran, the way the
// reference reports count it: the process's own user and system time
// (getrusage RUSAGE_SELF, which includes io_uring worker threads) and the
// host's busy time from /proc/stat, over a measurement Window. Derive turns
// a Window's Usage into the reports' per-I/O figures (result.CPU).
//
// It also describes the host (result.Host): hostname, kernel release, CPU
// model, online logical CPUs and the rated clock rate.
//
// Parsing is kept apart from I/O (parseStat, parseCPUInfo take an
// io.Reader) and the procfs and sysfs roots are configurable (Reader), so
// tests run on fixtures and a containerised exporter can read the host's
// /proc mounted elsewhere.
package cpuacct
