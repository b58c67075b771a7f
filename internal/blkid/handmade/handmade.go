// Package handmade builds on-disk headers, byte by byte, from their
// published formats: for every RAID, volume-manager, crypto, swap and
// partition-table type that no Debian package on the test machines can
// create (firmware RAID, LVM1, Stratis, ZFS, BitLocker, the old Unix
// labels) or that the tools here cannot create without kernel support (md
// arrays need the md driver, dm-integrity needs device-mapper). The unit
// tests of internal/blkid write them into memory, the differential test
// (test/blkid_other_test.go) onto loop devices full of random bytes, where
// util-linux's libblkid judges whether they are the real thing.
//
// Each header says where its format comes from. The builders write only
// what a format's reader checks (magic, versions, self-describing offsets,
// checksums); the rest stays whatever was on the device.
package handmade

import (
	"encoding/binary"
	"hash/crc32"
)

// Patch is bytes to write at an offset.
type Patch struct {
	Off  int64
	Data []byte
}

// Header is one hand-built image.
type Header struct {
	Name   string // for the test's name: "md-0.90-be"
	Type   string // the TYPE= or PTTYPE= blkid gives it
	Source string // the published format it follows
	Size   int64  // the device size it is built for (0: 64 MiB)
	// Libblkid is false for headers libblkid deliberately does not report
	// on a whole device (a BSD disklabel, which it only looks for inside
	// a DOS partition): ioprobe refuses them all the same.
	Libblkid bool
	// Since and Until bound the util-linux releases whose libblkid reports
	// the header ("": no bound): a type libblkid learned after Debian 12's
	// 2.38 ("2.39" and later), or a form it stopped believing (ZFS labels
	// with uberblocks and no configuration nvlist, until 2.40).
	Since, Until string
	Build        func(size int64) []Patch
}

// Apply writes ps into buf, an in-memory device.
func Apply(buf []byte, ps []Patch) {
	for _, p := range ps {
		copy(buf[p.Off:], p.Data)
	}
}

var (
	le = binary.LittleEndian
	be = binary.BigEndian
)

func at(off int64, data []byte) []Patch { return []Patch{{Off: off, Data: data}} }

func str(s string) []byte { return []byte(s) }

// sector returns a zeroed buffer of n bytes.
func sector(n int) []byte { return make([]byte, n) }

// Headers is every hand-built image, grouped as internal/blkid's files are.
func Headers() []Header {
	var hs []Header
	hs = append(hs, raidHeaders()...)
	hs = append(hs, volumeHeaders()...)
	hs = append(hs, cryptoHeaders()...)
	hs = append(hs, swapHeaders()...)
	hs = append(hs, zfsHeaders()...)
	hs = append(hs, ptableHeaders()...)
	hs = append(hs, recentHeaders()...)
	return sized(hs)
}

// sized gives the headers that name no device size the default, 64 MiB.
func sized(hs []Header) []Header {
	for i := range hs {
		if hs[i].Size == 0 {
			hs[i].Size = 64 << 20
		}
	}
	return hs
}

// lastSector is the offset of the 512-byte sector back sectors from the
// end (1: the last one).
func lastSector(size, back int64) int64 { return (size/512 - back) * 512 }

const mdSource = "Linux include/uapi/linux/raid/md_p.h (mdp_super_t, struct mdp_superblock_1)"

