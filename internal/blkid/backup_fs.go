package blkid

import (
	"fmt"
	"math/bits"
)

// Backup boot sectors and superblocks at fixed or self-describing places:
// NTFS, FAT32, exFAT, JFS, OCFS2. Each is believed only when the fields
// that say where it lies agree with where it was found.

func ntfsBackup() Backup {
	return Backup{
		Name:  "NTFS",
		Types: []string{"ntfs"},
		Tool:  "ntfsfix",
		Find:  findNTFSBackup,
	}
}

// findNTFSBackup: mkntfs counts the volume one sector short of the device
// and writes the backup boot sector in that last sector; ntfsfix
// (ntfsprogs/ntfsfix.c, try_alternate_boot) reads it there when the boot
// sector is bad and rewrites the boot sector from it.
func findNTFSBackup(d *Dev) []Signature {
	for _, ss := range sectorSizes(d) {
		n := d.Size / ss
		for _, s := range []int64{n - 1, n / 2, (n + 1) / 2} {
			off := s * ss
			if s < 1 || !ntfsBootAt(d, off, ss, n) {
				continue
			}
			where := "the last sector"
			if s != n-1 {
				where = "the middle sector"
			}
			return backupSig("ntfs", Filesystem, off+3, fmt.Sprintf("an NTFS filesystem (its backup boot sector, in %s; ntfsfix restores the boot sector from it)", where))
		}
	}
	return nil
}

// ntfsBootAt says whether an NTFS boot sector for ss-byte sectors, of a
// volume that fits in n sectors, lies at off (the checks of ntfs-3g's
// ntfs_boot_sector_is_ntfs that random bytes could pass least).
func ntfsBootAt(d *Dev, off, ss, n int64) bool {
	b := d.At(off, 512)
	if b == nil || string(b[3:11]) != "NTFS    " || b[510] != 0x55 || b[511] != 0xaa {
		return false
	}
	spc := b[13]
	sectors := int64(le32(b[0x28:])) | int64(le32(b[0x2c:]))<<32
	return int64(le16(b[11:])) == ss && (bits.OnesCount8(spc) == 1 && spc <= 128 || spc >= 240 && spc <= 253) &&
		le16(b[14:]) == 0 && sectors > 0 && sectors <= n
}

func fat32Backup() Backup {
	return Backup{
		Name:  "FAT32",
		Types: []string{"vfat"},
		Tool:  "fsck.fat",
		Find:  findFAT32Backup,
	}
}

// findFAT32Backup: a FAT32 boot sector names in BPB_BkBootSec (byte 0x32)
// the reserved sector that holds its copy (Microsoft's FAT specification;
// dosfstools' mkfs.fat chooses 6 unless too few sectors are reserved).
// fsck.fat compares the two and copies the backup over the original on
// request (src/boot.c, check_backup_boot).
func findFAT32Backup(d *Dev) []Signature {
	for _, ss := range []int64{512, 1024, 2048, 4096} {
		for s := int64(1); s <= 15; s++ {
			off := s * ss
			b := d.At(off, 512)
			if b == nil || !validBPB(b) || int64(le16(b[11:])) != ss || int64(le16(b[0x32:])) != s {
				continue
			}
			// FAT32: no 16-bit FAT length, a 32-bit one; and the marks of a
			// boot sector (the type string, or a jump and 0x55AA).
			typed := string(b[0x52:0x5a]) == "FAT32   "
			marked := (b[0] == 0xeb || b[0] == 0xe9) && b[510] == 0x55 && b[511] == 0xaa
			if le16(b[0x16:]) != 0 || le32(b[0x24:]) == 0 || !typed && !marked {
				continue
			}
			return backupSig("vfat", Filesystem, off, fmt.Sprintf("a FAT32 filesystem (its backup boot sector, sector %d of %d bytes; fsck.fat copies it back over the boot sector)", s, ss))
		}
	}
	return nil
}

func exfatBackup() Backup {
	return Backup{
		Name:  "exFAT",
		Types: []string{"exfat"},
		Tool:  "fsck.exfat",
		Find:  findExfatBackup,
	}
}

// findExfatBackup: exFAT keeps a copy of its 12-sector boot region in
// sectors 12 to 23 (Microsoft's exFAT specification, 3.1); fsck.exfat
// reads it for each sector size when the main one is corrupt and restores
// it (fsck/fsck.c, exfat_boot_region_check).
func findExfatBackup(d *Dev) []Signature {
	for shift := 9; shift <= 12; shift++ {
		off := int64(12) << shift
		b := d.At(off, 512)
		if b == nil || string(b[3:11]) != "EXFAT   " || int(b[108]) != shift || int(b[109]) > 25-shift ||
			(b[110] != 1 && b[110] != 2) || b[510] != 0x55 || b[511] != 0xaa {
			continue
		}
		return backupSig("exfat", Filesystem, off+3, fmt.Sprintf("an exFAT filesystem (its backup boot region, from sector 12 of %d bytes; fsck.exfat restores the boot region from it)", 1<<shift))
	}
	return nil
}

func jfsBackup() Backup {
	return Backup{
		Name:  "JFS",
		Types: []string{"jfs"},
		Tool:  "fsck.jfs",
		Find:  findJFSBackup,
	}
}

// findJFSBackup: JFS writes its superblock at 32 KiB (SUPER1_OFF) and a
// secondary copy at 60 KiB (SUPER2_OFF: after the aggregate inode map
// and the first inode extent; jfsutils' include/jfs_filsys.h), which
// fsck.jfs uses when the primary is bad.
func findJFSBackup(d *Dev) []Signature {
	const off = 60 << 10
	sb := d.At(off, 32)
	if sb == nil || string(sb[:4]) != "JFS1" {
		return nil
	}
	version, bsize, l2bsize := le32(sb[4:]), le32(sb[16:]), le16(sb[20:])
	if version < 1 || version > 2 || bsize < 512 || bsize > 4096 || bsize != 1<<l2bsize {
		return nil
	}
	return backupSig("jfs", Filesystem, off, "a JFS filesystem (its secondary superblock, at 60 KiB; fsck.jfs uses it when the primary is bad)")
}

func ocfs2Backup() Backup {
	return Backup{
		Name:  "OCFS2",
		Types: []string{"ocfs2"},
		Tool:  "fsck.ocfs2 -r",
		Find:  findOCFS2Backup,
	}
}

// findOCFS2Backup: OCFS2 (with the backup-super feature, mkfs.ocfs2's
// default) copies its superblock to 1 GiB and every fourfold place up to
// 1 TiB (OCFS2_BACKUP_SB_START, OCFS2_MAX_BACKUP_SUPERBLOCKS: ocfs2-tools'
// include/ocfs2-kernel/ocfs2_fs.h); fsck.ocfs2 -r N reads copy N. A copy
// is an ocfs2_dinode: "OCFSV2" at 0, its block number at 0x50, the
// superblock's s_blocksize_bits at 0xC0+0x38.
func findOCFS2Backup(d *Dev) []Signature {
	for i, off := 0, int64(1)<<30; i < 6; i, off = i+1, off<<2 {
		if off+512 > d.Size {
			break
		}
		if !d.Has(off, "OCFSV2") {
			continue
		}
		b := d.U32LE(off + 0xC0 + 0x38)
		if b < 9 || b > 12 || d.U64LE(off+0x50) != uint64(off)>>b {
			continue
		}
		return backupSig("ocfs2", Filesystem, off, fmt.Sprintf("an OCFS2 filesystem (its backup superblock %d, at %d GiB; fsck.ocfs2 -r %d reads it)", i+1, off>>30, i+1))
	}
	return nil
}
