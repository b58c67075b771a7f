package blkid

// UDF and HFS. UDF: ECMA-167 (volume recognition sequence from 32 KiB, one
// descriptor per max(block, 2048) bytes; anchor volume descriptor pointer,
// tag identifier 2, at block 256, at the last block minus 256 and at the
// last block) and OSTA's UDF 2.60. HFS: Apple's "Inside Macintosh: Files"
// (master directory block at 1 KiB, signature "BD") and Technical Note
// TN1150 (HFS Plus volume header at 1 KiB, "H+" or "HX", or embedded in an
// HFS wrapper). Where libblkid looks: its udf.c and hfs.c.

var udfVSDs = []string{"BEA01", "BOOT2", "CD001", "CDW02", "NSR02", "NSR03", "TEA01"}

// udfProbe: libblkid reports the first volume structure descriptor's magic
// at 32 KiB + 1 once the sequence holds an NSR descriptor or an anchor is
// found. The anchors alone are enough here (the red team erases the start).
func udfProbe() Probe {
	p := Probe{Type: "udf", Usage: Filesystem}
	p.Find = func(d *Dev) []Signature {
		var sigs []Signature
		if first := udfVSDAt(d, 0x8000+1); first != "" && (udfHasNSR(d) || udfAnchor(d) >= 0) {
			sigs = append(sigs, found(p, "a UDF filesystem", 0x8000+1)...)
		}
		if off := udfAnchor(d); off >= 0 {
			sigs = append(sigs, found(p, "a UDF filesystem (anchor volume descriptor)", off)...)
		}
		return sigs
	}
	return p
}

func udfVSDAt(d *Dev, off int64) string {
	b := d.At(off, 5)
	for _, m := range udfVSDs {
		if b != nil && string(b) == m {
			return m
		}
	}
	return ""
}

// udfHasNSR walks the volume recognition sequence at each descriptor
// length (2048 for blocks up to 2 KiB, 4096 for 4 KiB blocks).
func udfHasNSR(d *Dev) bool {
	for _, step := range []int64{2048, 4096} {
		for i := int64(0); i < 64; i++ {
			vsd := udfVSDAt(d, 0x8000+i*step+1)
			if vsd == "NSR02" || vsd == "NSR03" {
				return true
			}
			if vsd == "" {
				break // the sequence ends at the first unknown descriptor
			}
		}
	}
	return false
}

// udfAnchor returns the offset of an anchor volume descriptor pointer
// (a descriptor tag with identifier 2 that records its own location) at
// block 256, 512, last-256 or last for 512..4096-byte blocks, or -1.
func udfAnchor(d *Dev) int64 {
	for _, bs := range []int64{512, 1024, 2048, 4096} {
		last := d.Size/bs - 1
		for _, blk := range []int64{256, 512, last - 256, last} {
			if blk <= 0 {
				continue
			}
			tag := d.At(blk*bs, 16)
			if tag == nil || le16(tag) != 2 || int64(le32(tag[12:])) != blk {
				continue
			}
			if udfTagChecksum(tag) {
				return blk * bs
			}
		}
	}
	return -1
}

// udfTagChecksum: byte 4 of a descriptor tag is the sum of its other 15
// bytes, modulo 256 (ECMA-167 3/7.2.3).
func udfTagChecksum(tag []byte) bool {
	var sum byte
	for i, b := range tag[:16] {
		if i != 4 {
			sum += b
		}
	}
	return sum == tag[4]
}

// hfsProbes: "BD" at 1 KiB is HFS unless it wraps an HFS+ volume (the
// embedded signature at byte 0x7c); "H+" or "HX" there is HFS+.
func hfsProbes() []Probe {
	hfsplus := Probe{Type: "hfsplus", Usage: Filesystem}
	hfsplus.Find = func(d *Dev) []Signature {
		h := d.At(1024, 0x80)
		if h == nil {
			return nil
		}
		switch string(h[:2]) {
		case "BD":
			if e := string(h[0x7c:0x7e]); (e == "H+" || e == "HX") && hfsAllocBlock(h) {
				return found(hfsplus, "an HFS+ filesystem (in an HFS wrapper)", 1024)
			}
		case "H+", "HX":
			// version 4 (H+) or 5 (HX); the allocation block size at byte 40
			// is a power of two of at least 512.
			v, bs := be16(h[2:]), be32(h[40:])
			if (v == 4 || v == 5) && bs >= 512 && bs&(bs-1) == 0 {
				return found(hfsplus, "an HFS+ filesystem", 1024)
			}
		}
		return nil
	}
	hfs := Probe{Type: "hfs", Usage: Filesystem}
	hfs.Find = func(d *Dev) []Signature {
		h := d.At(1024, 0x80)
		if h == nil || string(h[:2]) != "BD" {
			return nil
		}
		if e := string(h[0x7c:0x7e]); e == "H+" || e == "HX" || !hfsAllocBlock(h) {
			return nil
		}
		return found(hfs, "an HFS filesystem", 1024)
	}
	return []Probe{hfsplus, hfs}
}

// hfsAllocBlock: the master directory block's allocation block size
// (byte 20) is a non-zero multiple of 512.
func hfsAllocBlock(mdb []byte) bool {
	n := be32(mdb[20:])
	return n != 0 && n%512 == 0
}
