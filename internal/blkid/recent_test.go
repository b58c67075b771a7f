package blkid

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/blkid/handmade"
)

// scanAll is every signature found, as "type@offset".
func scanAll(size, sectorSize int64, ps []handmade.Patch) []string {
	var got []string
	for _, s := range Scan(patchedDev{size, ps}, size, sectorSize) {
		got = append(got, fmt.Sprintf("%s@%d", s.Type, s.Offset))
	}
	return got
}

// TestRecentHeaders: the types libblkid learned after 2.38 are found where
// util-linux 2.43-devel's wipefs finds them (the differential test, run
// with IOPROBE_BLKID_REFEREE, compares them on loop devices; these offsets
// are its), on devices of either sector size.
func TestRecentHeaders(t *testing.T) {
	want := map[string][]string{
		"bcachefs":                {"bcachefs@4120", "bcachefs@2097176", "bcachefs@66060312"},
		"bcachefs-2mib-copy-only": {"bcachefs@2097176"},
		"bcachefs-end-copy-only":  {"bcachefs@66060312"},
		"cs-fvault2":              {"cs_fvault2@88"},
		"scoutfs-meta":            {"scoutfs_meta@65540"},
		"scoutfs-data":            {"scoutfs_data@65540"},
		"dasd-ldl-lnx1-512":       {"dasd@1024"},
		"dasd-cdl-vol1-512":       {"dasd@1028"},
		"dasd-ldl-lnx1-1024":      {"dasd@2048"},
		"dasd-cdl-vol1-1024":      {"dasd@2052"},
		"dasd-ldl-lnx1-2048":      {"dasd@4096"},
		"dasd-cdl-vol1-2048":      {"dasd@4100"},
		"dasd-ldl-lnx1-4096":      {"dasd@8192"},
		"dasd-cdl-vol1-4096":      {"dasd@8196"},
		"dasd-ldl-cms1-4096":      {"dasd@8192"},
		"zfs-nvlist-all-labels":   {"zfs_member@16384", "zfs_member@278528", "zfs_member@100155392", "zfs_member@100417536"},
		"zfs-nvlist-label3-only":  {"zfs_member@100417536"},
	}
	seen := 0
	for _, h := range handmade.Headers() {
		if h.Since == "" {
			continue
		}
		seen++
		w, ok := want[h.Name]
		require.True(t, ok, "%s: no expectation", h.Name)
		for _, ss := range []int64{512, 4096} {
			require.Equal(t, w, scanAll(h.Size, ss, h.Build(h.Size)), "%s, %d-byte sectors", h.Name, ss)
		}
	}
	require.Equal(t, len(want), seen)
}

// TestBcacheOrBcachefs: bcache's magic at 4 KiB names a bcachefs
// superblock when it reads as one (libblkid since 2.39), bcache otherwise;
// a bcachefs superblock that lost its magic is still found through the
// layout in sector 7.
func TestBcacheOrBcachefs(t *testing.T) {
	const size = 64 << 20
	bcache := make([]byte, 512)
	copy(bcache[24:], bcacheMagic)
	bcache[8] = 8 // offset: sector 8
	require.Equal(t, []string{"bcache@4120"}, scanAll(size, 512, []handmade.Patch{{Off: 4096, Data: bcache}}))

	old := make([]byte, 1024)
	copy(old[24:], bcacheMagic)
	old[bchfsOffsetIn] = 8
	old[bchfsNrDevsIn] = 1
	require.Equal(t, []string{"bcachefs@4120"}, scanAll(size, 512, []handmade.Patch{{Off: 4096, Data: old}}))

	// The layout alone leads to a copy at 1 MiB, a place libblkid does
	// not probe.
	lay := make([]byte, 512)
	copy(lay, bcachefsMagic)
	lay[18] = 1
	lay[24+1] = 0x08 // sector 2048: 1 MiB
	sb := make([]byte, 512)
	copy(sb[24:], bcachefsMagic)
	require.Equal(t, []string{"bcachefs@1048600"}, scanAll(size, 512, []handmade.Patch{{Off: 3584, Data: lay}, {Off: 1 << 20, Data: sb}}))
}

// TestZFSNvlistNeedsItsNames: the XDR header alone is a few bits of
// chance; two of the pool's names with their types decide.
func TestZFSNvlistNeedsItsNames(t *testing.T) {
	h := headerPatches(t, "zfs-nvlist-label3-only", 96<<20+100<<10)
	label := h[0].Data
	require.Equal(t, []string{"zfs_member@100417536"}, scanAll(96<<20+100<<10, 512, h))
	bare := append([]byte(nil), label[:16]...) // the header and the first pair's size
	require.Empty(t, scanAll(96<<20+100<<10, 512, []handmade.Patch{{Off: h[0].Off, Data: bare}}))
}

// TestLUKSOnOPAL: a LUKS2 header whose subsystem is HW-OPAL is named as
// the volume of a self-encrypting drive.
func TestLUKSOnOPAL(t *testing.T) {
	h := make([]byte, 4096)
	copy(h, "LUKS\xba\xbe\x00\x02")
	copy(h[luks2Subsystem:], "HW-OPAL")
	sigs := Scan(patchedDev{64 << 20, []handmade.Patch{{Off: 0, Data: h}}}, 64<<20, 512)
	require.Len(t, sigs, 1)
	require.Equal(t, "crypto_LUKS", sigs[0].Type)
	require.Contains(t, sigs[0].What, "self-encrypting (OPAL) drive")
}
