// Package engine defines how I/O is driven: the Engine interface, the Worker
// an engine runs (its targets, buffers, generators and per-lane statistics),
// the explicit engine registry, and the helpers every engine shares (pacing,
// error classes, the monotonic clock, page-aligned buffers).
//
// Engines know nothing of the runner, the exporter or reports: they read a
// Worker, issue I/O until it says stop, and record into its Lanes. The hot
// path allocates nothing and takes no locks; counters are single-writer
// atomics so snapshots can be read while I/O runs.
//
// Implementations live in sub-packages (sync, uring) and all pass the shared
// conformance suite in enginetest.
package engine
