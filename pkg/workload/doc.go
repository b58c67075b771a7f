// Package workload holds the access specification (Iometer's vocabulary:
// transfer sizes with weights, % read, % random, outstanding I/Os, workers,
// ramp-up, run time), size parsing, the presets and suites taken from the
// reference reports, and the per-stream operation generator that engines
// draw offsets from.
//
// It is pure code: nothing here opens a file or issues I/O, so everything is
// testable and fuzzable without a device.
package workload
