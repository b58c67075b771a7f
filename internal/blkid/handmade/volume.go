package handmade

import "fmt"

func volumeHeaders() []Header {
	return []Header{
		{Name: "ceph-bluestore", Type: "ceph_bluestore", Source: "Ceph src/os/bluestore/bluestore_types.h (bluestore_bdev_label_t: \"bluestore block device\\n\" + OSD uuid)", Libblkid: true,
			Build: func(int64) []Patch {
				return at(0, str("bluestore block device\n01234567-89ab-cdef-0123-456789abcdef\n"))
			}},
		{Name: "drbdmanage", Type: "drbdmanage_control_volume", Source: "drbdmanage's drbdmanage/storage/persistence.py (control volume header)", Libblkid: true,
			Build: func(int64) []Patch {
				return at(0, str("$DRBDmgr=q 0123456789abcdef0123456789abcdef\n"))
			}},
		{Name: "drbdproxy-datalog", Type: "drbdproxy_datalog", Source: "drbd-proxy's data log header (magic \"DRBDdlh*\", version, uuid)", Libblkid: true,
			Build: func(int64) []Patch {
				h := sector(48)
				copy(h, "DRBDdlh*")
				le.PutUint64(h[8:], 1)
				return at(0, h)
			}},
		{Name: "lvm1", Type: "LVM1_member", Source: "Linux 2.4 include/linux/lvm.h (pv_disk_t: id \"HM\", version 2)", Libblkid: true,
			Build: func(int64) []Patch {
				h := sector(512)
				copy(h, "HM")
				le.PutUint16(h[2:], 2)
				copy(h[44:], "handmadeLVM1pvuuid00000000000000")
				return at(0, h)
			}},
		{Name: "dm-snapshot-cow", Type: "DM_snapshot_cow", Source: "Linux drivers/md/dm-snap-persistent.c (struct disk_header: magic \"SnAp\", valid, version 1, chunk size)", Libblkid: true,
			Build: func(int64) []Patch {
				h := sector(16)
				copy(h, "SnAp")
				le.PutUint32(h[4:], 1)
				le.PutUint32(h[8:], 1)
				le.PutUint32(h[12:], 16)
				return at(0, h)
			}},
		{Name: "vmfs-volume", Type: "VMFS_volume_member", Source: "vmfs-tools' vmfs_volume.h (volume info at 1 MiB, magic 0xc001d00d)", Libblkid: true,
			Build: func(int64) []Patch {
				h := sector(512)
				le.PutUint32(h, 0xc001d00d)
				le.PutUint32(h[4:], 14)
				return at(1<<20, h)
			}},
		{Name: "vdo", Type: "vdo", Source: "dm-vdo's encodings (geometry block: magic \"dmvdo001\", then the volume's uuid)", Libblkid: true,
			Build: func(int64) []Patch { return at(0, str("dmvdo001")) }},
		{Name: "stratis", Type: "stratis", Source: "stratisd's static_header.rs (sigblock at sector 1 and 9: CRC32C, magic, sectors, uuids)", Libblkid: true,
			Build: stratis(true)},
		{Name: "stratis-second-copy", Type: "stratis", Source: "stratisd's static_header.rs (the first sigblock destroyed, the second intact)", Libblkid: true,
			Build: stratis(false)},
	}
}

// stratis builds Stratis's signature block in sector 9, and in sector 1
// too when both is set.
func stratis(both bool) func(int64) []Patch {
	return func(size int64) []Patch {
		b := sector(512)
		copy(b[4:], "!Stra0tis\x86\xff\x02^\x41rh")
		le.PutUint64(b[20:], uint64(size/512))
		copy(b[32:], "0123456789abcdef0123456789abcdef") // pool uuid
		copy(b[64:], "fedcba9876543210fedcba9876543210") // device uuid
		le.PutUint32(b, crc32c(b[4:]))
		ps := at(9*512, b)
		if both {
			ps = append(ps, Patch{Off: 512, Data: b})
		}
		return ps
	}
}

