package blkid

// volumeProbes are volume managers, caches and device-mapper targets that
// keep a label on the devices they use.
//
// Formats: LVM2's label from lvm2's lib/label/label.h and
// lib/format_text/layout.h; LVM1's PV header from the kernel's old
// include/linux/lvm.h; bcache and bcachefs: bcache.go;
// Ceph BlueStore's "bluestore block device" label from ceph's
// src/os/bluestore/bluestore_types.h; DRBD 8.4 and 9 metadata from
// drbd-utils' user/shared/drbdmeta.c; drbdmanage and drbd-proxy from their
// projects' headers; the dm-snapshot COW header from the kernel's
// drivers/md/dm-snap-persistent.c; VMFS from the vmfs-tools project; VDO
// from dm-vdo's encodings; Stratis from stratisd's static header
// (src/engine/strat_engine/backstore/metadata/static_header.rs).
func volumeProbes() []Probe {
	return []Probe{
		{Type: "bcache", Usage: Other, Find: findBcache},
		{Type: "bcachefs", Usage: Filesystem, Find: findBcachefs},
		MagicProbe("ceph_bluestore", Other, "a Ceph BlueStore OSD device", []Magic{
			{Magic: "bluestore block device"},
		}, nil),
		{Type: "drbd", Usage: Raid, Find: findDRBD},
		MagicProbe("drbdmanage_control_volume", Other, "a drbdmanage control volume", []Magic{
			{Magic: "$DRBDmgr=q"},
		}, func(d *Dev, off int64) bool {
			// A 32-digit hex UUID and a newline follow the magic.
			p := d.At(11, 33)
			if p == nil || p[32] != '\n' {
				return false
			}
			for _, c := range p[:32] {
				if !isHex(c) {
					return false
				}
			}
			return true
		}),
		MagicProbe("drbdproxy_datalog", Filesystem, "a DRBD Proxy data log", []Magic{
			{Magic: "DRBDdlh*"},
		}, nil),
		{Type: "LVM2_member", Usage: Raid, Find: findLVM2},
		MagicProbe("LVM1_member", Raid, "an LVM1 physical volume", []Magic{{Magic: "HM"}}, func(d *Dev, off int64) bool {
			v := d.U16LE(2)
			return v == 1 || v == 2
		}),
		MagicProbe("DM_snapshot_cow", Other, "a device-mapper snapshot COW store", []Magic{{Magic: "SnAp"}}, nil),
		MagicProbe("VMFS_volume_member", Raid, "a VMware VMFS volume member", []Magic{
			{Magic: "\x0d\xd0\x01\xc0", KBOff: 1024},
		}, nil),
		MagicProbe("vdo", Other, "a VDO (dm-vdo) volume", []Magic{{Magic: "dmvdo001"}}, nil),
		MagicProbe("stratis", Raid, "a Stratis pool member", []Magic{
			{Magic: stratisMagic, SBOff: 512 + 4},
			{Magic: stratisMagic, SBOff: 9*512 + 4},
		}, nil),
	}
}

const stratisMagic = "!Stra0tis\x86\xff\x02^\x41rh"

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// findLVM2 looks for LVM2's label in any of the first four sectors, where
// pvcreate may put it ("LABELONE" at the start of the sector, the type
// "LVM2 001" 24 bytes in, and the sector's own number in between). blkid
// reports the offset of the type string.
func findLVM2(d *Dev) []Signature {
	var found []Signature
	for s := int64(0); s < 4; s++ {
		off := s * 512
		if d.Has(off, "LABELONE") && d.Has(off+0x18, "LVM2 001") && d.U64LE(off+8) == uint64(s) {
			found = append(found, Signature{Type: "LVM2_member", Usage: Raid, Offset: off + 0x18, What: "an LVM2 physical volume"})
		}
	}
	return found
}

// findDRBD looks for DRBD's internal metadata in the last 4 KiB: 8.x
// (clean or unclean) and 9.x, whose magic both lie 60 bytes in.
func findDRBD(d *Dev) []Signature {
	if d.Size < 0x10000 {
		return nil
	}
	off := d.Size - 4096 + 60
	var ver string
	switch d.U32BE(off) {
	case 0x83740267 + 4, 0x83740267 + 5:
		ver = "8"
	case 0x83740267 + 6:
		ver = "9"
	default:
		return nil
	}
	return []Signature{{Type: "drbd", Usage: Raid, Offset: off, What: "a DRBD " + ver + " backing device (internal metadata)"}}
}
