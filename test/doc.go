// Package test holds end-to-end tests: they build the real binary and run it
// against real files, loop devices and (for the exporter) a real Prometheus.
package test
