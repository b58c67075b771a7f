//go:build linux

// Package enginetest is the conformance suite every engine passes:
// enginetest.Run(t, factory) checks, on a real O_DIRECT file in the temp
// directory and (as root) on a loop device over one, that offsets stay in the
// access region and aligned, that the read/write and random/sequential mix
// matches the specification, that sequential streams are sequential per
// worker, that writes land where the engine says, that the queue depth is
// kept on every target (never more, and reached), and that failed I/Os are
// reported one by one.
package enginetest
