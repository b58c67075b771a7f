package blkid

import "testing"

// zeros is a blank device: every byte zero, nothing allocated for it.
type zeros struct{}

func (zeros) ReadAt(p []byte, off int64) (int, error) {
	clear(p)
	return len(p), nil
}

// The CPU a search of a blank 1 TiB device takes, the device in memory:
// all three rounds (what Open runs), and round 1 alone (what the look
// before the first write and at every interval end runs). The reads a
// real device costs: internal/target's BenchmarkLook.
func BenchmarkScan(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Scan(zeros{}, 1<<40, 512)
	}
}

func BenchmarkScanPrimary(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		ScanPrimary(zeros{}, 1<<40, 512)
	}
}
