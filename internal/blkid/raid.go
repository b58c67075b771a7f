package blkid

import "fmt"

// raidProbes are Linux md and the firmware ("fake") RAID formats that
// libblkid knows, in libblkid's order. The firmware formats keep their
// metadata in the last sectors of the disk, where no filesystem looks.
//
// Formats: md from the kernel's include/uapi/linux/raid/md_p.h (0.90 and
// 1.x superblocks); DDF from SNIA's Common RAID Disk Data Format 2.0;
// the vendor formats (Intel Matrix Storage, LSI MegaRAID, VIA, Silicon
// Image Medley, NVIDIA, Promise FastTrack, HighPoint 37x/45x, Adaptec,
// JMicron) as dmraid documents them, at the places libblkid looks.
func raidProbes() []Probe {
	return []Probe{
		{Type: "linux_raid_member", Usage: Raid, Find: findLinuxRaid},
		{Type: "ddf_raid_member", Usage: Raid, Find: findDDF},
		{Type: "isw_raid_member", Usage: Raid, Find: findISW},
		tailProbe("lsi_mega_raid_member", "an LSI MegaRAID member", -1, func(d *Dev, off int64) bool {
			return d.Has(off, "$XIDE$")
		}),
		// VIA's header sums itself up, but wipefs lists it with a bad
		// checksum too (libblkid's BADCSUM), and so does this.
		tailProbe("via_raid_member", "a VIA RAID member", -1, func(d *Dev, off int64) bool {
			return d.U16LE(off) == 0xAA55 && d.U8(off+2) <= 2
		}),
		tailProbeAt("silicon_medley_raid_member", "a Silicon Image Medley RAID member", -1, 0x60, func(d *Dev, off int64) bool {
			return d.U32LE(off+0x60) == 0x2F000000 && d.U8(off+0x116) < 8
		}),
		tailProbe("nvidia_raid_member", "an NVIDIA MediaShield RAID member", -2, func(d *Dev, off int64) bool {
			return d.Has(off, "NVIDIA")
		}),
		{Type: "promise_fasttrack_raid_member", Usage: Raid, Find: findPromise},
		tailProbe("hpt45x_raid_member", "a HighPoint 45x RAID member", -11, func(d *Dev, off int64) bool {
			m := d.U32LE(off)
			return m == 0x5a7816f3 || m == 0x5a7816fd
		}),
		MagicProbe("hpt37x_raid_member", Raid, "a HighPoint 37x RAID member", []Magic{
			{Magic: "\xf0\x16\x78\x5a", KBOff: 4, SBOff: 544},
			{Magic: "\xfd\x16\x78\x5a", KBOff: 4, SBOff: 544},
		}, nil),
		tailProbe("adaptec_raid_member", "an Adaptec RAID member", -1, func(d *Dev, off int64) bool {
			return d.U32BE(off) == 0x37FC4D1E && d.U32BE(off+0x100) == 0x4450544D
		}),
		tailProbe("jmicron_raid_member", "a JMicron RAID member", -1, func(d *Dev, off int64) bool {
			return d.Has(off, "JM")
		}),
	}
}

// tailProbe is a firmware RAID format whose metadata starts sector
// sectorsFromEnd (negative) of the disk, counted in 512-byte sectors as
// libblkid counts them, on disks of at least 64 KiB.
func tailProbe(typ, what string, sectorsFromEnd int64, match func(d *Dev, off int64) bool) Probe {
	return tailProbeAt(typ, what, sectorsFromEnd, 0, match)
}

// tailProbeAt is tailProbe for formats whose magic lies magicOff bytes
// into their metadata sector (the offset blkid reports).
func tailProbeAt(typ, what string, sectorsFromEnd, magicOff int64, match func(d *Dev, off int64) bool) Probe {
	return Probe{Type: typ, Usage: Raid, Find: func(d *Dev) []Signature {
		if d.Size < 0x10000 {
			return nil
		}
		off := (d.Size/512 + sectorsFromEnd) * 512
		if !match(d, off) {
			return nil
		}
		return []Signature{{Type: typ, Usage: Raid, Offset: off + magicOff, What: what}}
	}}
}