func raidHeaders() []Header {
	md090 := func(order binary.ByteOrder) func(int64) []Patch {
		return func(size int64) []Patch {
			sb := sector(128)
			order.PutUint32(sb[0:], 0xa92b4efc)
			order.PutUint32(sb[4:], 0)     // major
			order.PutUint32(sb[8:], 90)    // minor
			order.PutUint32(sb[32:], 1024) // size of the array's members, KiB
			order.PutUint32(sb[36:], 1)    // nr_disks
			order.PutUint32(sb[40:], 1)    // raid_disks
			return at(size&^0xffff-0x10000, sb)
		}
	}
	md1 := func(where func(size int64) int64) func(int64) []Patch {
		return func(size int64) []Patch {
			off := where(size)
			sb := sector(256)
			le.PutUint32(sb[0:], 0xa92b4efc)
			le.PutUint32(sb[4:], 1) // major_version
			copy(sb[32:], "handmade:0")
			le.PutUint64(sb[144:], uint64(off)>>9) // super_offset
			return at(off, sb)
		}
	}
	tail := func(back int64, magicAt int, magic []byte) func(int64) []Patch {
		return func(size int64) []Patch {
			s := sector(512)
			copy(s[magicAt:], magic)
			return at(lastSector(size, back), s)
		}
	}
	return []Header{
		{Name: "md-0.90-le", Type: "linux_raid_member", Source: mdSource, Libblkid: true, Build: md090(le)},
		{Name: "md-0.90-be", Type: "linux_raid_member", Source: mdSource, Libblkid: true, Build: md090(be)},
		{Name: "md-1.0", Type: "linux_raid_member", Source: mdSource, Libblkid: true, Build: md1(func(s int64) int64 { return s&^0xfff - 0x2000 })},
		{Name: "md-1.1", Type: "linux_raid_member", Source: mdSource, Libblkid: true, Build: md1(func(int64) int64 { return 0 })},
		{Name: "md-1.2", Type: "linux_raid_member", Source: mdSource, Libblkid: true, Build: md1(func(int64) int64 { return 0x1000 })},
		{Name: "ddf", Type: "ddf_raid_member", Source: "SNIA Common RAID Disk Data Format 2.0, 5.5 (DDF header, anchor in the last sector)", Libblkid: true,
			Build: func(size int64) []Patch {
				h := sector(512)
				be.PutUint32(h[0:], 0xDE11DE11)
				copy(h[8:], "handmade-ddf-guid-000000")
				copy(h[32:], "02.00.00")
				return at(lastSector(size, 1), h) // primary_lba 0: no primary header to cross-check
			}},
		{Name: "isw", Type: "isw_raid_member", Source: "Intel Matrix Storage Manager metadata (mdadm super-intel.c's struct imsm_super), 2nd-to-last sector", Libblkid: true,
			Build: tail(2, 0, str("Intel Raid ISM Cfg Sig. 1.0.00"))},
		{Name: "lsi", Type: "lsi_mega_raid_member", Source: "LSI MegaRAID DDF-less metadata as dmraid's lsi.h documents it, last sector", Libblkid: true,
			Build: tail(1, 0, str("$XIDE$"))},
		{Name: "via", Type: "via_raid_member", Source: "VIA V-RAID metadata as dmraid's via.h documents it, last sector", Libblkid: true,
			Build: func(size int64) []Patch {
				s := sector(512)
				le.PutUint16(s[0:], 0xAA55)
				s[2] = 1 // version
				var sum uint8
				for _, b := range s[:50] {
					sum += b
				}
				s[50] = sum
				return at(lastSector(size, 1), s)
			}},
		{Name: "via-bad-checksum", Type: "via_raid_member", Source: "VIA V-RAID metadata with a wrong checksum: wipefs still lists it (it accepts bad checksums)", Libblkid: true,
			Build: func(size int64) []Patch {
				s := sector(512)
				le.PutUint16(s[0:], 0xAA55)
				s[2] = 2     // version
				s[50] = 0x5A // not the sum of the first 50 bytes (0x55+0xAA+2)
				return at(lastSector(size, 1), s)
			}},
		{Name: "silicon", Type: "silicon_medley_raid_member", Source: "Silicon Image Medley metadata as dmraid's sil.h documents it, last sector", Libblkid: true,
			Build: func(size int64) []Patch {
				s := sector(512)
				le.PutUint32(s[0x60:], 0x2F000000)
				le.PutUint16(s[0x10A:], 2) // major_ver
				s[0x116] = 0               // disk_number
				var sum int
				for i := 0; i < 0x13E; i += 2 {
					sum += int(le.Uint16(s[i:]))
				}
				le.PutUint16(s[0x13E:], uint16(-sum))
				return at(lastSector(size, 1), s)
			}},
		{Name: "nvidia", Type: "nvidia_raid_member", Source: "NVIDIA MediaShield metadata as dmraid's nv.h documents it, 2nd-to-last sector: size 30 words, a checksum that makes its words sum to 0 (libblkid nvidia_raid.c checks both since 2.39)", Libblkid: true,
			Build: func(size int64) []Patch {
				s := sector(512)
				copy(s, "NVIDIA  ")
				le.PutUint32(s[8:], 120/4) // size, in 32-bit words
				le.PutUint16(s[16:], 100)  // version
				var sum uint32
				for i := 0; i < 120; i += 4 {
					sum += le.Uint32(s[i:])
				}
				le.PutUint32(s[12:], -sum) // chksum
				return at(lastSector(size, 2), s)
			}},
		{Name: "promise", Type: "promise_fasttrack_raid_member", Source: "Promise FastTrack metadata as dmraid's pdc.h documents it, 63 sectors from the end", Libblkid: true,
			Build: tail(63, 0, str("Promise Technology, Inc."))},
		{Name: "hpt45x", Type: "hpt45x_raid_member", Source: "HighPoint 45x metadata as dmraid's hpt45x.h documents it, 11 sectors from the end", Libblkid: true,
			Build: tail(11, 0, []byte{0xf3, 0x16, 0x78, 0x5a})},
		{Name: "hpt37x", Type: "hpt37x_raid_member", Source: "HighPoint 37x metadata as dmraid's hpt37x.h documents it (sector 9, magic 32 bytes in)", Libblkid: true,
			Build: func(int64) []Patch { return at(9*512+32, []byte{0xf0, 0x16, 0x78, 0x5a}) }},
		{Name: "adaptec", Type: "adaptec_raid_member", Source: "Adaptec HostRAID metadata as dmraid's asr.h documents it, last sector", Libblkid: true,
			Build: func(size int64) []Patch {
				s := sector(512)
				be.PutUint32(s[0:], 0x37FC4D1E) // b0idcode
				s[63] = 1                       // resver
				be.PutUint32(s[0x100:], 0x4450544D)
				return at(lastSector(size, 1), s)
			}},
		{Name: "jmicron", Type: "jmicron_raid_member", Source: "JMicron JMB36x metadata as dmraid's jm.h documents it, last sector", Libblkid: true,
			Build: func(size int64) []Patch {
				s := sector(512)
				copy(s, "JM")
				s[2], s[3] = 0, 1 // minor, major
				return at(lastSector(size, 1), s)
			}},
	}
}

// crc32c is the Castagnoli CRC Stratis uses.
func crc32c(p []byte) uint32 { return crc32.Checksum(p, crc32.MakeTable(crc32.Castagnoli)) }
