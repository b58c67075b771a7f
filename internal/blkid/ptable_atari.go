package blkid

// findAtari is an Atari AHDI root sector, which has no magic: libblkid
// (like the kernel) believes it when the disk size it records is sane and
// at least one of its four primary entries is an active partition with an
// alphanumeric three-letter id that lies inside the disk. blkid reports
// the offset of that entry. libblkid probes it only with 512-byte sectors
// (a regular file always has them); it is looked for on devices of any
// sector size here, counting in 512-byte sectors as the format does.
func findAtari(d *Dev) []Signature {
	if d.Size/512 > 1<<31-1 {
		return nil
	}
	rs := d.At(0, 512)
	if rs == nil {
		return nil
	}
	be32 := func(o int) uint32 {
		return uint32(rs[o])<<24 | uint32(rs[o+1])<<16 | uint32(rs[o+2])<<8 | uint32(rs[o+3])
	}
	const hdSize, parts, bsl = 0x1C2, 0x1C6, 0x1F6
	max := be32(hdSize)
	if max < 2 || int64(max) > d.Size/512 {
		return nil
	}
	if start, n := be32(bsl), be32(bsl+4); (start != 0 || n != 0) && !atariDimension(start, n, max) {
		return nil
	}
	for i := 0; i < 4; i++ {
		p := parts + 12*i
		if rs[p]&1 == 0 || !atariAlnum(rs[p+1]) || !atariAlnum(rs[p+2]) || !atariAlnum(rs[p+3]) {
			continue
		}
		if atariDimension(be32(p+4), be32(p+8), max) {
			return []Signature{{Type: "atari", Usage: PartitionTable, Offset: int64(p), What: "an Atari (AHDI) partition table"}}
		}
	}
	return nil
}

// atariDimension says whether start and size (sectors) lie inside a disk
// of max sectors, neither being zero.
func atariDimension(start, size, max uint32) bool {
	end := uint64(start) + uint64(size)
	return start > 0 && start <= max && size > 0 && size <= max && end <= uint64(max)
}

// atariAlnum is the kernel's isalnum over Latin-1, which the Atari parser
// uses: ASCII letters and digits and the Latin-1 letters (0xC0-0xFF but
// 0xD7 and 0xF7).
func atariAlnum(c byte) bool {
	switch {
	case c >= '0' && c <= '9', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		return true
	case c >= 0xC0:
		return c != 0xD7 && c != 0xF7
	}
	return false
}
