package target

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
)

// Signature is something recognisable on a device: a filesystem, a
// partition table, a volume-manager or RAID label, swap. Finding one means
// the device holds data somebody may want, so writes are refused.
type Signature struct {
	Type   string // short name: "ext4", "xfs", "gpt", "mbr", "lvm2", "md", "swap", ...
	What   string // for people: "an ext4 filesystem"
	Offset int64  // byte offset of the magic on the device
}

func (s Signature) String() string {
	return fmt.Sprintf("%s (signature at byte %d)", s.What, s.Offset)
}

// The windows of a device that signature detection reads: every magic it
// knows lies in the first sigHead bytes or the last sigTail bytes.
const (
	sigHead = 256 << 10 // ZFS's first label ends at 256 KiB; btrfs is at 64 KiB
	sigTail = 128 << 10 // md v0.90 (last 64 KiB-aligned 64 KiB), md v1.0, GPT backup
)

// sigReader reads exactly len(p) bytes at off of a device of size bytes, or
// reports that it cannot.
type sigReader struct {
	r    io.ReaderAt
	size int64
}

func (d sigReader) at(off int64, n int) []byte {
	if off < 0 || off+int64(n) > d.size {
		return nil
	}
	p := make([]byte, n)
	if _, err := d.r.ReadAt(p, off); err != nil {
		return nil
	}
	return p
}

func (d sigReader) has(off int64, magic string) bool {
	p := d.at(off, len(magic))
	return p != nil && string(p) == magic
}

func (d sigReader) u32(off int64, order binary.ByteOrder) (uint32, bool) {
	p := d.at(off, 4)
	if p == nil {
		return 0, false
	}
	return order.Uint32(p), true
}

