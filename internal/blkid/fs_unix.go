package blkid

// Filesystems whose magic moves with the block size or the byte order, or
// that have no magic at a fixed place: UFS, System V, Xenix, Minix, XFS's
// external log, nilfs2, btrfs, GFS, squashfs. Layouts: FreeBSD's
// sys/ufs/ffs/fs.h, the Linux kernel's fs/sysv, fs/minix, fs/xfs/libxfs,
// fs/nilfs2 (include/uapi/linux/nilfs2_ondisk.h), fs/btrfs, fs/gfs2
// (include/uapi/linux/gfs2_ondisk.h) and squashfs's own documentation;
// where libblkid looks is its ufs.c, sysv.c, minix.c, xfs.c, nilfs.c,
// btrfs.c, gfs.c, squashfs.c.

// ufsProbe: the magic at byte 0x55c of a superblock at 0, 8, 64 or 256 KiB,
// in either byte order, one of six values (UFS1, UFS2 and vendor variants).
func ufsProbe() Probe {
	p := Probe{Type: "ufs", Usage: Filesystem}
	mags := []uint32{0x19540119, 0x00011954, 0x00195612, 0x00095014, 0x00612195, 0x05231994}
	p.Find = func(d *Dev) []Signature {
		for _, kb := range []int64{0, 8, 64, 256} {
			off := kb<<10 + 0x55c
			le, be := d.U32LE(off), d.U32BE(off)
			for _, m := range mags {
				if le == m || be == m {
					return found(p, "a UFS filesystem", off)
				}
			}
		}
		return nil
	}
	return p
}

// sysvProbe: System V's magic 0xfd187e20 (either byte order) at byte 504 of
// the 512-byte superblock in the second half of block 0, 9, 15 or 18.
func sysvProbe() Probe {
	p := Probe{Type: "sysv", Usage: Filesystem}
	p.Find = func(d *Dev) []Signature {
		for _, blk := range []int64{0, 9, 15, 18} {
			off := blk*1024 + 512 + 504
			if d.U32LE(off) == 0xfd187e20 || d.U32BE(off) == 0xfd187e20 {
				return found(p, "a System V filesystem", off)
			}
		}
		return nil
	}
	return p
}

// xenixProbe: Xenix's superblock is at 1 KiB and its magic at byte 1016 of
// it (2040); libblkid looks 8 bytes further, at 2048. Both are checked.
func xenixProbe() Probe {
	p := Probe{Type: "xenix", Usage: Filesystem}
	p.Find = func(d *Dev) []Signature {
		for _, off := range []int64{2048, 2040} {
			if d.Has(off, "\x2b\x55\x44") || d.Has(off, "\x44\x55\x2b") {
				return found(p, "a Xenix filesystem", off)
			}
		}
		return nil
	}
	return p
}

// minixProbe: the magic at byte 0x10 (v1, v2) or 0x18 (v3) of the superblock
// at 1 KiB, either byte order, with the fields fsck.minix insists on.
func minixProbe() Probe {
	p := Probe{Type: "minix", Usage: Filesystem}
	p.Find = func(d *Dev) []Signature {
		sb := d.At(1024, 64)
		if sb == nil {
			return nil
		}
		for _, order := range []func([]byte) uint16{le16, be16} {
			m12 := order(sb[0x10:])
			if m12 == 0x137f || m12 == 0x138f || m12 == 0x2468 || m12 == 0x2478 {
				// v1/v2: s_ninodes, s_imap_blocks, s_zmap_blocks, s_log_zone_size, s_state
				if order(sb[0:]) != 0 && order(sb[4:]) != 0 && order(sb[6:]) != 0 && order(sb[10:]) == 0 && order(sb[0x12:])&^3 == 0 {
					return found(p, "a Minix filesystem", 1024+0x10)
				}
			}
			if order(sb[0x18:]) == 0x4d5a {
				// v3: s_imap_blocks, s_zmap_blocks, s_log_zone_size
				if order(sb[6:]) != 0 && order(sb[8:]) != 0 && order(sb[12:]) == 0 {
					return found(p, "a Minix filesystem", 1024+0x18)
				}
			}
		}
		return nil
	}
	return p
}

func le16(p []byte) uint16 { return uint16(p[0]) | uint16(p[1])<<8 }
func be16(p []byte) uint16 { return uint16(p[1]) | uint16(p[0])<<8 }

