package blkid

// scoutfs keeps the same superblock on its metadata and its data devices,
// told apart by one flag.
//
// Format: scoutfs's kmod/src/format.h (struct scoutfs_super_block in a
// 4 KiB block at 64 KiB: a block header of crc, magic 0x103c428b, fsid,
// seq and blkno, then id, fmt_vers and flags, whose bit 0 marks the
// metadata device). Where libblkid looks: scoutfs.c (since 2.42), which
// also checks the block's CRC-32C.

const (
	scoutfsSB       = 64 << 10
	scoutfsMagic    = "\x8b\x42\x3c\x10" // 0x103c428b, little-endian
	scoutfsFlags    = 32 + 8 + 8         // after the block header, id and fmt_vers
	scoutfsMetaFlag = 1
)

func scoutfsProbes() []Probe {
	magic := []Magic{{Magic: scoutfsMagic, KBOff: 64, SBOff: 4}}
	isMeta := func(d *Dev) bool { return d.U64LE(scoutfsSB+scoutfsFlags)&scoutfsMetaFlag != 0 }
	return []Probe{
		MagicProbe("scoutfs_meta", Filesystem, "a scoutfs metadata device", magic, func(d *Dev, off int64) bool { return isMeta(d) }),
		MagicProbe("scoutfs_data", Filesystem, "a scoutfs data device", magic, func(d *Dev, off int64) bool { return !isMeta(d) }),
	}
}
