package handmade

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// recentHeaders are the types libblkid learned after 2.38 (Debian 12's),
// built with the checksums and the consistency libblkid's current probers
// check, so that a current blkid recognises them as the real thing. Each
// says, in Since, the util-linux release that first reports it.
func recentHeaders() []Header {
	var hs []Header
	hs = append(hs, bcachefsHeaders()...)
	hs = append(hs,
		Header{Name: "cs-fvault2", Type: "cs_fvault2", Since: "2.39", Libblkid: true,
			Source: "libyal's libfvde, FileVault Drive Encryption (FVDE) format: Core Storage physical volume header (util-linux libblkid/src/superblocks/cs_fvault2.c)",
			Build:  func(int64) []Patch { return at(0, fvault2Header()) }},
		Header{Name: "scoutfs-meta", Type: "scoutfs_meta", Since: "2.42", Libblkid: true,
			Source: "scoutfs kmod/src/format.h, struct scoutfs_super_block at 64 KiB, flag IS_META_BDEV (util-linux libblkid/src/superblocks/scoutfs.c)",
			Build:  func(int64) []Patch { return at(64<<10, scoutfsSuper(true)) }},
		Header{Name: "scoutfs-data", Type: "scoutfs_data", Since: "2.42", Libblkid: true,
			Source: "scoutfs kmod/src/format.h, struct scoutfs_super_block at 64 KiB, no IS_META_BDEV flag (util-linux libblkid/src/superblocks/scoutfs.c)",
			Build:  func(int64) []Patch { return at(64<<10, scoutfsSuper(false)) }},
	)
	hs = append(hs, dasdHeaders()...)
	hs = append(hs, zfsNvlistHeaders()...)
	return hs
}

// crc32cRaw is the CRC-32C update without the customary inversions, as
// util-linux's lib/crc32c.c computes it: callers pass the seed.
func crc32cRaw(seed uint32, p []byte) uint32 {
	return ^crc32.Update(^seed, crc32.MakeTable(crc32.Castagnoli), p)
}

const bcachefsMagic = "\xc6\x85\x73\xf6\x66\xce\x90\xa9\xd9\x6a\x60\xcf\x80\x3d\xf7\xef"

// bcachefsSuper is a struct bch_sb (bcachefs_format.h) that says it lies
// in sector sect, one device of one, no checksum (type 0 in flags[0]),
// with a layout that lists copies.
func bcachefsSuper(sect uint64, copies []uint64) []byte {
	sb := sector(1024)
	le.PutUint16(sb[16:], 1<<10|25) // version 1.25
	le.PutUint16(sb[18:], 1<<10)    // version_min
	copy(sb[24:], bcachefsMagic)
	copy(sb[40:], "0123456789abcdef") // uuid
	copy(sb[56:], "fedcba9876543210") // user_uuid
	copy(sb[72:], "probe")            // label
	le.PutUint64(sb[104:], sect)      // offset: this copy's sector
	le.PutUint64(sb[112:], 1)         // seq
	le.PutUint16(sb[120:], 8)         // block_size, sectors
	sb[122], sb[123] = 0, 1           // dev_idx, nr_devices
	le.PutUint32(sb[124:], 0)         // u64s: no fields
	copy(sb[240:], bcachefsLayout(copies))
	return sb
}

// bcachefsLayout is a struct bch_sb_layout listing copies (sectors).
func bcachefsLayout(copies []uint64) []byte {
	l := sector(512)
	copy(l, bcachefsMagic)
	l[17] = 7 // sb_max_size_bits: 64 KiB
	l[18] = byte(len(copies))
	for i, c := range copies {
		le.PutUint64(l[24+8*i:], c)
	}
	return l
}

func bcachefsHeaders() []Header {
	src := "bcachefs fs/bcachefs/bcachefs_format.h, struct bch_sb and bch_sb_layout (util-linux libblkid/src/superblocks/bcache.c)"
	const sb1, sb2 = 8, 4096 // 4 KiB and 2 MiB, in sectors
	end := func(size int64) uint64 { return uint64(size-1<<20) / 512 }
	return []Header{
		{Name: "bcachefs", Type: "bcachefs", Since: "2.39", Libblkid: true, Source: src, Build: func(size int64) []Patch {
			copies := []uint64{sb1, sb2, end(size)}
			ps := at(7*512, bcachefsLayout(copies))
			for _, c := range copies {
				ps = append(ps, Patch{Off: int64(c) * 512, Data: bcachefsSuper(c, copies)})
			}
			return ps
		}},
		{Name: "bcachefs-2mib-copy-only", Type: "bcachefs", Since: "2.40", Libblkid: true, Source: src + "; the first superblock and the layout sector gone",
			Build: func(size int64) []Patch { return at(sb2*512, bcachefsSuper(sb2, []uint64{sb1, sb2})) }},
		{Name: "bcachefs-end-copy-only", Type: "bcachefs", Since: "2.40", Libblkid: true, Source: src + "; only the copy 1 MiB before the end",
			Build: func(size int64) []Patch {
				return at(int64(end(size))*512, bcachefsSuper(end(size), []uint64{end(size)}))
			}},
	}
}

