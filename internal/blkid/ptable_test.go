package blkid

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/blkid/handmade"
)

// mbrSector is a DOS boot sector with the given entries (type, start,
// sectors) and boot indicators.
func mbrSector(boot byte, entries ...[3]uint32) []byte {
	s := make([]byte, 512)
	for i, e := range entries {
		p := s[446+16*i:]
		p[0] = boot
		p[4] = byte(e[0])
		binary.LittleEndian.PutUint32(p[8:], e[1])
		binary.LittleEndian.PutUint32(p[12:], e[2])
	}
	s[510], s[511] = 0x55, 0xAA
	return s
}

// TestDOSWhatLibblkidCallsATable follows libblkid's rules for a DOS label,
// and the one place ioprobe must go further.
func TestDOSWhatLibblkidCallsATable(t *testing.T) {
	const size = 64 << 20
	at0 := func(p []byte) []handmade.Patch { return []handmade.Patch{{Off: 0, Data: p}} }

	// An EMPTY label (fdisk's "o", sfdisk's "label: dos"): no partition,
	// but a label somebody wrote. It is a DOS table, refused.
	require.Equal(t, []string{"dos@510"}, scanOther(size, 512, at0(mbrSector(0))))
	require.Equal(t, []string{"dos@510"}, scanOther(size, 512, at0(mbrSector(0x80, [3]uint32{0x83, 2048, 4096}))))

	// A boot indicator other than 0 and 0x80: not a partition table (the
	// boot code of something else, which its own probe recognises).
	require.Empty(t, scanOther(size, 512, at0(mbrSector(0x12, [3]uint32{0x83, 2048, 4096}))))

	// A protective entry: the disk is GPT's; without a GPT header it is
	// still a protective MBR.
	require.Equal(t, []string{"PMBR@510"}, scanOther(size, 512, at0(mbrSector(0, [3]uint32{0xEE, 1, size/512 - 1}))))

	// A FAT boot sector ends in 0x55AA too: it is a filesystem, not a
	// table (libblkid's rule; the vfat probe reports it).
	fat := mbrSector(0)
	copy(fat, "\xeb\x3c\x90mkfs.fat")
	binary.LittleEndian.PutUint16(fat[11:], 512) // bytes per sector
	fat[13] = 4                                  // sectors per cluster
	binary.LittleEndian.PutUint16(fat[14:], 1)   // reserved sectors
	fat[16], fat[21] = 2, 0xf8                   // FATs, media
	require.Empty(t, scanOther(size, 512, at0(fat)))

	// NTFS's boot sector too, but wipefs lists it as dos as well once it
	// has hidden the NTFS magic: so it is dos here.
	ntfs := mbrSector(0)
	copy(ntfs, "\xeb\x52\x90NTFS    ")
	require.Equal(t, []string{"dos@510"}, scanOther(size, 512, at0(ntfs)))

	// An empty MBR on an LVM2 physical volume is LVM's; with a partition
	// in it, it is a table again.
	label := make([]byte, 512)
	copy(label, "LABELONE")
	binary.LittleEndian.PutUint64(label[8:], 1)
	copy(label[0x18:], "LVM2 001")
	pv := []handmade.Patch{{Off: 512, Data: label}}
	require.Equal(t, []string{"LVM2_member@536"}, scanOther(size, 512, append(at0(mbrSector(0)), pv...)))
	require.Equal(t, []string{"dos@510", "LVM2_member@536"}, scanOther(size, 512, append(at0(mbrSector(0, [3]uint32{0x8e, 2048, 4096})), pv...)))
}

// TestGPTWithoutItsMBR: libblkid wants a protective MBR before it believes
// a GPT header; ioprobe does not, and a header must say where it is.
func TestGPTWithoutItsMBR(t *testing.T) {
	const size = 64 << 20
	hdr := func(lba int64) handmade.Patch {
		h := make([]byte, 92)
		copy(h, "EFI PART")
		binary.LittleEndian.PutUint64(h[24:], uint64(lba))
		return handmade.Patch{Off: lba * 512, Data: h}
	}
	last := int64(size/512 - 1)
	require.Equal(t, []string{"gpt@512", "gpt@67108352"}, scanOther(size, 512, []handmade.Patch{hdr(1), hdr(last)}))
	require.Equal(t, []string{"gpt@67108352"}, scanOther(size, 512, []handmade.Patch{hdr(last)}))

	wrong := hdr(1)
	binary.LittleEndian.PutUint64(wrong.Data[24:], 7)
	require.Empty(t, scanOther(size, 512, []handmade.Patch{wrong}))

	// 4 KiB sectors: LBA 1 is at 4096.
	h4 := hdr(1)
	h4.Off = 4096
	require.Equal(t, []string{"gpt@4096"}, scanOther(size, 4096, []handmade.Patch{h4}))
}

// TestSunChecksum: Sun's two-byte magic is believed only with the label's
// checksum right.
func TestSunChecksum(t *testing.T) {
	l := make([]byte, 512)
	copy(l, "handmade sun label")
	l[508], l[509] = 0xDA, 0xBE
	var x uint16
	for i := 0; i < 510; i += 2 {
		x ^= binary.BigEndian.Uint16(l[i:])
	}
	binary.BigEndian.PutUint16(l[510:], x)
	require.Equal(t, []string{"sun@508"}, scanOther(64<<20, 512, []handmade.Patch{{Off: 0, Data: l}}))
	l[100]++
	require.Empty(t, scanOther(64<<20, 512, []handmade.Patch{{Off: 0, Data: l}}))
}

// TestMacNeedsItsMap: "ER" alone is two bytes of chance; the partition
// map entry at the block size it names decides.
func TestMacNeedsItsMap(t *testing.T) {
	ddr := []byte{'E', 'R', 0x02, 0x00}
	require.Empty(t, scanOther(64<<20, 512, []handmade.Patch{{Off: 0, Data: ddr}}))
	require.Equal(t, []string{"mac@0"}, scanOther(64<<20, 512, []handmade.Patch{{Off: 0, Data: ddr}, {Off: 512, Data: []byte("PM")}}))
}

// TestAtariNeedsAValidEntry: Atari has no magic; an entry that lies
// outside the disk the root sector describes is no table.
func TestAtariNeedsAValidEntry(t *testing.T) {
	const size = 64 << 20
	ps := headerPatches(t, "atari", size)
	require.Equal(t, []string{"atari@454"}, scanOther(size, 512, ps))
	binary.BigEndian.PutUint32(ps[0].Data[0x1C6+8:], uint32(size)) // partition size past the disk
	require.Empty(t, scanOther(size, 512, ps))
	// libblkid probes Atari with 512-byte sectors only; an image of one
	// on a 4096-byte-sector device is somebody's table all the same.
	require.Equal(t, []string{"atari@454"}, scanOther(size, 4096, headerPatches(t, "atari", size)))
}
