package blkid

import (
	"fmt"
	"math/bits"
)

// The ext family keeps a copy of its superblock at the start of block
// group 1 and, with sparse_super (mke2fs's default), of groups 3, 5, 7, 9,
// 25, 27, 49 and every other power of 3, 5 and 7. Where group 1 starts
// depends on the geometry, which only the wiped primary recorded: the
// block size, the blocks per group (8 × the block size by default, at
// most 65528; any multiple of 8 with `mke2fs -g`; clusters per group ×
// the cluster size with bigalloc) and the first data block (1 with 1 KiB
// blocks and no bigalloc). e2fsck's own search (e2fsck/util.c,
// get_backup_sb) tries the default geometry for block sizes 1 to 64 KiB,
// group 1 and then the sparse groups; `e2fsck -b N -B size` reads a copy
// the user names. Layout: lib/ext2fs/initialize.c (blocks per group,
// bigalloc), lib/ext2fs/closefs.c (each copy records its group in
// s_block_group_nr), the kernel's fs/ext4/ext4.h.

// extGeometry is one layout a filesystem may have been made with, and the
// groups whose copies are looked at.
type extGeometry struct {
	bs, bpg, fdb int64 // block size, blocks per group, first data block
	groups       []int64
}

// extSparseGroups are the first groups sparse_super keeps copies in: a
// copy of group 1 may have been wiped along with the primary.
var extSparseGroups = []int64{1, 3, 5, 7, 9, 25, 27, 49}

// extMaxBlocksPerGroup is EXT2_MAX_BLOCKS_PER_GROUP without bigalloc, and
// EXT2_MAX_CLUSTERS_PER_GROUP with it.
const extMaxBlocksPerGroup = 1<<16 - 8

// extGeometries lists the layouts to try, most likely first: mke2fs's
// default for every block size e2fsck tries (1, 2 and 4 KiB blocks at
// groups 1 to 49, the rarer larger blocks at groups 1 and 3); then group 1
// of `-g` with a power of two, and of bigalloc with every cluster size
// mke2fs allows with 4 KiB blocks (2 blocks to 512 MiB) and its default
// (16 blocks) with 1 and 2 KiB blocks.
func extGeometries() []extGeometry {
	var gs []extGeometry
	fdbOf := func(bs int64) int64 {
		if bs == 1024 {
			return 1
		}
		return 0
	}
	for _, bs := range []int64{4096, 1024, 2048, 65536, 8192, 16384, 32768} {
		groups := extSparseGroups
		if bs > 4096 {
			groups = groups[:2]
		}
		gs = append(gs, extGeometry{bs: bs, bpg: min(8*bs, extMaxBlocksPerGroup), fdb: fdbOf(bs), groups: groups})
	}
	for _, bs := range []int64{4096, 1024, 2048} {
		for bpg := 4 * bs; bpg >= 256; bpg /= 2 {
			gs = append(gs, extGeometry{bs: bs, bpg: bpg, fdb: fdbOf(bs), groups: extSparseGroups[:1]})
		}
	}
	bigalloc := func(bs, cluster int64) {
		cpg := min(8*bs, extMaxBlocksPerGroup)
		if bits.TrailingZeros64(uint64(cluster))-10+15 >= 32 {
			cpg = min(8*(bs-1), extMaxBlocksPerGroup)
		}
		if bpg := cpg * (cluster / bs); bpg < 1<<32 {
			gs = append(gs, extGeometry{bs: bs, bpg: bpg, groups: extSparseGroups[:1]})
		}
	}
	bigalloc(4096, 16*4096)
	for cluster := int64(2 * 4096); cluster <= 1<<29; cluster *= 2 {
		if cluster != 16*4096 {
			bigalloc(4096, cluster)
		}
	}
	bigalloc(1024, 16*1024)
	bigalloc(2048, 16*2048)
	return gs
}

func extBackup() Backup {
	return Backup{
		Name:  "ext2, ext3, ext4",
		Types: []string{"ext4dev", "ext4", "ext3", "ext2"},
		Tool:  "e2fsck -b",
		Find:  findExtBackup,
	}
}

// findExtBackup returns the first superblock copy found.
func findExtBackup(d *Dev) []Signature {
	for _, g := range extGeometries() {
		for _, grp := range g.groups {
			blk := grp*g.bpg + g.fdb
			off := blk * g.bs
			if off+1024 > d.Size {
				break
			}
			typ := extBackupAt(d, off, g, grp)
			if typ == "" {
				continue
			}
			for _, k := range extKinds {
				if k.typ == typ {
					what := fmt.Sprintf("%s (the backup superblock of its block group %d; e2fsck -b %d -B %d reads it)", k.what, grp, blk, g.bs)
					return backupSig(typ, k.usage, off+0x38, what)
				}
			}
		}
	}
	return nil
}

// extBackupAt names the ext superblock copy at off if it is group grp's
// of geometry g: its block size, blocks per group, first data block and
// group number all say it lies there.
func extBackupAt(d *Dev, off int64, g extGeometry, grp int64) string {
	typ := extType(d, off)
	if typ == "" || typ == "jbd" {
		return ""
	}
	if d.U32LE(off+0x18) != uint32(bits.TrailingZeros64(uint64(g.bs))-10) ||
		int64(d.U32LE(off+0x20)) != g.bpg || int64(d.U32LE(off+0x14)) != g.fdb {
		return ""
	}
	// s_block_group_nr: every copy e2fsprogs writes records its group;
	// a revision 0 filesystem may leave it 0.
	if nr := int64(d.U16LE(off + 0x5A)); nr != grp && (nr != 0 || d.U32LE(off+76) != 0) {
		return ""
	}
	return typ
}
