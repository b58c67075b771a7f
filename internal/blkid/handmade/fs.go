package handmade

import "hash/crc32"

// FSHeaders are hand-built filesystem superblocks for the types no Debian
// package here creates. Each writes what libblkid checks before it
// believes the magic, so libblkid recognises them as the real thing.
func FSHeaders() []Header {
	hs := []Header{
		{Name: "hfs", Type: "hfs", Source: "Inside Macintosh: Files (1992), 2-60, master directory block", Build: func(int64) []Patch {
			mdb := sector(512)
			copy(mdb, "BD")
			be.PutUint16(mdb[18:], 1000) // drNmAlBlks
			be.PutUint32(mdb[20:], 4096) // drAlBlkSiz
			be.PutUint16(mdb[28:], 16)   // drAlBlSt
			mdb[36] = 5
			copy(mdb[37:], "probe") // drVN, a Pascal string
			return at(1024, mdb)
		}},
		{Name: "hfsplus", Type: "hfsplus", Source: "Apple Technical Note TN1150, HFS Plus Volume Format, volume header", Build: func(int64) []Patch {
			return at(1024, hfsplusHeader())
		}},
		{Name: "hfsplus-wrapped", Type: "hfsplus", Source: "Apple TN1150, HFS wrapper: an HFS master directory block whose drEmbedSigWord is H+", Build: func(int64) []Patch {
			mdb := sector(512)
			copy(mdb, "BD")
			be.PutUint32(mdb[20:], 4096)
			be.PutUint16(mdb[28:], 16)
			copy(mdb[0x7c:], "H+")
			be.PutUint16(mdb[0x7e:], 2) // embedded volume's first allocation block
			return append(at(1024, mdb), at(16*512+2*4096+1024, hfsplusHeader())...)
		}},
		{Name: "ufs2", Type: "ufs", Source: "FreeBSD sys/ufs/ffs/fs.h, UFS2 superblock at 64 KiB, fs_magic at 0x55c", Build: func(int64) []Patch {
			sb := sector(2048)
			le.PutUint32(sb[0x30:], 2048)        // fs_fsize
			le.PutUint32(sb[0x55c:], 0x19540119) // FS_UFS2_MAGIC
			return at(64<<10, sb)
		}},
		{Name: "hpfs", Type: "hpfs", Source: "D. Bridges, Inside the High Performance File System (1996): superblock at sector 16, spare block at 17", Build: func(int64) []Patch {
			sb := sector(512)
			le.PutUint32(sb, 0xf995e849)
			le.PutUint32(sb[4:], 0xfa53e9c5)
			sb[8] = 2 // version
			spare := sector(512)
			le.PutUint32(spare, 0xf9911849)
			le.PutUint32(spare[4:], 0xfa5229c5)
			return append(at(16*512, sb), at(17*512, spare)...)
		}},
		{Name: "sysv", Type: "sysv", Source: "Linux fs/sysv/sysv.h, struct sysv4_super_block (s_magic 0xfd187e20 at byte 504, second half of block 0)", Build: func(int64) []Patch {
			sb := sector(512)
			le.PutUint16(sb[0:], 16)    // s_isize
			le.PutUint32(sb[4:], 65536) // s_fsize
			copy(sb[440:], "probe")     // s_fname
			le.PutUint32(sb[504:], 0xfd187e20)
			le.PutUint32(sb[508:], 2) // s_type: 1 KiB blocks
			return at(512, sb)
		}},
		{Name: "xenix", Type: "xenix", Source: "Linux fs/sysv/sysv.h, struct xenix_super_block (s_magic 0x2b5544), placed where libblkid looks (2 KiB)", Build: func(int64) []Patch {
			sb := sector(1024)
			copy(sb[632:], "probe") // s_fname
			return append(at(1024, sb), at(2048, str("\x2b\x55\x44\x00\x02\x00\x00\x00"))...)
		}},
		{Name: "refs", Type: "ReFS", Source: "libfsrefs documentation (J. Metz), ReFS volume header: \"ReFS\" at byte 3, \"FSRS\" at 16", Build: func(int64) []Patch {
			vh := sector(512)
			copy(vh[3:], "ReFS\x00\x00\x00\x00")
			copy(vh[16:], "FSRS")
			le.PutUint16(vh[20:], 512)
			le.PutUint32(vh[32:], 512) // bytes per sector
			le.PutUint32(vh[36:], 8)   // sectors per cluster
			return at(0, vh)
		}},
		{Name: "vmfs", Type: "VMFS", Source: "vmfs-tools libvmfs/vmfs_fs.h: FS information at 2 MiB, magic 0x2fabf15e", Build: func(int64) []Patch {
			fs := sector(512)
			le.PutUint32(fs, 0x2fabf15e)
			le.PutUint32(fs[4:], 14) // volume version
			copy(fs[0x1d:], "probe")
			return at(2<<20, fs)
		}},
		{Name: "gfs", Type: "gfs", Source: "gfs1-utils gfs_ondisk.h: superblock at 64 KiB, sb_fs_format 1309, sb_multihost_format 1401", Build: func(int64) []Patch {
			sb := sector(512)
			be.PutUint32(sb, 0x01161970)
			be.PutUint32(sb[4:], 1)     // mh_type: superblock
			be.PutUint32(sb[16:], 100)  // mh_format
			be.PutUint32(sb[24:], 1309) // sb_fs_format
			be.PutUint32(sb[28:], 1401) // sb_multihost_format
			be.PutUint32(sb[36:], 4096) // sb_bsize
			return at(64<<10, sb)
		}},
		{Name: "ocfs", Type: "ocfs", Source: "OCFS version 1 volume header (ocfs-tools ocfsvol.h) at 8 KiB, label block after it, as libblkid reads it", Build: func(int64) []Patch {
			vh := sector(1024)
			copy(vh, "OracleCFS")
			copy(vh[512+4:], "probe")
			return at(8<<10, vh)
		}},
		{Name: "oracleasm", Type: "oracleasm", Source: "Oracle ASMLib disk header (oracleasm-support): \"ORCLDISK\" at byte 32", Build: func(int64) []Patch {
			return at(32, str("ORCLDISKPROBE\x00\x00\x00"))
		}},
		{Name: "vxfs", Type: "vxfs", Source: "Linux fs/freevxfs/vxfs.h: superblock at 1 KiB, vs_magic 0xa501fcf5", Build: func(int64) []Patch {
			sb := sector(512)
			le.PutUint32(sb, 0xa501fcf5)
			le.PutUint32(sb[4:], 4)     // vs_version
			le.PutUint32(sb[40:], 1024) // vs_bsize
			return at(1024, sb)
		}},
		{Name: "nss", Type: "nss", Source: "Novell NSS pool superblock as libblkid's netware.c describes it (no public specification): \"SPB5\" at 4 KiB", Build: func(int64) []Patch {
			sb := sector(512)
			copy(sb, "SPB5")
			le.PutUint16(sb[4:], 1)
			return at(4096, sb)
		}},
		{Name: "befs", Type: "befs", Source: "D. Giampaolo, Practical File System Design with the Be File System (1999): superblock at 512, root directory inode", Build: func(int64) []Patch {
			sb := sector(512)
			copy(sb, "probe")
			le.PutUint32(sb[32:], 0x42465331)  // magic1
			le.PutUint32(sb[36:], 0x42494745)  // fs_byte_order
			le.PutUint32(sb[40:], 1024)        // block_size
			le.PutUint32(sb[44:], 10)          // block_shift
			le.PutUint64(sb[48:], 65536)       // num_blocks
			le.PutUint32(sb[64:], 1024)        // inode_size
			le.PutUint32(sb[68:], 0xdd121031)  // magic2
			le.PutUint32(sb[72:], 8192)        // blocks_per_ag
			le.PutUint32(sb[76:], 13)          // ag_shift
			le.PutUint32(sb[80:], 8)           // num_ags
			le.PutUint32(sb[112:], 0x15b6830e) // magic3
			le.PutUint16(sb[116+4:], 8)        // root_dir: group 0, start 8,
			le.PutUint16(sb[116+6:], 1)        // length 1
			inode := sector(1024)              // at block 8; no attributes, no small data
			le.PutUint32(inode, 0x3bbe0ad9)
			return append(at(512, sb), at(8<<10, inode)...)
		}},
		{Name: "mpool", Type: "mpool", Source: "HSE mpool (mpool-kmod omf.h, struct omf_sb_descriptor): magic \"mpoolDev\", CRC-32C of the preceding fields", Build: func(int64) []Patch {
			sb := sector(512)
			copy(sb, "mpoolDev")
			copy(sb[8:], "probe")
			le.PutUint16(sb[56:], 1) // osb_vers
			le.PutUint32(sb[58:], 1) // osb_gen
			le.PutUint32(sb[62:], crc32.Checksum(sb[:62], crc32.MakeTable(crc32.Castagnoli)))
			return at(0, sb)
		}},
		{Name: "zonefs", Type: "zonefs", Source: "Linux fs/zonefs/zonefs.h, struct zonefs_super: magic 0x5a4f4653 at 0", Build: func(int64) []Patch {
			sb := sector(4096)
			le.PutUint32(sb, 0x5a4f4653)
			copy(sb[32:], "probe") // s_label
			return at(0, sb)
		}},
		{Name: "squashfs3", Type: "squashfs3", Source: "squashfs-tools 3.x squashfs_fs.h: \"hsqs\", s_major 3 at byte 28", Build: func(int64) []Patch {
			sb := sector(512)
			copy(sb, "hsqs")
			le.PutUint32(sb[4:], 1)  // inodes
			le.PutUint16(sb[28:], 3) // s_major
			le.PutUint16(sb[30:], 1) // s_minor
			return at(0, sb)
		}},
	}
	for i := range hs {
		hs[i].Libblkid = true
		if hs[i].Size == 0 {
			hs[i].Size = 64 << 20
		}
	}
	return hs
}

// hfsplusHeader is an HFS+ volume header (TN1150): signature, version 4,
// 4 KiB allocation blocks.
func hfsplusHeader() []byte {
	vh := sector(512)
	copy(vh, "H+")
	be.PutUint16(vh[2:], 4)     // version
	be.PutUint32(vh[40:], 4096) // blockSize
	be.PutUint32(vh[44:], 16384)
	return vh
}