// fvault2Header is a Core Storage physical volume header (version 1,
// block type 0x10, CRC-32C with its seed, AES-XTS, 16-byte key data).
func fvault2Header() []byte {
	h := sector(512)
	le.PutUint16(h[8:], 1)     // version
	le.PutUint16(h[10:], 0x10) // block_type
	le.PutUint64(h[64:], 64<<20)
	copy(h[88:], "CS")
	le.PutUint32(h[90:], 1)    // checksum_algo
	le.PutUint32(h[96:], 4096) // block_size
	le.PutUint32(h[168:], 16)  // key_data_size
	le.PutUint32(h[172:], 2)   // cipher: AES-XTS
	copy(h[304:], "0123456789abcdef")
	le.PutUint32(h[4:], 0xffffffff) // seed
	le.PutUint32(h[0:], crc32cRaw(0xffffffff, h[8:]))
	return h
}

// scoutfsSuper is a scoutfs superblock in its 4 KiB block, CRC-32C of the
// block after the crc field.
func scoutfsSuper(meta bool) []byte {
	b := sector(4096)
	le.PutUint32(b[4:], 0x103c428b)   // magic
	le.PutUint64(b[8:], 0x1122334455) // fsid
	le.PutUint64(b[16:], 1)           // seq
	le.PutUint64(b[24:], 16)          // blkno: 64 KiB in 4 KiB blocks
	le.PutUint64(b[32:], 1)           // id
	le.PutUint64(b[40:], 2)           // fmt_vers
	if meta {
		le.PutUint64(b[48:], 1) // flags: IS_META_BDEV
	}
	copy(b[56:], "0123456789abcdef")
	le.PutUint32(b, crc32cRaw(0xffffffff, b[4:]))
	return b
}

// ebcdic encodes the upper-case letters, digits, '.' and ' ' of s.
func ebcdic(s string) []byte {
	out := make([]byte, len(s))
	for i, c := range []byte(s) {
		switch {
		case c >= 'A' && c <= 'I':
			out[i] = 0xC1 + c - 'A'
		case c >= 'J' && c <= 'R':
			out[i] = 0xD1 + c - 'J'
		case c >= 'S' && c <= 'Z':
			out[i] = 0xE2 + c - 'S'
		case c >= '0' && c <= '9':
			out[i] = 0xF0 + c - '0'
		case c == '.':
			out[i] = 0x4B
		default:
			out[i] = 0x40
		}
	}
	return out
}

func dasdHeaders() []Header {
	src := "s390-tools fdasd vtoc.h (volume label in block 2; CDL: VOL1, format-4 and format-1 DSCBs; LDL: LNX1/CMS1) and Linux block/partitions/ibm.c (util-linux libblkid/src/partitions/dasd.c)"
	var hs []Header
	for _, bs := range []int64{512, 1024, 2048, 4096} {
		bs := bs
		hs = append(hs,
			Header{Name: fmt.Sprintf("dasd-ldl-lnx1-%d", bs), Type: "dasd", Since: "2.43", Libblkid: true, Source: src,
				Build: func(int64) []Patch { return at(2*bs, dasdLDL("LNX1", bs)) }},
			Header{Name: fmt.Sprintf("dasd-cdl-vol1-%d", bs), Type: "dasd", Since: "2.43", Libblkid: true, Source: src,
				Build: func(int64) []Patch { return dasdCDL(bs) }},
		)
	}
	hs = append(hs, Header{Name: "dasd-ldl-cms1-4096", Type: "dasd", Since: "2.43", Libblkid: true, Source: src,
		Build: func(int64) []Patch { return at(2*4096, dasdLDL("CMS1", 4096)) }})
	return hs
}

// dasdLDL is a Linux disk layout volume label (version 0xf2, with the
// number of formatted blocks).
func dasdLDL(magic string, bs int64) []byte {
	l := sector(88)
	copy(l, ebcdic(magic))
	copy(l[4:], ebcdic("0X0123"))
	l[79] = 0xf2
	binary.BigEndian.PutUint64(l[80:], uint64(32<<20/bs))
	return l
}

// dasdCDL is a compatible disk layout: the VOL1 label in block 2, the
// format-4 DSCB (VTOC header) at the start of track 1, one format-1 DSCB
// after it describing a partition of tracks 2 to 9. A track holds 12 4 KiB
// blocks on a 3390; at smaller block sizes it is taken to hold 12 blocks
// too (libblkid reads the track length off the format-4 DSCB's place).
func dasdCDL(bs int64) []Patch {
	const perTrack = 12
	vol := sector(84)
	copy(vol, ebcdic("VOL1"))     // record key
	copy(vol[4:], ebcdic("VOL1")) // label
	copy(vol[8:], ebcdic("0X0123"))
	f4 := sector(96)
	for i := 0; i < 44; i++ {
		f4[i] = 0x04
	}
	f4[44] = 0xf4
	be.PutUint16(f4[62:], 100) // DS4DSCYL: cylinders
	be.PutUint16(f4[64:], 15)  // DS4DSTRK: tracks per cylinder
	f1 := sector(140)
	copy(f1, ebcdic("LINUX.V0X0123.PART0001.NATIVE                "))
	f1[44] = 0xf1
	be.PutUint16(f1[107:], 0) // DS1EXT1 lower limit: cylinder 0, head 2
	be.PutUint16(f1[109:], 2)
	be.PutUint16(f1[111:], 0) // upper limit: cylinder 0, head 9
	be.PutUint16(f1[113:], 9)
	return []Patch{{Off: 2 * bs, Data: vol}, {Off: perTrack * bs, Data: f4}, {Off: (perTrack + 1) * bs, Data: f1}}
}