// xfsLogProbe: an XFS log on its own device has no superblock; libblkid
// looks for a log record header (magic 0xFEEDbabe, big-endian) at the start
// of one of the first 512 sectors, and gives up at an XFS superblock.
func xfsLogProbe() Probe {
	p := Probe{Type: "xfs_external_log", Usage: Other}
	p.Find = func(d *Dev) []Signature {
		for i := int64(0); i < 512; i++ {
			off := i * 512
			// The magic first, the header only where it matches: 512
			// sectors are looked at on every device.
			m := d.At(off, 4)
			if m == nil || string(m) == "XFSB" || off+512 > d.Size {
				return nil
			}
			if be32(m) != 0xfeedbabe {
				continue
			}
			h := d.At(off, 512)
			if h == nil {
				return nil
			}
			// h_cycle @4, h_version @8, h_len @12, h_fmt @300 (after 71 padding words and the rest of the header).
			v, n, f := be32(h[8:]), be32(h[12:]), be32(h[300:])
			if v != 0 && v&^3 == 0 && n > 0 && n <= 1<<31-1 && f >= 1 && f <= 3 {
				return found(p, "an XFS external log", off)
			}
		}
		return nil
	}
	return p
}

func be32(p []byte) uint32 {
	return uint32(p[3]) | uint32(p[2])<<8 | uint32(p[1])<<16 | uint32(p[0])<<24
}
func le32(p []byte) uint32 {
	return uint32(p[0]) | uint32(p[1])<<8 | uint32(p[2])<<16 | uint32(p[3])<<24
}

// nilfs2Probe: nilfs2 keeps a superblock at 1 KiB and a second one in the
// last 4 KiB-aligned block (((size/512)-8)*512); either one is the
// filesystem, and libblkid reports the newer. Its magic 0x3434 sits at byte
// 6; s_bytes (the superblock's length, byte 8) must be sane.
func nilfs2Probe() Probe {
	p := Probe{Type: "nilfs2", Usage: Filesystem}
	p.Find = func(d *Dev) []Signature {
		var sigs []Signature
		offs := []int64{1024}
		if d.Size >= 8*512+1024 {
			offs = append(offs, (d.Size/512-8)*512)
		}
		for _, off := range offs {
			sb := d.At(off, 16)
			if sb == nil || le16(sb[6:]) != 0x3434 {
				continue
			}
			if n := le16(sb[8:]); n < 16 || n > 1024 {
				continue
			}
			sigs = append(sigs, found(p, "a nilfs2 filesystem", off+6)...)
		}
		return sigs
	}
	return p
}

// btrfsProbe: the superblock at 64 KiB, magic at byte 0x40 of it. Its
// mirrors are at 64 MiB and 256 GiB (libblkid does not read them; they are
// checked too).
func btrfsProbe() Probe {
	return MagicProbe("btrfs", Filesystem, "a btrfs filesystem", []Magic{{"_BHRfS_M", 64, 0x40}, {"_BHRfS_M", 64 << 10, 0x40}, {"_BHRfS_M", 256 << 20, 0x40}}, nil)
}

// gfsProbes: GFS and GFS2 share a superblock at 64 KiB (magic 0x01161970,
// big-endian) and differ in the format number at byte 24: 1309 is GFS,
// anything else is taken for GFS2.
func gfsProbes() []Probe {
	magic := []Magic{{"\x01\x16\x19\x70", 64, 0}}
	isGFS := func(d *Dev, off int64) bool { return d.U32BE(off+24) == 1309 }
	return []Probe{
		MagicProbe("gfs", Filesystem, "a GFS filesystem", magic, isGFS),
		MagicProbe("gfs2", Filesystem, "a GFS2 filesystem", magic, func(d *Dev, off int64) bool { return !isGFS(d, off) }),
	}
}

// squashfsProbes: "hsqs" at 0 is squashfs from version 4 on (little-endian
// only), squashfs3 before; "sqsh" is a big-endian squashfs3. The major
// version is the 16-bit word at byte 28.
func squashfsProbes() []Probe {
	return []Probe{
		MagicProbe("squashfs", Filesystem, "a squashfs filesystem", []Magic{{Magic: "hsqs"}}, func(d *Dev, off int64) bool {
			return d.U16LE(28) >= 4
		}),
		MagicProbe("squashfs3", Filesystem, "a squashfs (version 3 or older) filesystem", []Magic{{Magic: "sqsh"}, {Magic: "hsqs"}}, func(d *Dev, off int64) bool {
			if d.Has(0, "sqsh") {
				return d.U16BE(28) <= 3
			}
			return d.U16LE(28) <= 3
		}),
	}
}
