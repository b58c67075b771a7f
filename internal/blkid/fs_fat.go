package blkid

import "math/bits"

// FAT (vfat) has no reliable magic: libblkid accepts one of several type
// strings, or a bare x86 jump or boot signature, then checks the BIOS
// parameter block (Microsoft's FAT specification, "FAT: General Overview
// of On-Disk Format", and libblkid's vfat.c).

var vfatMagics = []Magic{
	{"MSWIN", 0, 0x52}, {"FAT32   ", 0, 0x52},
	{"MSDOS", 0, 0x36}, {"FAT16   ", 0, 0x36}, {"FAT12   ", 0, 0x36}, {"FAT     ", 0, 0x36},
	{"\xeb", 0, 0}, {"\xe9", 0, 0}, {"\x55\xaa", 0, 0x1fe},
}

// vfatAt returns the offsets of every magic of a FAT boot sector on d
// (wipefs lists them all: the type string, the jump, the boot signature).
func vfatAt(d *Dev) []int64 {
	bs := d.At(0, 512)
	if bs == nil || !validBPB(bs) {
		return nil
	}
	var offs []int64
	for _, m := range vfatMagics {
		off := m.offset(d)
		if string(bs[off:off+int64(len(m.Magic))]) != m.Magic {
			continue
		}
		if len(m.Magic) <= 2 {
			// Without a type string: a boot signature, and not the FAT-like
			// pseudo header OS/2 puts in front of JFS and HPFS.
			if bs[510] != 0x55 || bs[511] != 0xaa || string(bs[0x36:0x3e]) == "JFS     " || string(bs[0x36:0x3e]) == "HPFS    " {
				continue
			}
		}
		offs = append(offs, off)
	}
	return offs
}

func validBPB(bs []byte) bool {
	sector := uint16(bs[11]) | uint16(bs[12])<<8
	cluster, reserved, fats, media := bs[13], uint16(bs[14])|uint16(bs[15])<<8, bs[16], bs[21]
	return fats != 0 && reserved != 0 && (media >= 0xf8 || media == 0xf0) &&
		cluster != 0 && bits.OnesCount8(cluster) == 1 &&
		sector >= 512 && sector <= 4096 && bits.OnesCount16(sector) == 1
}

// IsVFAT says whether d starts with a FAT boot sector, which the DOS
// partition-table probe must not take for an MBR (libblkid's
// blkid_probe_is_vfat).
func IsVFAT(d *Dev) bool { return len(vfatAt(d)) > 0 }

func vfatProbe() Probe {
	p := Probe{Type: "vfat", Usage: Filesystem}
	p.Find = func(d *Dev) []Signature {
		var sigs []Signature
		for _, off := range vfatAt(d) {
			sigs = append(sigs, found(p, "a FAT filesystem", off)...)
		}
		return sigs
	}
	return p
}