const mdMagic = 0xa92b4efc

// findLinuxRaid looks for md superblocks where the kernel puts them: 0.90
// in the last 64 KiB-aligned 64 KiB (in either byte order: 0.90 is
// host-endian), 1.0 8 KiB before the 4 KiB-aligned end, 1.1 at the start
// and 1.2 at 4 KiB.
func findLinuxRaid(d *Dev) []Signature {
	var found []Signature
	add := func(off int64, ver string) {
		found = append(found, Signature{Type: "linux_raid_member", Usage: Raid, Offset: off,
			What: fmt.Sprintf("a Linux software RAID (md %s) member", ver)})
	}
	const reserved = 0x10000
	if d.Size > reserved {
		off := d.Size&^(reserved-1) - reserved
		if d.U32LE(off) == mdMagic || d.U32BE(off) == mdMagic {
			add(off, "0.90")
		}
		if off := d.Size&^0xfff - 0x2000; mdV1(d, off) {
			add(off, "1.0")
		}
	}
	if mdV1(d, 0) {
		add(0, "1.1")
	}
	if mdV1(d, 0x1000) {
		add(0x1000, "1.2")
	}
	return found
}

// mdV1 says whether a version-1 superblock that knows where it is lies at
// off (super_offset, in sectors, is how libblkid tells 1.0/1.1/1.2 apart).
func mdV1(d *Dev, off int64) bool {
	return d.U32LE(off) == mdMagic && d.U32LE(off+4) == 1 && d.U64LE(off+128+16) == uint64(off)>>9
}

// findISW looks for Intel Matrix Storage metadata in the second-to-last
// sector, counted in the device's own sectors as libblkid counts them
// (unlike the other formats; 512 bytes in a regular file), and in 512- and
// 4096-byte sectors too: metadata written on a disk of the other sector
// size and copied keeps its place.
func findISW(d *Dev) []Signature {
	if d.Size < 0x10000 {
		return nil
	}
	var found []Signature
	for _, ss := range sectorSizes(d) {
		off := (d.Size/ss - 2) * ss
		if d.Has(off, "Intel Raid ISM Cfg Sig. ") && (len(found) == 0 || found[0].Offset != off) {
			found = append(found, Signature{Type: "isw_raid_member", Usage: Raid, Offset: off, What: "an Intel Matrix Storage (IMSM) RAID member"})
		}
	}
	return found
}

const ddfMagic = 0xDE11DE11

// findDDF looks for the SNIA DDF anchor header in the last sector or 257
// sectors from the end, in either byte order.
func findDDF(d *Dev) []Signature {
	if d.Size < 0x30000 {
		return nil
	}
	for _, back := range []int64{1, 257} {
		off := (d.Size/512 - back) * 512
		if d.U32BE(off) == ddfMagic || d.U32LE(off) == ddfMagic {
			return []Signature{{Type: "ddf_raid_member", Usage: Raid, Offset: off, What: "a DDF (SNIA) RAID member"}}
		}
	}
	return nil
}

// findPromise looks for the Promise FastTrack header at each of the sector
// counts from the end that the controllers' BIOSes use.
func findPromise(d *Dev) []Signature {
	if d.Size < 0x40000 {
		return nil
	}
	n := d.Size >> 9
	for _, back := range []int64{63, 255, 256, 16, 399, 591, 675, 735, 911, 974, 991, 951, 3087} {
		if n < back {
			return nil
		}
		off := (n - back) << 9
		if d.Has(off, "Promise Technology, Inc.") {
			return []Signature{{Type: "promise_fasttrack_raid_member", Usage: Raid, Offset: off, What: "a Promise FastTrack RAID member"}}
		}
	}
	return nil
}
