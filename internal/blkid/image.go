package blkid

import (
	"fmt"
	"hash/crc32"
)

// imageProbes are virtual machine disk images: a qcow2 or VMDK file copied
// onto a device (or kept as a file) holds a whole disk, partition table and
// filesystems inside, where no probe at a partition's or filesystem's place
// sees them. No libblkid release knows these; the type names are
// qemu-img's ("file format: qcow2"), and where they are looked for is
// where qemu's block drivers look (block/qcow.c, qcow2.c, qed.c, vmdk.c,
// vdi.c, vhdx.c, vpc.c, parallels.c, each probe function), from the
// formats' own specifications: qemu's docs/interop/qcow2.txt and
// qed_spec.txt, VMware's Virtual Disk Format 1.1, VirtualBox's VDI header
// (src/VBox/Storage/VDICore.h), Microsoft's VHDX Format Specification 1.0
// and Virtual Hard Disk Image Format Specification, Parallels' image
// format (qemu's docs/interop/parallels.txt).
func imageProbes() []Probe {
	return []Probe{
		MagicProbe("qcow", Other, "a QEMU qcow (version 1) disk image", []Magic{{Magic: "QFI\xfb"}}, func(d *Dev, off int64) bool {
			return d.U32BE(4) == 1
		}),
		MagicProbe("qcow2", Other, "a QEMU qcow2 disk image", []Magic{{Magic: "QFI\xfb"}}, func(d *Dev, off int64) bool {
			v := d.U32BE(4)
			return v == 2 || v == 3
		}),
		MagicProbe("qed", Other, "a QEMU QED disk image", []Magic{{Magic: "QED\x00"}}, func(d *Dev, off int64) bool {
			cs := d.U32LE(4) // cluster size: a power of two, 4 KiB to 64 MiB
			return cs >= 4096 && cs <= 64<<20 && cs&(cs-1) == 0
		}),
		{Type: "vmdk", Usage: Other, Find: findVMDK},
		MagicProbe("vdi", Other, "a VirtualBox VDI disk image", []Magic{{Magic: "\x7f\x10\xda\xbe", SBOff: 0x40}}, func(d *Dev, off int64) bool {
			return d.U16LE(0x46) == 1 // major version 1 (0x00010001)
		}),
		MagicProbe("vhdx", Other, "a VHDX disk image", []Magic{{Magic: "vhdxfile"}}, nil),
		{Type: "vpc", Usage: Other, Find: findVPC},
		MagicProbe("parallels", Other, "a Parallels disk image", []Magic{{Magic: "WithoutFreeSpace"}, {Magic: "WithouFreSpacExt"}}, func(d *Dev, off int64) bool {
			return d.U32LE(16) == 2 // version
		}),
	}
}

// findVMDK: a hosted sparse extent ("KDMV", version 1 to 3), an ESX sparse
// one ("COWD", version 1), or a descriptor file ("# Disk DescriptorFile",
// which monolithicFlat and the split forms keep apart from the data).
func findVMDK(d *Dev) []Signature {
	sig := func(what string) []Signature {
		return []Signature{{Type: "vmdk", Usage: Other, Offset: 0, What: what}}
	}
	switch {
	case d.Has(0, "KDMV") && d.U32LE(4) >= 1 && d.U32LE(4) <= 3:
		return sig("a VMware VMDK disk image (sparse extent)")
	case d.Has(0, "COWD") && d.U32LE(4) == 1:
		return sig("a VMware VMDK disk image (ESX sparse extent)")
	case d.Has(0, "# Disk DescriptorFile"):
		return sig("a VMware VMDK disk descriptor")
	}
	return nil
}

// findVPC: a VHD's footer ("conectix", file format version 1.0) in its
// last 512 bytes, and the dynamic disk's copy of it at 0 (followed by the
// "cxsparse" dynamic header at 512). A fixed VHD is the raw disk with the
// footer after it.
func findVPC(d *Dev) []Signature {
	var found []Signature
	for _, off := range []int64{0, d.Size - 512} {
		if off < 0 || (off > 0 && len(found) > 0 && found[0].Offset == off) {
			continue
		}
		if d.Has(off, "conectix") && d.U32BE(off+12) == 0x00010000 {
			what := "a VHD (Virtual PC) disk image (its footer)"
			if off == 0 {
				what = "a VHD (Virtual PC) dynamic disk image (the copy of its footer)"
			}
			found = append(found, Signature{Type: "vpc", Usage: Other, Offset: off, What: what})
		}
	}
	return found
}

// vhdxBackup: a VHDX file keeps two copies of its header, at 64 and
// 128 KiB, each with a CRC-32C over its 4 KiB; qemu's vhdx.c (and
// Hyper-V) use whichever is valid and newer. Either one alone is the
// image with its file identifier gone.
func vhdxBackup() Backup {
	return Backup{
		Name:  "VHDX",
		Types: []string{"vhdx"},
		Tool:  "qemu-img",
		Find:  findVHDXHeaders,
	}
}

func findVHDXHeaders(d *Dev) []Signature {
	for _, off := range []int64{64 << 10, 128 << 10} {
		h := d.At(off, 4096)
		if h == nil || string(h[:4]) != "head" {
			continue
		}
		want := le32(h[4:])
		c := append([]byte(nil), h...)
		copy(c[4:8], []byte{0, 0, 0, 0})
		if crc32.Checksum(c, castagnoli) != want {
			continue
		}
		return backupSig("vhdx", Other, off, fmt.Sprintf("a VHDX disk image (its header copy at %d KiB; qemu-img reads it)", off>>10))
	}
	return nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)
