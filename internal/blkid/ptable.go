package blkid

import "fmt"

// ptableProbes are the partition tables libblkid probes, named as blkid
// names them in PTTYPE=, in libblkid's order.
//
// Formats: DOS/MBR and the protective MBR from the UEFI specification
// (2.10, section 5.2); GPT from the same (5.3); Apple's partition map from
// "Inside Macintosh: Devices" (Driver Descriptor Record and partition map
// entries); BSD disklabels from FreeBSD's sys/sys/disklabel.h; SGI volume
// headers from IRIX's sys/dvh.h; Sun VTOC from Solaris' sys/dklabel.h;
// UnixWare and Solaris x86 VTOCs from the kernel's block/partitions/
// (sysv68.c's neighbours: msdos.c's unixware and solaris_x86 parsers);
// Minix subpartitions from msdos.c's minix parser; AIX from its IPL record
// magic ("IBMA" in EBCDIC); Atari AHDI root sectors from block/partitions/
// atari.h; Ultrix from block/partitions/ultrix.c.
func ptableProbes() []Probe {
	return []Probe{
		MagicProbe("aix", PartitionTable, "an AIX physical volume (IPL record)", []Magic{{Magic: aixMagic}}, nil),
		MagicProbe("sgi", PartitionTable, "an SGI volume header", []Magic{{Magic: "\x0B\xE5\xA9\x41"}}, nil),
		MagicProbe("sun", PartitionTable, "a Sun disk label", []Magic{{Magic: "\xDA\xBE", SBOff: 508}}, func(d *Dev, off int64) bool {
			// Two bytes of magic are not enough on their own; the label's
			// XOR checksum over its 256 words is.
			p := d.At(0, 512)
			var x uint16
			for i := 0; i < 512; i += 2 {
				x ^= uint16(p[i])<<8 | uint16(p[i+1])
			}
			return x == 0
		}),
		{Type: "dos", Usage: PartitionTable, Find: findDOS},
		{Type: "gpt", Usage: PartitionTable, Find: findGPT},
		{Type: "PMBR", Usage: PartitionTable, Find: findPMBR},
		{Type: "mac", Usage: PartitionTable, Find: findMac},
		{Type: "ultrix", Usage: PartitionTable, Find: findUltrix},
		MagicProbe("bsd", PartitionTable, "a BSD disklabel", []Magic{
			{Magic: bsdMagic, SBOff: 512},
			{Magic: bsdMagic, SBOff: 64},
			{Magic: bsdMagic, SBOff: 128},
		}, nil),
		{Type: "unixware", Usage: PartitionTable, Find: findUnixware},
		MagicProbe("solaris", PartitionTable, "a Solaris x86 VTOC", []Magic{{Magic: "\xEE\xDE\x0D\x60", SBOff: 512 + 12}}, func(d *Dev, off int64) bool {
			return d.U32LE(512+16) == 1
		}),
		{Type: "minix", Usage: PartitionTable, Find: findMinix},
		{Type: "atari", Usage: PartitionTable, Find: findAtari},
		{Type: "dasd", Usage: PartitionTable, Find: findDASD},
	}
}

const (
	aixMagic = "\xC9\xC2\xD4\xC1"
	bsdMagic = "\x57\x45\x56\x82"
	mbrGPT   = 0xEE
	mbrMinix = 0x81
)

// mbrEntries returns the four primary entries of sector 0 when it ends in
// 0x55AA, nil otherwise.
func mbrEntries(d *Dev) []byte {
	if !d.Has(510, "\x55\xAA") {
		return nil
	}
	return d.At(446, 64)
}

// findDOS is libblkid's idea of a DOS partition table: 0x55AA, every boot
// indicator 0 or 0x80, no GPT protective entry, not an AIX disk, not a
// FAT boot sector (which also ends in 0x55AA; the vfat probe reports it).
// libblkid's blkid -p also gives way to NTFS, but wipefs, which hides the
// NTFS magic and probes again, then lists the boot sector as dos: so does
// this. An EMPTY table, with
// no partition at all, is still a DOS label: fdisk wrote it, somebody meant
// to use the disk; it is refused like any other. (libblkid also ignores an
// empty MBR on an LVM2 physical volume; the LVM2 label is found then.)
func findDOS(d *Dev) []Signature {
	e := mbrEntries(d)
	if e == nil || d.Has(0, aixMagic) || IsVFAT(d) {
		return nil
	}
	n := 0
	for i := 0; i < 64; i += 16 {
		if e[i] != 0 && e[i] != 0x80 {
			return nil
		}
		if e[i+4] == mbrGPT {
			return nil
		}
		if e[i+4] != 0 || d.U32LE(446+int64(i)+12) != 0 {
			n++
		}
	}
	if n == 0 && lvm2Label(d) {
		return nil
	}
	what := "an empty DOS partition table (no partitions)"
	if n > 0 {
		what = "a DOS partition table"
	}
	return []Signature{{Type: "dos", Usage: PartitionTable, Offset: 510, What: what}}
}

func lvm2Label(d *Dev) bool { return len(findLVM2(d)) > 0 }

