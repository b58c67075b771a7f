package devlat

import "github.com/ioprobe/ioprobe/pkg/result"

// Reading is what the programs recorded for one device while recording.
type Reading struct {
	// Hist holds the requests timed: the workload's and anyone else's,
	// never ioprobe's own marked reads (Own). A partition's Flush series
	// is its whole disk's flushes when the disk is not watched itself.
	Hist                   *result.DeviceHistograms
	ReadBytes, WriteBytes  uint64
	Discards, DiscardBytes uint64
	// Own and OwnBytes are ioprobe's own requests that are not the
	// workload's (internal/ownio marks them: the safety checks' reads),
	// counted and left out of Hist.
	Own, OwnBytes uint64
	// Untimed are requests completed without an issue the programs saw
	// (issued before they were attached, or on a hardware queue or tag
	// beyond those sized at load); NoStart are reads and writes timed
	// without a queue time, the queue keeping no start time (no I/O
	// statistics, blk-stat or scheduler).
	Untimed, NoStart uint64
}
