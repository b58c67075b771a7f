// Package runner runs a plan: it opens and prepares the targets, builds the
// workers, releases them together through a start barrier, runs the ramp-up
// (I/O that is not counted), measures for the run time while taking a
// snapshot every interval for its observers (progress line, exporter,
// interval log), stops, and assembles the result with the CPU and kernel
// block-layer figures of the measured window.
package runner
