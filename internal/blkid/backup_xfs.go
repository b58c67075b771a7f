package blkid

import "fmt"

// XFS writes a secondary superblock at the start of every allocation group
// (AG). Where AG 1 starts is the AG size, which the primary recorded and
// mkfs.xfs chose from the device's size: xfsprogs' calc_default_ag_geometry
// (libxfs/topology.c; 4 AGs on a single disk of 128 MiB to 4 TiB, more on
// striped storage, 1 TiB AGs from 4 TiB or 32 TiB on). xfs_repair
// (repair/sb.c, find_secondary_sb) first tries AG 1 of that default
// geometry for 4 KiB blocks, then reads the whole device from 16 MiB on
// for any superblock; this looks where the defaults (for every block size)
// and `mkfs.xfs -d agcount=N` put AGs 1 to 3, and believes a superblock
// there only when its own geometry places it there. Layout: the kernel's
// fs/xfs/libxfs/xfs_format.h (struct xfs_dsb, big-endian).

const (
	xfsAGMaxBytes = 1 << 40 // XFS_AG_MAX_BYTES
	xfsAGMinBytes = 1 << 24 // XFS_AG_MIN_BYTES
)

func xfsBackup() Backup {
	return Backup{
		Name:  "XFS",
		Types: []string{"xfs"},
		Tool:  "xfs_repair",
		Find:  findXFSBackup,
	}
}

// xfsDefaultAGBlocks is mkfs.xfs's default AG size in blocks for a data
// section of dblocks blocks of 2^blocklog bytes.
func xfsDefaultAGBlocks(blocklog uint, dblocks int64, multidisk bool) int64 {
	tb := func(n int64) int64 { return n << (40 - blocklog) }
	mb := func(n int64) int64 { return n << (20 - blocklog) }
	gb := func(n int64) int64 { return n << (30 - blocklog) }
	maxBlocks := int64(xfsAGMaxBytes-1) >> blocklog // XFS_AG_MAX_BLOCKS
	if dblocks >= tb(32) || !multidisk && dblocks >= tb(4) {
		return maxBlocks
	}
	shift := 2 // XFS_NOMULTIDISK_AGLOG
	if multidisk || dblocks < mb(128) {
		shift = 5 // XFS_MULTIDISK_AGLOG, less for smaller devices
		for _, under := range []bool{dblocks <= gb(512), dblocks <= gb(8), dblocks < mb(128), dblocks < mb(64), dblocks < mb(32)} {
			if under {
				shift--
			}
		}
	}
	blocks := dblocks >> shift
	if dblocks&(1<<shift-1) != 0 && blocks < maxBlocks {
		blocks++
	}
	return blocks
}

// xfsCandidates are the AG sizes in bytes to try, most likely first, and
// how many AGs of each are looked at: mkfs.xfs's defaults (AGs 1 to 3,
// in case the first secondaries went with the primary), then `-d
// agcount=N` for the counts people choose (AG 1).
func xfsCandidates(size int64) (ags []int64, depth []int64) {
	seen := map[int64]bool{}
	add := func(ag, n int64) {
		if ag >= xfsAGMinBytes && ag < size && !seen[ag] {
			seen[ag] = true
			ags, depth = append(ags, ag), append(depth, n)
		}
	}
	for _, blocklog := range []uint{12, 9, 10, 11, 13, 14, 15, 16} {
		for _, multi := range []bool{false, true} {
			add(xfsDefaultAGBlocks(blocklog, size>>blocklog, multi)<<blocklog, 3)
		}
	}
	dblocks := size >> 12
	for _, n := range []int64{2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32, 64} {
		add((dblocks/n+min(dblocks%n, 1))<<12, 1)
	}
	return ags, depth
}

func findXFSBackup(d *Dev) []Signature {
	ags, depth := xfsCandidates(d.Size)
	for i, ag := range ags {
		for agno := int64(1); agno <= depth[i] && agno*ag+512 <= d.Size; agno++ {
			if xfsSecondaryAt(d, agno*ag, agno) {
				return backupSig("xfs", Filesystem, agno*ag, fmt.Sprintf("an XFS filesystem (the secondary superblock of its allocation group %d; xfs_repair finds it)", agno))
			}
		}
	}
	return nil
}

// xfsSecondaryAt says whether a superblock whose geometry puts AG agno at
// off lies there (the checks of xfs_repair's verify_sb that random bytes
// could pass least).
func xfsSecondaryAt(d *Dev, off, agno int64) bool {
	sb := d.At(off, 128)
	if sb == nil || string(sb[:4]) != "XFSB" {
		return false
	}
	blocksize, blocklog := be32(sb[4:]), uint(sb[120])
	agblocks, agcount := int64(be32(sb[84:])), int64(be32(sb[88:]))
	sectsize, sectlog := be16(sb[102:]), uint(sb[121])
	version := be16(sb[100:]) & 0xf
	return blocklog >= 9 && blocklog <= 16 && blocksize == 1<<blocklog &&
		sectlog >= 9 && sectlog <= 15 && sectsize == 1<<sectlog &&
		version >= 1 && version <= 5 &&
		agno < agcount && agblocks > 0 && agno*agblocks<<blocklog == off
}
