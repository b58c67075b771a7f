package handmade

// ImageHeaders are virtual machine disk images' headers (and VHD's
// footer), each from its format's specification: what qemu's block
// driver checks before it believes the format. No libblkid release knows
// them (Libblkid false); `qemu-img info` names each.
func ImageHeaders() []Header {
	return sized([]Header{
		{Name: "qcow", Type: "qcow", Source: "qemu docs/interop/qcow2.txt, version 1 (block/qcow.c): QFI\\xfb, version 1",
			Build: func(int64) []Patch { return at(0, qcowHeader(1)) }},
		{Name: "qcow2", Type: "qcow2", Source: "qemu docs/interop/qcow2.txt: QFI\\xfb, version 3, 64 KiB clusters",
			Build: func(int64) []Patch { return at(0, qcowHeader(3)) }},
		{Name: "qed", Type: "qed", Source: "qemu docs/interop/qed_spec.txt: QED\\0, 64 KiB clusters, 4-cluster tables",
			Build: func(int64) []Patch {
				h := sector(512)
				copy(h, "QED\x00")
				le.PutUint32(h[4:], 64<<10) // cluster_size
				le.PutUint32(h[8:], 4)      // table_size
				le.PutUint32(h[12:], 1)     // header_size, clusters
				return at(0, h)
			}},
		{Name: "vmdk-sparse", Type: "vmdk", Source: "VMware Virtual Disk Format 1.1, hosted sparse extent header: KDMV, version 1",
			Build: func(int64) []Patch {
				h := sector(512)
				copy(h, "KDMV")
				le.PutUint32(h[4:], 1)       // version
				le.PutUint32(h[8:], 3)       // flags: valid new-line test, redundant grain table
				le.PutUint64(h[12:], 131072) // capacity, sectors
				le.PutUint64(h[20:], 128)    // grain size, sectors
				return append(at(0, h), at(512, str("# Disk DescriptorFile\nversion=1\n"))...)
			}},
		{Name: "vmdk-cowd", Type: "vmdk", Source: "VMware Virtual Disk Format 1.1, ESX Server sparse extent header: COWD, version 1",
			Build: func(int64) []Patch {
				h := sector(512)
				copy(h, "COWD")
				le.PutUint32(h[4:], 1) // version
				return at(0, h)
			}},
		{Name: "vmdk-descriptor", Type: "vmdk", Source: "VMware Virtual Disk Format 1.1, the descriptor file of a monolithicFlat disk",
			Build: func(int64) []Patch {
				return at(0, str("# Disk DescriptorFile\nversion=1\nCID=fffffffe\nparentCID=ffffffff\ncreateType=\"monolithicFlat\"\n\nRW 131072 FLAT \"disk-flat.vmdk\" 0\n"))
			}},
		{Name: "vdi", Type: "vdi", Source: "VirtualBox src/VBox/Storage/VDICore.h: the pre-header (text, signature 0xbeda107f, version 1.1)",
			Build: func(int64) []Patch {
				h := sector(512)
				copy(h, "<<< Oracle VM VirtualBox Disk Image >>>\n")
				le.PutUint32(h[0x40:], 0xbeda107f)
				le.PutUint32(h[0x44:], 0x00010001)
				return at(0, h)
			}},
		{Name: "vhdx", Type: "vhdx", Source: "Microsoft VHDX Format Specification 1.0, 2.2.1: the file type identifier",
			Build: func(int64) []Patch { return at(0, str("vhdxfile")) }},
		{Name: "vpc-dynamic", Type: "vpc", Source: "Microsoft Virtual Hard Disk Image Format Specification: a dynamic disk's footer copy at 0, its dynamic header (cxsparse) at 512, the footer at the end",
			Build: func(size int64) []Patch {
				f := vhdFooter(3)
				return append(append(at(0, f), at(512, str("cxsparse"))...), at(size-512, f)...)
			}},
		{Name: "vpc-fixed", Type: "vpc", Source: "Microsoft Virtual Hard Disk Image Format Specification: a fixed disk's footer, in its last 512 bytes",
			Build: func(size int64) []Patch { return at(size-512, vhdFooter(2)) }},
		{Name: "parallels", Type: "parallels", Source: "qemu docs/interop/parallels.txt: WithoutFreeSpace, version 2",
			Build: func(int64) []Patch {
				h := sector(64)
				copy(h, "WithoutFreeSpace")
				le.PutUint32(h[16:], 2)    // version
				le.PutUint32(h[28:], 2048) // tracks (cluster size in sectors)
				return at(0, h)
			}},
	})
}

func qcowHeader(version uint32) []byte {
	h := sector(512)
	copy(h, "QFI\xfb")
	be.PutUint32(h[4:], version)
	be.PutUint32(h[20:], 16)     // cluster_bits
	be.PutUint64(h[24:], 64<<20) // size
	return h
}

// vhdFooter is a VHD footer (big-endian) of disk type typ (2 fixed, 3
// dynamic), file format version 1.0.
func vhdFooter(typ uint32) []byte {
	f := sector(512)
	copy(f, "conectix")
	be.PutUint32(f[8:], 2)           // features: reserved bit set
	be.PutUint32(f[12:], 0x00010000) // file format version
	be.PutUint64(f[16:], 512)        // data offset (0xffff... for a fixed disk)
	if typ == 2 {
		be.PutUint64(f[16:], ^uint64(0))
	}
	copy(f[28:], "qemu")
	be.PutUint32(f[60:], typ)
	var sum uint32
	for _, b := range f {
		sum += uint32(b)
	}
	be.PutUint32(f[64:], ^sum)
	return f
}