func cryptoHeaders() []Header {
	bde := "libyal's libbde \"BitLocker Drive Encryption (BDE) format\" (volume header, FVE metadata block)"
	return []Header{
		{Name: "dm-integrity", Type: "DM_integrity", Source: "Linux drivers/md/dm-integrity.c (struct superblock: magic \"integrt\\0\", version)", Libblkid: true,
			Build: func(int64) []Patch {
				h := sector(512)
				copy(h, "integrt\x00")
				h[8] = 1  // version
				h[9] = 15 // log2_interleave_sectors
				le.PutUint16(h[10:], 4)
				return at(0, h)
			}},
		{Name: "bitlocker-vista", Type: "BitLocker", Source: bde, Libblkid: true,
			Build: func(int64) []Patch { return at(0, str("\xeb\x52\x90-FVE-FS-")) }},
		{Name: "bitlocker-win7", Type: "BitLocker", Source: bde, Libblkid: true, Build: bitlocker("\xeb\x58\x90-FVE-FS-", 176)},
		{Name: "bitlocker-togo", Type: "BitLocker", Source: bde, Libblkid: true, Build: bitlocker("\xeb\x58\x90MSWIN4.1", 440)},
	}
}

// bitlocker builds a volume header with magic whose FVE metadata offset
// (a 64-bit field at ptr) points at a metadata block at 2 MiB.
func bitlocker(magic string, ptr int) func(int64) []Patch {
	return func(int64) []Patch {
		h := sector(512)
		copy(h, magic)
		le.PutUint64(h[ptr:], 2<<20)
		h[510], h[511] = 0x55, 0xAA
		fve := sector(64 + 48) // the block header, then the metadata header with no entries
		copy(fve, "-FVE-FS-")
		le.PutUint16(fve[10:], 2)  // version
		le.PutUint32(fve[64:], 48) // size: the metadata header alone
		le.PutUint32(fve[68:], 1)  // version
		le.PutUint32(fve[72:], 48) // header_size
		le.PutUint32(fve[76:], 48) // size_copy
		copy(fve[80:], "0123456789abcdef")
		return []Patch{{Off: 0, Data: h}, {Off: 2 << 20, Data: fve}}
	}
}

func swapHeaders() []Header {
	src := "Linux include/linux/swap.h (union swap_header) and kernel/power/swap.c (the hibernation signature)"
	var hs []Header
	page := func(p int64, magic string, v1 bool) func(int64) []Patch {
		return func(int64) []Patch {
			ps := at(p-10, str(magic))
			if v1 {
				h := sector(512)
				le.PutUint32(h[0:], 1)    // version
				le.PutUint32(h[4:], 1000) // last page
				return append(ps, Patch{Off: 1024, Data: h})
			}
			return ps
		}
	}
	hs = append(hs, Header{Name: "swap-v0", Type: "swap", Source: src, Libblkid: true, Build: page(4096, "SWAP-SPACE", false)})
	for _, m := range []string{"S1SUSPEND", "S2SUSPEND", "ULSUSPEND", "LINHIB0001"} {
		hs = append(hs, Header{Name: "swsuspend-" + m, Type: "swsuspend", Source: src, Libblkid: true, Build: page(4096, m, true)})
	}
	for _, p := range []int64{8 << 10, 16 << 10, 32 << 10, 64 << 10} {
		hs = append(hs, Header{Name: fmt.Sprintf("swsuspend-%dk", p>>10), Type: "swsuspend", Source: src, Libblkid: true, Build: page(p, "S1SUSPEND", true)})
	}
	hs = append(hs, Header{Name: "swsuspend-tuxonice", Type: "swsuspend", Source: "TuxOnIce's header magic at the start of the swap device", Libblkid: true,
		Build: func(int64) []Patch {
			ps := at(0, str("\xed\xc3\x02\xe9\x98\x56\xe5\x0c"))
			return append(ps, page(4096, "SWAPSPACE2", true)(0)...)
		}})
	return hs
}

func zfsHeaders() []Header {
	src := "OpenZFS include/sys/vdev_impl.h and uberblock_impl.h (256 KiB labels, uberblocks from 128 KiB in)"
	const label = 256 << 10
	labels := []func(size int64) int64{
		func(int64) int64 { return 0 },
		func(int64) int64 { return label },
		func(size int64) int64 { return size - 2*label - size%label },
		func(size int64) int64 { return size - label - size%label },
	}
	var hs []Header
	for i, where := range labels {
		where := where
		hs = append(hs, Header{Name: fmt.Sprintf("zfs-label%d-only", i), Type: "zfs_member", Source: src, Size: 96<<20 + 100<<10, Libblkid: true, Until: "2.40", // not 256 KiB-aligned: the end labels move
			Build: func(size int64) []Patch {
				var ps []Patch
				for u := int64(0); u < 4; u++ {
					ub := sector(1024)
					le.PutUint64(ub[0:], 0x00bab10c)
					le.PutUint64(ub[8:], 5000) // SPA version
					le.PutUint64(ub[16:], uint64(10+u))
					ps = append(ps, Patch{Off: where(size) + 128<<10 + u*1024, Data: ub})
				}
				return ps
			}})
	}
	return hs
}
