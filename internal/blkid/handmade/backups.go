package handmade

import "hash/crc32"

// BackupHeaders are devices that hold only a backup copy of a format's
// metadata, the first copy gone: each writes what the format's own tools
// write at the copy's place (the fields that say where it lies), after
// the layouts internal/blkid's backup*.go cite. libblkid reports none of
// them (Libblkid false): ioprobe refuses them all the same.
func BackupHeaders() []Header {
	return sized([]Header{
		extCopy("ext4-group1-4k", 512<<20, 4096, 32768, 0, 1, 0),
		extCopy("ext4-group3-4k-group1-wiped", 512<<20, 4096, 32768, 0, 3, 0),
		extCopy("ext4-g4096-1k", 64<<20, 1024, 4096, 1, 1, 0),
		extCopy("ext4-g8192-4k", 256<<20, 4096, 8192, 0, 1, 0),
		extCopy("ext4-bigalloc-4k-64k-clusters", 3<<30, 4096, 32768*16, 0, 1, 6),
		extCopy("ext4-64k-blocks", 8<<30, 65536, 65528, 0, 1, 0),
		xfsCopy("xfs-ag1", 320<<20, 20480, 4, 1),
		xfsCopy("xfs-ag2-ag1-wiped", 320<<20, 20480, 4, 2),
		{Name: "ntfs-last-sector", Type: "ntfs", Size: 64 << 20,
			Source: "ntfs-3g's mkntfs: the volume one sector short of the device, the backup boot sector in its last sector",
			Build: func(size int64) []Patch {
				return at(size-512, ntfsBoot(512, size/512-1))
			}},
		fat32Copy("fat32-sector6", 512),
		fat32Copy("fat32-sector6-4k-sectors", 4096),
		exfatCopy("exfat-sector12", 9),
		exfatCopy("exfat-sector12-4k-sectors", 12),
		{Name: "jfs-secondary", Type: "jfs", Size: 64 << 20,
			Source: "jfsutils include/jfs_superblock.h, struct superblock at SUPER2_OFF (60 KiB)",
			Build: func(int64) []Patch {
				sb := sector(512)
				copy(sb, "JFS1")
				le.PutUint32(sb[4:], 1)       // s_version
				le.PutUint64(sb[8:], 128<<10) // s_size, in physical blocks
				le.PutUint32(sb[16:], 4096)   // s_bsize
				le.PutUint16(sb[20:], 12)     // s_l2bsize
				le.PutUint16(sb[22:], 3)      // s_l2bfactor
				le.PutUint32(sb[24:], 512)    // s_pbsize
				le.PutUint16(sb[28:], 9)      // s_l2pbsize
				return at(60<<10, sb)
			}},
		{Name: "ocfs2-backup-1g", Type: "ocfs2", Size: 1200 << 20,
			Source: "ocfs2-tools include/ocfs2-kernel/ocfs2_fs.h: struct ocfs2_dinode with its ocfs2_super_block, the first backup at 1 GiB",
			Build: func(int64) []Patch {
				b := sector(4096)
				copy(b, "OCFSV2")
				le.PutUint32(b[0x2C:], 0x31)         // i_flags: valid, system, superblock
				le.PutUint64(b[0x50:], (1<<30)/4096) // i_blkno
				le.PutUint32(b[0xC0+0x38:], 12)      // s_blocksize_bits
				le.PutUint32(b[0xC0+0x3C:], 12)      // s_clustersize_bits
				return at(1<<30, b)
			}},
		{Name: "hfsplus-alternate", Type: "hfsplus", Size: 64 << 20,
			Source: "Apple TN1150: the alternate volume header, in the second-to-last 512-byte sector",
			Build: func(size int64) []Patch {
				return at((size/512-2)*512, hfsplusHeader())
			}},
		{Name: "apfs-checkpoint", Type: "apfs", Size: 128 << 20,
			Source: "Apple File System Reference: nx_superblock_t in the checkpoint descriptor area (block 2, as mkapfs writes it)",
			Build: func(int64) []Patch {
				b := sector(4096)
				le.PutUint64(b[8:], 1)           // o_oid
				le.PutUint32(b[24:], 0x80000001) // o_type: NX_SUPERBLOCK, ephemeral
				copy(b[32:], "NXSB")
				le.PutUint32(b[36:], 4096) // nx_block_size
				return at(2*4096, b)
			}},
		{Name: "lvm2-metadata-area", Type: "LVM2_member", Size: 64 << 20,
			Source: "lvm2 lib/format_text/layout.h: struct mda_header at 4096 and the volume group's text at 4608, the label sector zeroed",
			Build: func(int64) []Patch {
				return append(at(4096, lvmMDAHeader(512, uint64(len(lvmText)))), at(4608, str(lvmText))...)
			}},
		{Name: "lvm2-text-only", Type: "LVM2_member", Size: 64 << 20,
			Source: "lvm2's text metadata at 4608, its mda_header gone too",
			Build:  func(int64) []Patch { return at(4608, str(lvmText)) }},
		{Name: "vhdx-header-copies", Type: "vhdx", Size: 64 << 20,
			Source: "Microsoft VHDX Format Specification 1.0, 2.2.2: the headers at 64 and 128 KiB, with their CRC-32C, the file identifier gone",
			Build: func(int64) []Patch {
				return append(at(64<<10, vhdxHeader(1)), at(128<<10, vhdxHeader(2))...)
			}},
	})
}

