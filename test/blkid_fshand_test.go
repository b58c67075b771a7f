package test

import (
	bin "encoding/binary"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// handFSCases are hand-built filesystem headers, each from the published
// format its source names, for the types no Debian package here creates.
// Each writes only what the format's superblock needs to be recognised
// (libblkid checks these fields too, so a case it does not recognise is a
// broken case and fails).
var handFSCases = []sigCase{
	hand("hfs", "Inside Macintosh: Files (1992), 2-60, master directory block", func(t *testing.T, dev string) {
		mdb := make([]byte, 512)
		copy(mdb, "BD")
		bin.BigEndian.PutUint16(mdb[18:], 1000) // drNmAlBlks
		bin.BigEndian.PutUint32(mdb[20:], 4096) // drAlBlkSiz
		bin.BigEndian.PutUint16(mdb[28:], 16)   // drAlBlSt
		mdb[36] = 5
		copy(mdb[37:], "probe") // drVN, a Pascal string
		writeAt(t, dev, 1024, mdb)
	}),
	hand("hfsplus", "Apple Technical Note TN1150, HFS Plus Volume Format, volume header", func(t *testing.T, dev string) {
		vh := make([]byte, 512)
		copy(vh, "H+")
		bin.BigEndian.PutUint16(vh[2:], 4)     // version
		bin.BigEndian.PutUint32(vh[40:], 4096) // blockSize
		bin.BigEndian.PutUint32(vh[44:], 16384)
		writeAt(t, dev, 1024, vh)
	}),
	hand("ufs", "FreeBSD sys/ufs/ffs/fs.h, UFS2 superblock at 64 KiB, fs_magic at 0x55c", func(t *testing.T, dev string) {
		sb := make([]byte, 2048)
		bin.LittleEndian.PutUint32(sb[0x30:], 2048)        // fs_fsize
		bin.LittleEndian.PutUint32(sb[0x55c:], 0x19540119) // FS_UFS2_MAGIC
		writeAt(t, dev, 64<<10, sb)
	}),
	hand("hpfs", "D. Bridges, Inside the High Performance File System (1996): superblock at sector 16, spare block at 17", func(t *testing.T, dev string) {
		sb := make([]byte, 512)
		bin.LittleEndian.PutUint32(sb, 0xf995e849)
		bin.LittleEndian.PutUint32(sb[4:], 0xfa53e9c5)
		sb[8] = 2 // version
		writeAt(t, dev, 16*512, sb)
		spare := make([]byte, 512)
		bin.LittleEndian.PutUint32(spare, 0xf9911849)
		bin.LittleEndian.PutUint32(spare[4:], 0xfa5229c5)
		writeAt(t, dev, 17*512, spare)
	}),
	hand("sysv", "Linux fs/sysv/sysv.h, struct sysv4_super_block (s_magic 0xfd187e20 at byte 504, block 0 second half)", func(t *testing.T, dev string) {
		sb := make([]byte, 512)
		bin.LittleEndian.PutUint16(sb[0:], 16)    // s_isize
		bin.LittleEndian.PutUint32(sb[4:], 65536) // s_fsize
		copy(sb[440:], "probe")                   // s_fname
		bin.LittleEndian.PutUint32(sb[504:], 0xfd187e20)
		bin.LittleEndian.PutUint32(sb[508:], 2) // s_type: 1 KiB blocks
		writeAt(t, dev, 512, sb)
	}),
	hand("xenix", "Linux fs/sysv/sysv.h, struct xenix_super_block (s_magic 0x2b5544); placed where libblkid looks, 2 KiB", func(t *testing.T, dev string) {
		sb := make([]byte, 1024)
		copy(sb[632-0:], "probe") // s_fname, relative to the superblock at 1 KiB
		writeAt(t, dev, 1024, sb)
		writeAt(t, dev, 2048, []byte("\x2b\x55\x44\x00\x02\x00\x00\x00"))
	}),
	hand("ReFS", "libfsrefs documentation (J. Metz), ReFS volume header: file system signature \"ReFS\" at byte 3, \"FSRS\" at 16", func(t *testing.T, dev string) {
		vh := make([]byte, 512)
		copy(vh[3:], "ReFS\x00\x00\x00\x00")
		copy(vh[16:], "FSRS")
		bin.LittleEndian.PutUint16(vh[20:], 512)
		bin.LittleEndian.PutUint32(vh[32:], 512) // bytes per sector
		bin.LittleEndian.PutUint32(vh[36:], 8)   // sectors per cluster
		writeAt(t, dev, 0, vh)
	}),
	hand("VMFS", "vmfs-tools (libvmfs/vmfs_fs.h): FS information at 2 MiB, magic 0x2fabf15e", func(t *testing.T, dev string) {
		fs := make([]byte, 512)
		bin.LittleEndian.PutUint32(fs, 0x2fabf15e)
		bin.LittleEndian.PutUint32(fs[4:], 14) // volume version
		copy(fs[0x1d:], "probe")
		writeAt(t, dev, 2<<20, fs)
	}),
	hand("gfs", "GFS (gfs1-utils gfs_ondisk.h): superblock at 64 KiB, sb_fs_format 1309, sb_multihost_format 1401", func(t *testing.T, dev string) {
		sb := make([]byte, 512)
		bin.BigEndian.PutUint32(sb, 0x01161970)
		bin.BigEndian.PutUint32(sb[4:], 1)     // mh_type: superblock
		bin.BigEndian.PutUint32(sb[16:], 100)  // mh_format
		bin.BigEndian.PutUint32(sb[24:], 1309) // sb_fs_format
		bin.BigEndian.PutUint32(sb[28:], 1401) // sb_multihost_format
		bin.BigEndian.PutUint32(sb[36:], 4096) // sb_bsize
		writeAt(t, dev, 64<<10, sb)
	}),
	hand("ocfs", "OCFS version 1 volume header (ocfs-tools ocfsvol.h) at 8 KiB, label block after it; placed as libblkid reads it", func(t *testing.T, dev string) {
		vh := make([]byte, 1024)
		copy(vh, "OracleCFS")
		copy(vh[512+4:], "probe")
		writeAt(t, dev, 8<<10, vh)
	}),
	hand("oracleasm", "Oracle ASMLib disk header (oracleasm-support asmdisk): \"ORCLDISK\" at byte 32", func(t *testing.T, dev string) {
		writeAt(t, dev, 32, []byte("ORCLDISKPROBE\x00\x00\x00"))
	}),
	hand("vxfs", "Linux fs/freevxfs/vxfs.h: superblock at 1 KiB, vs_magic 0xa501fcf5", func(t *testing.T, dev string) {
		sb := make([]byte, 512)
		bin.LittleEndian.PutUint32(sb, 0xa501fcf5)
		bin.LittleEndian.PutUint32(sb[4:], 4)     // vs_version
		bin.LittleEndian.PutUint32(sb[40:], 1024) // vs_bsize
		writeAt(t, dev, 1024, sb)
	}),
	hand("nss", "Novell NSS pool superblock, as libblkid's netware.c describes it (no public specification): \"SPB5\" at 4 KiB", func(t *testing.T, dev string) {
		sb := make([]byte, 512)
		copy(sb, "SPB5")
		bin.LittleEndian.PutUint16(sb[4:], 1)
		writeAt(t, dev, 4096, sb)
	}),
	hand("befs", "D. Giampaolo, Practical File System Design with the Be File System (1999): superblock at 512, root directory inode", func(t *testing.T, dev string) {
		sb := make([]byte, 512)
		le := bin.LittleEndian
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
		writeAt(t, dev, 512, sb)
		inode := make([]byte, 1024) // at block 8; no attributes, no small data
		le.PutUint32(inode, 0x3bbe0ad9)
		writeAt(t, dev, 8<<10, inode)
	}),
	hand("mpool", "HSE mpool (mpool-kmod omf.h, struct omf_sb_descriptor): magic \"mpoolDev\", CRC-32C of the preceding fields", func(t *testing.T, dev string) {
		sb := make([]byte, 512)
		copy(sb, "mpoolDev")
		copy(sb[8:], "probe")
		bin.LittleEndian.PutUint16(sb[56:], 1) // osb_vers
		bin.LittleEndian.PutUint32(sb[58:], 1) // osb_gen
		bin.LittleEndian.PutUint32(sb[62:], crc32.Checksum(sb[:62], crc32.MakeTable(crc32.Castagnoli)))
		writeAt(t, dev, 0, sb)
	}),
	hand("zonefs", "Linux fs/zonefs/zonefs.h, struct zonefs_super: magic 0x5a4f4653 at 0", func(t *testing.T, dev string) {
		sb := make([]byte, 4096)
		bin.LittleEndian.PutUint32(sb, 0x5a4f4653)
		copy(sb[32:], "probe") // s_label
		writeAt(t, dev, 0, sb)
	}),
	hand("squashfs3", "squashfs-tools 3.x squashfs_fs.h: \"hsqs\", s_major 3 at byte 28", func(t *testing.T, dev string) {
		sb := make([]byte, 512)
		copy(sb, "hsqs")
		bin.LittleEndian.PutUint32(sb[4:], 1)  // inodes
		bin.LittleEndian.PutUint16(sb[28:], 3) // s_major
		bin.LittleEndian.PutUint16(sb[30:], 1) // s_minor
		writeAt(t, dev, 0, sb)
	}),
	{name: "exfs: an XFS superblock made by mkfs.xfs, magic EXFS", want: "exfs", tools: []string{"mkfs.xfs"},
		source: "libblkid exfs.c: EXFS is XFS's on-disk superblock (Linux fs/xfs/libxfs/xfs_format.h) with magic \"EXFS\"",
		make: func(t *testing.T, dev string) {
			img := filepath.Join(t.TempDir(), "xfs")
			require.NoError(t, os.WriteFile(img, nil, 0o600))
			require.NoError(t, os.Truncate(img, 320<<20))
			out, err := exec.Command("mkfs.xfs", "-q", "-f", img).CombinedOutput()
			require.NoError(t, err, "%s", out)
			p, err := os.ReadFile(img)
			require.NoError(t, err)
			sb := append([]byte(nil), p[:512]...)
			copy(sb, "EXFS")
			writeAt(t, dev, 0, sb)
		}},
}

// hand is a hand-built case for typ.
func hand(typ, source string, make func(t *testing.T, dev string)) sigCase {
	return sigCase{name: typ + " (hand-built)", want: typ, source: source, make: make}
}
