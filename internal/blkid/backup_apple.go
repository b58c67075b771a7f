package blkid

// Apple's filesystems: HFS and HFS+ keep an alternate volume header (HFS:
// master directory block) in the second-to-last 512-byte sector (Apple
// TN1150, "Volume Header"; Inside Macintosh: Files), which fsck_hfs
// (Apple's diskdev_cmds, hfsprogs' fsck.hfsplus on Linux) reads when the
// first is damaged. An APFS container's superblock in block 0 is a copy:
// the checkpoint descriptor area holds the real ones, and a mount takes
// the latest (Apple File System Reference, "Mounting an Apple File System
// Partition").

func hfsBackup() Backup {
	return Backup{
		Name:  "HFS, HFS+",
		Types: []string{"hfsplus", "hfs"},
		Tool:  "fsck.hfsplus",
		Find:  findHFSBackup,
	}
}

func findHFSBackup(d *Dev) []Signature {
	off := (d.Size/512 - 2) * 512
	if off < 2048 {
		return nil
	}
	h := d.At(off, 0x80)
	if h == nil {
		return nil
	}
	const what = " (its alternate volume header, in the second-to-last sector; fsck.hfsplus reads it)"
	switch string(h[:2]) {
	case "H+", "HX":
		v, bs := be16(h[2:]), be32(h[40:])
		if (v == 4 || v == 5) && bs >= 512 && bs&(bs-1) == 0 {
			return backupSig("hfsplus", Filesystem, off, "an HFS+ filesystem"+what)
		}
	case "BD":
		if hfsAllocBlock(h) {
			if e := string(h[0x7c:0x7e]); e == "H+" || e == "HX" {
				return backupSig("hfsplus", Filesystem, off, "an HFS+ filesystem (in an HFS wrapper)"+what)
			}
			return backupSig("hfs", Filesystem, off, "an HFS filesystem"+what)
		}
	}
	return nil
}

func apfsBackup() Backup {
	return Backup{
		Name:  "APFS",
		Types: []string{"apfs"},
		Tool:  "mount",
		Find:  findAPFSBackup,
	}
}

// findAPFSBackup: a container superblock ("NXSB" 32 bytes in) whose object
// header says it is the container's (oid 1) and of type NX_SUPERBLOCK
// (0x80000001 with the ephemeral flag), for 4 KiB blocks, mkapfs's and
// Apple's default.
func findAPFSBackup(d *Dev) []Signature {
	for blk := int64(1); blk < 32; blk++ {
		off := blk * 4096
		if d.Has(off+32, "NXSB") && d.U64LE(off+8) == 1 && d.U32LE(off+24) == 0x80000001 && d.U32LE(off+36) == 4096 {
			return backupSig("apfs", Filesystem, off+32, "an APFS container (a superblock of its checkpoint descriptor area; a mount reads it)")
		}
	}
	return nil
}
