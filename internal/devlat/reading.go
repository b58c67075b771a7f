package devlat

import "github.com/ioprobe/ioprobe/pkg/result"

// Reading is what the programs recorded for one device while recording.
type Reading struct {
	Hist                   *result.DeviceHistograms
	ReadBytes, WriteBytes  uint64
	Discards, DiscardBytes uint64
}
