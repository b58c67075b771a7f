package blkid

import (
	"fmt"
	"io"
)

// A disk whose partition table was wiped (`wipefs -a` on a GPT disk
// erases both headers and the protective MBR, and nothing else) still
// holds its partitions' filesystems where the partitions started: `blkid
// -p -O 1048576` and testdisk find them. The first partition almost
// always starts at one of a few places, the only ones looked at:
// PartitionStarts.

// PartitionStarts are the offsets probed as the start of a partition whose
// table is gone: 63 sectors (DOS's cylinder alignment, fdisk before
// util-linux 2.17.1 and Windows XP), then every MiB up to 4 MiB (1 MiB:
// 2048 sectors, what parted, sgdisk, fdisk and Windows have aligned the
// first partition to since 2010; Raspberry Pi OS's images start at
// 4 MiB), then 8 and 16 MiB (tools aligning to a RAID stripe or an erase
// block). Each start costs about ten 64 KiB reads on a blank device.
var PartitionStarts = partitionStarts()

func partitionStarts() []int64 {
	return []int64{63 * 512, 1 << 20, 2 << 20, 3 << 20, 4 << 20, 8 << 20, 16 << 20}
}

// findAtPartitionStarts runs libblkid's superblock probes (not the
// partition tables, not the disk images, not the backup search) at each
// partition start, and returns what the first start that holds anything
// keep keeps (nil: everything) holds, at its offsets on d.
func findAtPartitionStarts(d *Dev, keep func(Signature) bool) []Signature {
	ps := superblockProbes()
	for _, start := range PartitionStarts {
		if start >= d.Size {
			break
		}
		sub := NewDev(io.NewSectionReader(d.r, start, d.Size-start), d.Size-start, d.SectorSize)
		var found []Signature
		for _, s := range runProbes(sub, ps) {
			s.Offset += start
			s.What = fmt.Sprintf("%s at byte %d, where a partition would start (no partition table names it; blkid -p -O %d finds it)", s.What, start, start)
			found = append(found, s)
		}
		if found = kept(found, keep); len(found) > 0 {
			return found
		}
	}
	return nil
}