// DetectSignatures returns every signature it recognises on a device of
// size bytes read through r (which need only serve the first 256 KiB and the
// last 128 KiB). sector is the device's logical block size (GPT lives at
// LBA 1). Detection is deliberately eager: a false positive costs a refusal,
// a false negative costs somebody's data.
func DetectSignatures(r io.ReaderAt, size, sector int64) []Signature {
	d := sigReader{r: r, size: size}
	var found []Signature
	add := func(typ, what string, off int64) {
		found = append(found, Signature{Type: typ, What: what, Offset: off})
	}

	// Filesystems and containers whose magic sits at a fixed place.
	if s, ok := detectExt(d); ok {
		found = append(found, s)
	}
	fixed := []struct {
		typ, what string
		off       int64
		magic     string
	}{
		{"xfs", "an XFS filesystem", 0, "XFSB"},
		{"btrfs", "a btrfs filesystem", 65600, "_BHRfS_M"},
		{"ntfs", "an NTFS filesystem", 3, "NTFS    "},
		{"exfat", "an exFAT filesystem", 3, "EXFAT   "},
		{"iso9660", "an ISO9660 filesystem", 32769, "CD001"},
		{"squashfs", "a squashfs filesystem", 0, "hsqs"},
		{"luks", "a LUKS encrypted volume", 0, "LUKS\xba\xbe"},
		{"bluestore", "a Ceph BlueStore device", 0, "bluestore block device"},
		{"bcache", "a bcache device", 4096 + 24, "\xc6\x85\x73\xf6\x4e\x1a\x45\xca\x82\x65\xf5\x7f\x48\xba\x6d\x81"},
	}
	for _, f := range fixed {
		if d.has(f.off, f.magic) {
			add(f.typ, f.what, f.off)
		}
	}
	if v, ok := d.u32(1024, binary.LittleEndian); ok && v == 0xF2F52010 {
		add("f2fs", "an F2FS filesystem", 1024)
	}
	fat, fatOff := detectFAT(d)
	if fat {
		add("vfat", "a FAT filesystem", fatOff)
	}
	for _, ps := range []int64{4096, 8192, 16384, 65536} {
		for _, m := range []string{"SWAPSPACE2", "SWAP-SPACE"} {
			if d.has(ps-10, m) {
				add("swap", "a swap area", ps-10)
			}
		}
	}

	// Volume managers and RAID.
	for i := int64(0); i < 4; i++ {
		if d.has(i*512, "LABELONE") {
			add("lvm2", "an LVM2 physical volume label", i*512)
		}
	}
	for _, md := range mdOffsets(size) {
		for _, order := range md.orders {
			if v, ok := d.u32(md.off, order); ok && v == 0xa92b4efc {
				add("md", "a Linux RAID (md "+md.version+") superblock", md.off)
				break
			}
		}
	}
	if off, ok := detectZFS(d); ok {
		add("zfs", "a ZFS label", off)
	}

	// Partition tables.
	gpt := false
	for _, off := range gptOffsets(size, sector) {
		if d.has(off, "EFI PART") {
			gpt = true
			add("gpt", "a GPT partition table", off)
		}
	}
	if n, protective := mbrEntries(d); n > 0 && !fat && !(protective && gpt) {
		add("mbr", fmt.Sprintf("an MBR partition table with %d partition entr%s", n, plural(n, "y", "ies")), 510)
	}
	return found
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// detectExt recognises ext2/3/4 by the superblock magic and two fields that
// random data would rarely get right, and names the generation by features.
func detectExt(d sigReader) (Signature, bool) {
	sb := d.at(1024, 1024)
	if sb == nil || binary.LittleEndian.Uint16(sb[56:]) != 0xEF53 {
		return Signature{}, false
	}
	logBlock := binary.LittleEndian.Uint32(sb[24:])
	rev := binary.LittleEndian.Uint32(sb[76:])
	if logBlock > 6 || rev > 1 {
		return Signature{}, false
	}
	compat := binary.LittleEndian.Uint32(sb[0x5C:])
	incompat := binary.LittleEndian.Uint32(sb[0x60:])
	typ := "ext2"
	switch {
	case incompat&(0x40|0x80|0x200) != 0: // extents, 64bit, flex_bg
		typ = "ext4"
	case compat&0x4 != 0: // has_journal
		typ = "ext3"
	}
	return Signature{Type: typ, What: "an " + typ + " filesystem", Offset: 1080}, true
}

// detectFAT recognises a FAT boot sector: a sane BIOS parameter block and
// the "FAT" type string of FAT12/16 (byte 54) or FAT32 (byte 82).
func detectFAT(d sigReader) (bool, int64) {
	bs := d.at(0, 512)
	if bs == nil || bs[510] != 0x55 || bs[511] != 0xAA {
		return false, 0
	}
	bps := binary.LittleEndian.Uint16(bs[11:])
	spc := bs[13]
	reserved := binary.LittleEndian.Uint16(bs[14:])
	nfats := bs[16]
	if (bps != 512 && bps != 1024 && bps != 2048 && bps != 4096) || spc == 0 || spc&(spc-1) != 0 || reserved == 0 || nfats < 1 || nfats > 2 {
		return false, 0
	}
	for _, off := range []int{54, 82} {
		if bytes.HasPrefix(bs[off:], []byte("FAT")) {
			return true, int64(off)
		}
	}
	return false, 0
}

// mbrEntries counts the used entries of an MBR partition table (0 when
// there is none) and says whether one is a GPT protective entry.
func mbrEntries(d sigReader) (n int, protective bool) {
	bs := d.at(0, 512)
	if bs == nil || bs[510] != 0x55 || bs[511] != 0xAA {
		return 0, false
	}
	for i := 0; i < 4; i++ {
		e := bs[446+16*i : 446+16*(i+1)]
		if e[0] != 0 && e[0] != 0x80 {
			return 0, false // boot code, not a partition table
		}
		if e[4] != 0 {
			n++
			if e[4] == 0xEE {
				protective = true
			}
		}
	}
	return n, protective
}

type mdPlace struct {
	version string
	off     int64
	orders  []binary.ByteOrder
}

// mdOffsets lists where md superblocks live on a device of size bytes.
func mdOffsets(size int64) []mdPlace {
	le := []binary.ByteOrder{binary.LittleEndian}
	places := []mdPlace{{"v1.1", 0, le}, {"v1.2", 4096, le}}
	if size >= 3*4096 {
		// v1.0: 8 KiB from the end, rounded down to 4 KiB (md's calc_dev_sboffset).
		places = append(places, mdPlace{"v1.0", ((size >> 9) - 16) &^ 7 << 9, le})
	}
	if size >= 128<<10 {
		// v0.90: the last 64 KiB-aligned 64 KiB block, in host byte order.
		places = append(places, mdPlace{"v0.90", size&^(64<<10-1) - 64<<10, []binary.ByteOrder{binary.LittleEndian, binary.BigEndian}})
	}
	return places
}

// gptOffsets lists where a GPT header may be: LBA 1 for 512- and 4096-byte
// sectors, and the backup header in the last LBA.
func gptOffsets(size, sector int64) []int64 {
	offs := []int64{512, 4096}
	if sector > 0 && sector != 512 && sector != 4096 {
		offs = append(offs, sector)
	}
	if sector > 0 && size >= 2*sector {
		offs = append(offs, size/sector*sector-sector)
	}
	return offs
}

// detectZFS looks for an uberblock magic in the uberblock ring of the first
// vdev label (128 KiB to 256 KiB), in either byte order.
func detectZFS(d sigReader) (int64, bool) {
	ring := d.at(128<<10, 128<<10)
	if ring == nil {
		return 0, false
	}
	for i := 0; i+8 <= len(ring); i += 1024 {
		if binary.LittleEndian.Uint64(ring[i:]) == 0x00bab10c || binary.BigEndian.Uint64(ring[i:]) == 0x00bab10c {
			return int64(128<<10 + i), true
		}
	}
	return 0, false
}

// windowReader serves reads that fall inside the head or the tail window
// of a device (what the O_DIRECT code read), and fails any other read.
type windowReader struct {
	head    []byte
	tail    []byte
	tailOff int64
}

func (w windowReader) ReadAt(p []byte, off int64) (int, error) {
	end := off + int64(len(p))
	switch {
	case off >= 0 && end <= int64(len(w.head)):
		return copy(p, w.head[off:end]), nil
	case off >= w.tailOff && end <= w.tailOff+int64(len(w.tail)):
		return copy(p, w.tail[off-w.tailOff:end-w.tailOff]), nil
	}
	return 0, fmt.Errorf("signature read at %d+%d outside the windows read", off, len(p))
}
