package blkid

import (
	"fmt"
	"testing"

	"github.com/ioprobe/ioprobe/internal/blkid/handmade"
)

// scanOther scans and keeps this part's types, as "type@offset".
func scanOther(size int64, sectorSize int64, ps []handmade.Patch) []string {
	mine := otherTypes()
	var got []string
	for _, s := range Scan(patchedDev{size, ps}, size, sectorSize) {
		if mine[s.Type] {
			got = append(got, fmt.Sprintf("%s@%d", s.Type, s.Offset))
		}
	}
	return got
}

func headerPatches(t *testing.T, name string, size int64) []handmade.Patch {
	t.Helper()
	for _, h := range handmade.Headers() {
		if h.Name == name {
			return h.Build(size)
		}
	}
	t.Fatalf("no hand-built header %q", name)
	return nil
}

// otherTypes are the types of this part of the package (not filesystems).
func otherTypes() map[string]bool {
	m := map[string]bool{}
	var ps []Probe
	for _, f := range []func() []Probe{raidProbes, volumeProbes, cryptoProbes, swapProbes, zfsProbes, ptableProbes} {
		ps = append(ps, f()...)
	}
	for _, p := range ps {
		m[p.Type] = true
	}
	return m
}
