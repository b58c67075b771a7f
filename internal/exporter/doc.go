// Package exporter is `ioprobe serve`: the long-running exporter. It owns
// the Prometheus side of ioprobe (it is the only package that imports
// client_golang's registry and HTTP parts): the live collectors fed by
// running jobs' snapshots, the last-run gauges, host CPU, /probe with a
// fresh registry per request, the run API, the scheduler that keeps at most
// one heavy run per device and pauses canaries for them, and the HTTP
// server (exporter-toolkit, for TLS and basic auth).
//
// The scheduler (scheduler.go) does not see the daemon: it is given a
// clock, the device locks, its metrics and a function that runs a job
// (schedDeps), so that its timing (schedules, align, jitter, skips, the
// back-off of runs that cannot start) is tested on a fake clock without
// I/O.
//
// Metric names and labels are a contract with the dashboards
// (docs/metrics.md).
package exporter
