package blkid

import "fmt"

// bcache and bcachefs share a superblock place and a magic family.
//
// Formats: bcache's superblock from the kernel's
// include/uapi/linux/bcache.h (struct cache_sb: offset at byte 8, the
// 16-byte magic at 24, at 4 KiB); bcachefs's from its on-disk format
// (fs/bcachefs/bcachefs_format.h: struct bch_sb, whose magic also sits 24
// bytes in; struct bch_sb_layout, the list of superblock copies, kept in
// sector 7 and inside every superblock). Where libblkid looks: bcache.c
// (bcache since 2.24; bcachefs since 2.39 at 4 KiB, since 2.40 also at
// 2 MiB and 1 MiB before the end).

const (
	bcacheMagic   = "\xc6\x85\x73\xf6\x4e\x1a\x45\xca\x82\x65\xf5\x7f\x48\xba\x6d\x81"
	bcachefsMagic = "\xc6\x85\x73\xf6\x66\xce\x90\xa9\xd9\x6a\x60\xcf\x80\x3d\xf7\xef"
	bcacheSB      = 4096 // both superblocks' first copy
	bcacheMagicIn = 24   // the magic's place in either superblock

	bchfsOffsetIn   = 104 // bch_sb.offset: the sector the superblock says it is in
	bchfsDevIdxIn   = 122
	bchfsNrDevsIn   = 123
	bchfsLayoutIn   = 240 // bch_sb.layout
	bchfsLayoutSect = 7   // the layout's own copy (BCH_SB_LAYOUT_SECTOR)
)

// findBcache reports bcache's superblock: the bcache magic at 4 KiB where
// the superblock does not read as an old bcachefs one (bcachefs used
// bcache's magic at first, and libblkid still accepts it as bcachefs).
// A superblock that reads as neither is bcache's: eager.
func findBcache(d *Dev) []Signature {
	if !d.Has(bcacheSB+bcacheMagicIn, bcacheMagic) {
		return nil
	}
	if bchfsSelfDescribing(d, bcacheSB) && d.U64LE(bcacheSB+8) != bcacheSB/512 {
		return nil // findBcachefs names it
	}
	return []Signature{{Type: "bcache", Usage: Other, Offset: bcacheSB + bcacheMagicIn, What: "a bcache backing or cache device"}}
}

// bchfsSelfDescribing says whether the superblock at off has bcachefs's
// own consistency: it names its own sector, and its device index lies
// among its devices (what libblkid's probe_bcachefs checks first).
func bchfsSelfDescribing(d *Dev, off int64) bool {
	n, i := d.U8(off+bchfsNrDevsIn), d.U8(off+bchfsDevIdxIn)
	return d.U64LE(off+bchfsOffsetIn) == uint64(off/512) && n > 0 && i < n
}

// findBcachefs reports every bcachefs superblock: the bcachefs magic at
// 4 KiB, at 2 MiB and 1 MiB before the end (libblkid's places), bcache's
// old magic at 4 KiB in a bcachefs-shaped superblock, and every copy the
// layout (in sector 7, or in any superblock found) lists. Each copy alone
// is a filesystem somebody may recover from.
func findBcachefs(d *Dev) []Signature {
	var found []Signature
	seen := map[int64]bool{}
	var layouts []int64
	add := func(sb int64, what string) {
		if seen[sb] {
			return
		}
		seen[sb] = true
		found = append(found, Signature{Type: "bcachefs", Usage: Filesystem, Offset: sb + bcacheMagicIn, What: what})
		layouts = append(layouts, sb+bchfsLayoutIn)
	}
	for _, sb := range []int64{bcacheSB, 2 << 20, d.Size - 1<<20} {
		if sb >= 0 && d.Has(sb+bcacheMagicIn, bcachefsMagic) {
			add(sb, "a bcachefs filesystem")
		}
	}
	if d.Has(bcacheSB+bcacheMagicIn, bcacheMagic) && bchfsSelfDescribing(d, bcacheSB) {
		add(bcacheSB, "a bcachefs filesystem (an early one, with bcache's magic)")
	}
	if lay := int64(bchfsLayoutSect * 512); d.Has(lay, bcachefsMagic) || d.Has(lay, bcacheMagic) {
		layouts = append(layouts, lay)
	}
	for i := 0; i < len(layouts); i++ {
		for _, sb := range bchfsLayoutCopies(d, layouts[i]) {
			if d.Has(sb+bcacheMagicIn, bcachefsMagic) || d.Has(sb+bcacheMagicIn, bcacheMagic) && bchfsSelfDescribing(d, sb) {
				add(sb, fmt.Sprintf("a bcachefs filesystem (a superblock copy its layout lists at sector %d)", sb/512))
			}
		}
	}
	return found
}

// bchfsLayoutCopies lists the superblock copies (byte offsets) the layout
// at off names: nr_superblocks (byte 18) sectors from byte 24, at most 61.
func bchfsLayoutCopies(d *Dev, off int64) []int64 {
	if !d.Has(off, bcachefsMagic) && !d.Has(off, bcacheMagic) {
		return nil
	}
	n := int64(d.U8(off + 18))
	if n > 61 {
		return nil
	}
	var out []int64
	for i := int64(0); i < n; i++ {
		s := d.U64LE(off + 24 + 8*i)
		if s == 0 || s > uint64(d.Size/512) {
			continue
		}
		out = append(out, int64(s)*512)
	}
	return out
}
