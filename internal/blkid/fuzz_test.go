package blkid

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ioprobe/ioprobe/internal/blkid/handmade"
)

// strictReader is a device that fails the test on any read outside it.
type strictReader struct {
	t    *testing.T
	data []byte
}

func (r strictReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > int64(len(r.data)) {
		r.t.Fatalf("read of %d bytes at %d outside a %d-byte device", len(p), off, len(r.data))
	}
	return copy(p, r.data[off:]), nil
}

// FuzzScan: whatever the bytes, Scan neither panics nor reads outside the
// device, and what it reports is a registered type at a place on it.
func FuzzScan(f *testing.F) {
	// The first sectors: where most probes look, and small enough to
	// mutate fast (a seed's patches past them are left out).
	const seedSize = 16 << 10
	for _, h := range slices.Concat(handmade.FSHeaders(), handmade.Headers(), handmade.BackupHeaders(), handmade.ImageHeaders()) {
		img := make([]byte, seedSize)
		for _, p := range h.Build(seedSize) {
			if p.Off >= 0 && p.Off+int64(len(p.Data)) <= seedSize {
				copy(img[p.Off:], p.Data)
			}
		}
		f.Add(img, false)
	}
	f.Add([]byte{}, true)
	f.Add(make([]byte, 511), false)
	types := map[string]Usage{}
	for _, p := range Probes() {
		types[p.Type+string(p.Usage)] = p.Usage
	}
	f.Fuzz(func(t *testing.T, data []byte, bigSectors bool) {
		sector := int64(512)
		if bigSectors {
			sector = 4096
		}
		for _, s := range Scan(strictReader{t, data}, int64(len(data)), sector) {
			if _, ok := types[s.Type+string(s.Usage)]; !ok {
				t.Fatalf("%v: not a registered type and usage", s)
			}
			if s.Offset < 0 || s.Offset >= int64(len(data)) || s.What == "" {
				t.Fatalf("%v: outside a %d-byte device, or unnamed", s, len(data))
			}
			_ = fmt.Sprint(s)
		}
	})
}