// extCopy is an ext4 superblock copy of block group grp, of a filesystem
// with blocks of bs bytes, bpg blocks per group, first data block fdb and
// clusters of 2^logCluster KiB (0: no bigalloc), where
// lib/ext2fs/closefs.c writes it: the start of the group.
func extCopy(name string, size, bs, bpg, fdb, grp int64, logCluster uint32) Header {
	return Header{Name: name, Type: "ext4", Size: size,
		Source: "the kernel's fs/ext4/ext4.h (struct ext4_super_block); e2fsprogs lib/ext2fs/closefs.c writes each copy at its group's start with s_block_group_nr",
		Build: func(int64) []Patch {
			sb := sector(1024)
			logBlock := uint32(0)
			for b := bs; b > 1024; b >>= 1 {
				logBlock++
			}
			le.PutUint32(sb[0x14:], uint32(fdb))
			le.PutUint32(sb[0x18:], logBlock)
			if logCluster == 0 {
				logCluster = logBlock
			}
			le.PutUint32(sb[0x1C:], logCluster)
			le.PutUint32(sb[0x20:], uint32(bpg))
			le.PutUint16(sb[0x38:], 0xEF53)
			le.PutUint32(sb[0x4C:], 1) // s_rev_level: dynamic
			le.PutUint16(sb[0x5A:], uint16(grp))
			le.PutUint32(sb[0x5C:], 0x4)      // has_journal
			le.PutUint32(sb[0x60:], 0x2|0x40) // filetype, extents
			le.PutUint32(sb[0x64:], 0x1)      // sparse_super
			return at((grp*bpg+fdb)*bs, sb)
		}}
}

// xfsCopy is the secondary superblock of AG agno of an XFS filesystem of
// agcount AGs of agblocks 4 KiB blocks (struct xfs_dsb, big-endian).
func xfsCopy(name string, size int64, agblocks, agcount uint32, agno int64) Header {
	return Header{Name: name, Type: "xfs", Size: size,
		Source: "the kernel's fs/xfs/libxfs/xfs_format.h (struct xfs_dsb): a secondary superblock at its allocation group's start",
		Build: func(int64) []Patch {
			sb := sector(512)
			copy(sb, "XFSB")
			be.PutUint32(sb[4:], 4096)                             // sb_blocksize
			be.PutUint64(sb[8:], uint64(agblocks)*uint64(agcount)) // sb_dblocks
			be.PutUint32(sb[84:], agblocks)                        // sb_agblocks
			be.PutUint32(sb[88:], agcount)                         // sb_agcount
			be.PutUint16(sb[100:], 0xb4a5)                         // sb_versionnum: version 5 with features
			be.PutUint16(sb[102:], 512)                            // sb_sectsize
			be.PutUint16(sb[104:], 512)                            // sb_inodesize
			be.PutUint16(sb[106:], 8)                              // sb_inopblock
			sb[120], sb[121], sb[122], sb[123] = 12, 9, 9, 3       // blocklog, sectlog, inodelog, inopblog
			return at(agno*int64(agblocks)*4096, sb)
		}}
}

