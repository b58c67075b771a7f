package test

import "strconv"

// countedIOs ends a run (or each point of a suite) after n I/Os of each
// worker, not after a window: --number-ios (fio's number_ios without
// time_based), with --duration only a cap, generous, under ioprobe()'s
// two minutes. For a test that asserts the run did I/O (a count, a rate,
// a percentile, a device figure, a verified read): a window of fixed
// length can complete no I/O at all beside a loaded make test, or behind
// a write ext4's journal holds longer than the window (the run then
// rightly says "no I/O completed in the measured window", its rates 0),
// while n I/Os are done however slow the machine, and most often sooner
// than the window. No ramp-up: the I/Os of a ramp would spend the count
// unmeasured. A worker's count is also bounded by one pass over its
// region (fio's size), so n beyond that reads or writes the region once.
func countedIOs(n int) []string {
	return countedIOsWithin(n, "90s")
}

// countedIOsWithin is countedIOs with another cap, for a test whose own
// deadline (a hang detector) is shorter than countedIOs' cap.
func countedIOsWithin(n int, limit string) []string {
	return []string{"--number-ios", strconv.Itoa(n), "--duration", limit, "--ramp", "0s"}
}
