// Package ownio marks the I/O ioprobe makes for itself, not for the
// workload (the safety checks' reads at the end of every interval of a
// run that writes), so that the device-latency programs
// (internal/devlat) count it apart instead of timing it with the
// workload's requests, and the device's figures compare like with like.
//
// The mark is an I/O priority hint (Linux 6.5 and later): the class and
// level stay what the kernel would give the thread anyway, so no
// scheduler treats the reads differently; the hint rides in every bio
// and request the reads become. Hints 1 to 7 select a device's command
// duration limits; ioprobe uses the last value of the field (Hint),
// which no kernel defines and every driver ignores. The marked reads run
// on an OS thread of their own that ends with them, so no other I/O ever
// carries the mark.
package ownio