// ntfsBoot is an NTFS boot sector for ss-byte sectors and a volume of
// sectors sectors.
func ntfsBoot(ss int, sectors int64) []byte {
	b := sector(512)
	copy(b, "\xeb\x52\x90NTFS    ")
	le.PutUint16(b[11:], uint16(ss))
	b[13] = 8    // sectors per cluster
	b[21] = 0xf8 // media
	le.PutUint64(b[0x28:], uint64(sectors))
	le.PutUint64(b[0x30:], 4) // $MFT cluster
	b[0x40] = 0xf6            // clusters per MFT record: 2^10 bytes
	b[510], b[511] = 0x55, 0xaa
	return b
}

// fat32Copy is a FAT32 boot sector copy in sector 6 of ss-byte sectors,
// naming sector 6 as its backup (mkfs.fat's choice).
func fat32Copy(name string, ss int) Header {
	return Header{Name: name, Type: "vfat", Size: 64 << 20,
		Source: "Microsoft FAT specification: a FAT32 boot sector whose BPB_BkBootSec names sector 6, its copy there (dosfstools mkfs.fat)",
		Build: func(int64) []Patch {
			b := sector(512)
			copy(b, "\xeb\x58\x90mkfs.fat")
			le.PutUint16(b[11:], uint16(ss))
			b[13] = 1                    // sectors per cluster
			le.PutUint16(b[14:], 32)     // reserved sectors
			b[16] = 2                    // FATs
			b[21] = 0xf8                 // media
			le.PutUint32(b[0x24:], 1009) // BPB_FATSz32
			le.PutUint32(b[0x2c:], 2)    // root cluster
			le.PutUint16(b[0x30:], 1)    // FSInfo sector
			le.PutUint16(b[0x32:], 6)    // BPB_BkBootSec
			copy(b[0x52:], "FAT32   ")
			b[510], b[511] = 0x55, 0xaa
			return at(6*int64(ss), b)
		}}
}

// exfatCopy is the backup boot sector of an exFAT volume of 2^shift-byte
// sectors, in sector 12.
func exfatCopy(name string, shift int) Header {
	return Header{Name: name, Type: "exfat", Size: 64 << 20,
		Source: "Microsoft exFAT specification 3.1: the backup boot sector, sector 12",
		Build: func(int64) []Patch {
			b := sector(512)
			copy(b, "\xeb\x76\x90EXFAT   ")
			le.PutUint64(b[72:], uint64(64<<20)>>shift) // VolumeLength
			le.PutUint16(b[104:], 0x0100)               // FileSystemRevision 1.0
			b[108], b[109], b[110] = byte(shift), 3, 1  // BytesPerSectorShift, SectorsPerClusterShift, NumberOfFats
			b[510], b[511] = 0x55, 0xaa
			return at(12<<shift, b)
		}}
}

// lvmText is a volume group's text metadata, as vgcreate writes it.
const lvmText = "handmadevg {\nid = \"6N6zEi-s8Sq-pCNK-KVaE-KlOG-RH24-7W1WHr\"\nseqno = 1\nformat = \"lvm2\"\nstatus = [\"RESIZEABLE\", \"READ\", \"WRITE\"]\n}\n"

// lvmMDAHeader is a struct mda_header at 4096, its text at rel (from the
// area's start) of n bytes.
func lvmMDAHeader(rel, n uint64) []byte {
	h := sector(512)
	copy(h[4:], " LVM2 x[5A%r0N*>")
	le.PutUint32(h[20:], 1)       // version
	le.PutUint64(h[24:], 4096)    // start
	le.PutUint64(h[32:], 0xff000) // size
	le.PutUint64(h[40:], rel)     // raw_locns[0].offset
	le.PutUint64(h[48:], n)       // raw_locns[0].size
	return h
}

// vhdxHeader is a VHDX header ("head", sequence number seq) with its
// CRC-32C over the 4 KiB, taken with the checksum field zero.
func vhdxHeader(seq uint64) []byte {
	h := sector(4096)
	copy(h, "head")
	le.PutUint64(h[8:], seq)
	le.PutUint16(h[66:], 1)     // version
	le.PutUint32(h[68:], 1<<20) // log length
	le.PutUint64(h[72:], 1<<20) // log offset
	le.PutUint32(h[4:], crc32.Checksum(h, crc32.MakeTable(crc32.Castagnoli)))
	return h
}