// findGPT reports a GPT header at LBA 1 and its backup at the last LBA:
// "EFI PART" where the header says it is (MyLBA). Unlike libblkid, which
// wants a protective MBR first, a GPT whose MBR was wiped counts too; and
// unlike libblkid, which counts LBAs in the device's logical sectors (512
// bytes in a regular file), it looks with 512- and 4096-byte sectors too:
// an image copied from a disk of the other sector size holds a table all
// the same.
func findGPT(d *Dev) []Signature {
	var found []Signature
	seen := map[int64]bool{}
	for _, ss := range sectorSizes(d) {
		last := d.Size/ss - 1
		for _, lba := range []int64{1, last} {
			off := lba * ss
			if lba < 1 || seen[off] || !d.Has(off, "EFI PART") || d.U64LE(off+24) != uint64(lba) {
				continue
			}
			seen[off] = true
			what := "a GPT partition table"
			if lba != 1 {
				what = "a GPT partition table (its backup header)"
			}
			if ss != d.SectorSize {
				what += fmt.Sprintf(" for %d-byte sectors", ss)
			}
			found = append(found, Signature{Type: "gpt", Usage: PartitionTable, Offset: off, What: what})
		}
	}
	return found
}

// sectorSizes are the logical sector sizes a table on d may have been
// written for: d's own first, then 512 and 4096.
func sectorSizes(d *Dev) []int64 {
	out := []int64{d.SectorSize}
	for _, ss := range []int64{512, 4096} {
		if ss != d.SectorSize {
			out = append(out, ss)
		}
	}
	return out
}

// findPMBR is a protective MBR: 0x55AA and an entry of type 0xEE.
// libblkid's blkid -p reports it (as PMBR) only when no valid GPT follows,
// wipefs whether or not one does; it is reported here whenever it is
// there, beside the GPT.
func findPMBR(d *Dev) []Signature {
	e := mbrEntries(d)
	if e == nil {
		return nil
	}
	for i := 0; i < 64; i += 16 {
		if e[i+4] == mbrGPT {
			return []Signature{{Type: "PMBR", Usage: PartitionTable, Offset: 510, What: "a protective MBR (a GPT disk)"}}
		}
	}
	return nil
}

// findMac is Apple's partition map: the Driver Descriptor Record ("ER")
// at block 0 names the block size, and the first partition map entry
// ("PM", or the older "TS") fills block 1.
func findMac(d *Dev) []Signature {
	if !d.Has(0, "ER") {
		return nil
	}
	bs := int64(d.U16BE(2))
	if bs < 136 || !(d.Has(bs, "PM") || d.Has(bs, "TS")) {
		return nil
	}
	return []Signature{{Type: "mac", Usage: PartitionTable, Offset: 0, What: "an Apple partition map"}}
}

// findUltrix is the Ultrix partition table: 72 bytes that end at 16 KiB,
// with magic 0x032957 and its valid flag set.
func findUltrix(d *Dev) []Signature {
	const off = 16384 - 72
	if d.U32LE(off) != 0x032957 || d.U32LE(off+4) != 1 {
		return nil
	}
	return []Signature{{Type: "ultrix", Usage: PartitionTable, Offset: off, What: "an Ultrix partition table"}}
}

// findUnixware is the UnixWare disklabel in sector 29: d_magic
// (0xCA5E600D) 4 bytes in, and the VTOC's magic 0x600DDEEE 156 bytes in,
// which decides. libblkid looks for a misspelt d_magic (0xCAE5600D) at a
// miscomputed place (byte 29174) before it checks the VTOC, and reports
// that place: it is reported too when it matches.
func findUnixware(d *Dev) []Signature {
	const label = 29 * 512
	const vtoc = label + 156
	if d.U32LE(vtoc) != 0x600DDEEE {
		return nil
	}
	sig := func(off int64) Signature {
		return Signature{Type: "unixware", Usage: PartitionTable, Offset: off, What: "a UnixWare disklabel"}
	}
	found := []Signature{sig(vtoc)}
	if d.U32LE(label+4) == 0xCA5E600D {
		found[0] = sig(label + 4)
	}
	if off := int64(14<<10 + label - 14 + 4); d.Has(off, "\x0D\x60\xE5\xCA") {
		found = append(found, sig(off))
	}
	return found
}

// findMinix is a Minix subpartition table: it lives in the first sector of
// a DOS primary partition of type 0x81 and has the DOS layout. On a whole
// disk libblkid reports the enclosing table ("dos"); this reports the
// nested one where it lies.
func findMinix(d *Dev) []Signature {
	e := mbrEntries(d)
	if e == nil || len(findDOS(d)) == 0 {
		return nil
	}
	var found []Signature
	for i := int64(0); i < 64; i += 16 {
		if e[i+4] != mbrMinix {
			continue
		}
		start := int64(d.U32LE(446+i+8)) * d.SectorSize
		if start > 0 && d.Has(start+510, "\x55\xAA") {
			found = append(found, Signature{Type: "minix", Usage: PartitionTable, Offset: start + 510, What: "a Minix subpartition table"})
		}
	}
	return found
}
