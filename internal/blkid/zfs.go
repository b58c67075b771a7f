package blkid

import "encoding/binary"

// zfsProbes are ZFS pool members.
//
// Format: OpenZFS's include/sys/vdev_impl.h and uberblock_impl.h (the
// "ZFS On-Disk Specification"): four 256 KiB labels, two at the start and
// two at the 256 KiB-aligned end, each with its configuration (an XDR
// nvlist, 16 KiB in) and an array of 1 KiB uberblocks from 128 KiB in
// whose magic is 0x00bab10c in the pool's byte order. Where libblkid
// looks: zfs.c, which up to 2.40 counted uberblocks and since 2.41 reads
// the nvlist instead (zfs_nvlist.go); both are looked for here.
func zfsProbes() []Probe {
	return []Probe{{Type: "zfs_member", Usage: Filesystem, Find: findZFS}}
}

const (
	zfsLabelSize  = 256 << 10
	zfsUberMagic  = 0x00bab10c
	zfsUberOffset = 128 << 10
	zfsUberSize   = 1 << 10
)

// findZFS reports every label holding at least one uberblock, at the
// offset of its last uberblock (where blkid puts SBMAGIC_OFFSET). libblkid
// wants four uberblocks over all labels before it believes any; a single
// surviving uberblock is still a pool somebody may want back, so one is
// enough here.
func findZFS(d *Dev) []Signature {
	var found []Signature
	for _, off := range zfsLabels(d) {
		if zfsLabelNvlist(d, off+zfsNvlistOffset) {
			found = append(found, Signature{Type: "zfs_member", Usage: Filesystem, Offset: off + zfsNvlistOffset, What: "a ZFS pool member (vdev label configuration)"})
		}
		if last := zfsLastUberblock(d, off); last >= 0 {
			found = append(found, Signature{Type: "zfs_member", Usage: Filesystem, Offset: last, What: "a ZFS pool member (vdev label)"})
		}
	}
	return found
}

// zfsLabels are the offsets of the four labels, leaving out the end ones
// on a device too small for them to lie apart from the start's.
func zfsLabels(d *Dev) []int64 {
	align := d.Size % zfsLabelSize
	var out []int64
	for i, off := range []int64{0, zfsLabelSize, d.Size - 2*zfsLabelSize - align, d.Size - zfsLabelSize - align} {
		if off >= 0 && (i < 2 || off >= 2*zfsLabelSize) {
			out = append(out, off)
		}
	}
	return out
}

// zfsLastUberblock is the offset of the last uberblock in the label at
// off, or -1 when it has none.
func zfsLastUberblock(d *Dev, off int64) int64 {
	if d.At(off+zfsLabelSize-1, 1) == nil {
		return -1 // the label does not fit on the device
	}
	last := int64(-1)
	// Each uberblock's magic alone (8 bytes of each KiB), not the 128 KiB
	// array: the look is made on every device, most of which have none.
	for i := int64(zfsUberOffset); i < zfsLabelSize; i += zfsUberSize {
		if p := d.At(off+i, 8); p != nil && (binary.LittleEndian.Uint64(p) == zfsUberMagic || binary.BigEndian.Uint64(p) == zfsUberMagic) {
			last = off + i
		}
	}
	return last
}
