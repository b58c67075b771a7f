package blkid

// findDASD is the volume label of an IBM Z DASD (ECKD) disk, which sits
// in its third block: the compatible disk layout's "VOL1" four bytes in
// (after the record key), or the Linux disk layout's "LNX1" (or CMS's
// "CMS1") at the start, all in EBCDIC.
//
// Format: s390-tools' fdasd/vtoc.h (volume_label_t, the CDL and LDL
// layouts) and the kernel's block/partitions/ibm.c. Where libblkid looks:
// partitions/dasd.c (util-linux 2.43), for the device's own block size,
// then 4096, 2048, 1024 and 512, reporting the label's magic. libblkid
// wants a format-4 DSCB after a VOL1 label before it lists partitions;
// the label alone is the table here.
func findDASD(d *Dev) []Signature {
	const (
		vol1 = "\xe5\xd6\xd3\xf1" // VOL1
		lnx1 = "\xd3\xd5\xe7\xf1" // LNX1
		cms1 = "\xc3\xd4\xe2\xf1" // CMS1
	)
	var found []Signature
	seen := map[int64]bool{}
	for _, bs := range []int64{d.SectorSize, 4096, 2048, 1024, 512} {
		if seen[bs] {
			continue
		}
		seen[bs] = true
		at := 2 * bs
		switch {
		case d.Has(at+4, vol1):
			found = append(found, Signature{Type: "dasd", Usage: PartitionTable, Offset: at + 4,
				What: "a DASD partition table (compatible disk layout, VOL1)"})
		case d.Has(at, lnx1):
			found = append(found, Signature{Type: "dasd", Usage: PartitionTable, Offset: at,
				What: "a DASD partition table (Linux disk layout, LNX1)"})
		case d.Has(at, cms1):
			found = append(found, Signature{Type: "dasd", Usage: PartitionTable, Offset: at,
				What: "a DASD partition table (CMS disk layout, CMS1)"})
		}
	}
	return found
}