// The XDR nvlist of a ZFS label (OpenZFS module/nvpair/nvpair.c).
type nvl struct{ b []byte }

func (n *nvl) u32(v uint32) { n.b = be.AppendUint32(n.b, v) }

func (n *nvl) str(s string) {
	n.u32(uint32(len(s)))
	n.b = append(n.b, s...)
	for len(n.b)%4 != 0 {
		n.b = append(n.b, 0)
	}
}

// pair appends one pair of type typ with value v (already encoded).
func (n *nvl) pair(name string, typ uint32, v []byte) {
	var p nvl
	p.str(name)
	p.u32(typ)
	p.u32(1) // one element
	p.b = append(p.b, v...)
	size := uint32(8 + len(p.b))
	n.u32(size)
	n.u32(size) // decoded size: not checked by readers of labels
	n.b = append(n.b, p.b...)
}

func (n *nvl) u64(name string, v uint64) { n.pair(name, 8, be.AppendUint64(nil, v)) }

func (n *nvl) string(name, v string) {
	var s nvl
	s.str(v)
	n.pair(name, 9, s.b)
}

// list appends an embedded nvlist: its pair's header, then the list's
// version and flags, its pairs and its terminator; the pair's encoded size
// counts the whole embedded list (nvpair.c's nvs_xdr_nvp_size).
func (n *nvl) list(name string, inner func(*nvl)) {
	var p nvl
	p.str(name)
	p.u32(19) // DATA_TYPE_NVLIST
	p.u32(1)
	p.u32(0) // nvl_version
	p.u32(1) // nvl_nvflag: NV_UNIQUE_NAME
	inner(&p)
	p.u32(0)
	p.u32(0)
	size := uint32(8 + len(p.b))
	n.u32(size)
	n.u32(size)
	n.b = append(n.b, p.b...)
}

// zfsLabelConfig is the nvlist a single-disk pool writes 16 KiB into each
// label (vdev_phys_t): the header, then the pool's configuration.
func zfsLabelConfig() []byte {
	n := &nvl{b: []byte{1, 1, 0, 0}} // XDR, little-endian writer
	n.u32(0)                         // nvl_version
	n.u32(1)                         // nvl_nvflag
	n.u64("version", 5000)
	n.string("name", "probe")
	n.u64("state", 1) // exported
	n.u64("txg", 4)
	n.u64("pool_guid", 0x1234567890abcdef)
	n.u64("errata", 0)
	n.string("hostname", "ioprobe")
	n.u64("top_guid", 0x0fedcba987654321)
	n.u64("guid", 0x0fedcba987654321)
	n.u64("vdev_children", 1)
	n.list("vdev_tree", func(v *nvl) {
		v.string("type", "disk")
		v.u64("id", 0)
		v.u64("guid", 0x0fedcba987654321)
		v.string("path", "/dev/probe")
		v.u64("ashift", 12)
		v.u64("asize", 60<<20)
	})
	n.list("features_for_read", func(*nvl) {})
	n.u32(0)
	n.u32(0)
	return n.b
}

func zfsNvlistHeaders() []Header {
	src := "OpenZFS include/sys/vdev_impl.h (vdev_phys_t 16 KiB into each 256 KiB label) and module/nvpair/nvpair.c (XDR nvlist), no uberblocks (util-linux libblkid/src/superblocks/zfs.c)"
	const label = 256 << 10
	size := int64(96<<20 + 100<<10) // not 256 KiB-aligned: the end labels move
	where := []func(int64) int64{
		func(int64) int64 { return 0 },
		func(int64) int64 { return label },
		func(s int64) int64 { return s - 2*label - s%label },
		func(s int64) int64 { return s - label - s%label },
	}
	return []Header{
		{Name: "zfs-nvlist-all-labels", Type: "zfs_member", Since: "2.41", Libblkid: true, Source: src, Size: size,
			Build: func(s int64) []Patch {
				var ps []Patch
				for _, w := range where {
					ps = append(ps, Patch{Off: w(s) + 16<<10, Data: zfsLabelConfig()})
				}
				return ps
			}},
		{Name: "zfs-nvlist-label3-only", Type: "zfs_member", Since: "2.41", Libblkid: true, Source: src, Size: size,
			Build: func(s int64) []Patch { return at(where[3](s)+16<<10, zfsLabelConfig()) }},
	}
}
