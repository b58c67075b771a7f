package handmade

func ptableHeaders() []Header {
	return []Header{
		{Name: "aix", Type: "aix", Source: "AIX IPL record (magic 0xC9C2D4C1, \"IBMA\" in EBCDIC, at byte 0)", Libblkid: true,
			Build: func(int64) []Patch { return at(0, []byte{0xC9, 0xC2, 0xD4, 0xC1}) }},
		{Name: "pmbr-without-gpt", Type: "PMBR", Source: "UEFI 2.10 5.2.3 (protective MBR: one 0xEE partition) with both GPT headers gone", Libblkid: true,
			Build: func(size int64) []Patch {
				return at(0, mbr(entry{typ: 0xEE, start: 1, sectors: uint32(size/512 - 1)}))
			}},
		{Name: "unixware", Type: "unixware", Source: "Linux block/partitions/msdos.c (struct unixware_disklabel in sector 29; VTOC magic 0x600DDEEE), with d_magic where libblkid looks for it", Libblkid: true,
			Build: func(int64) []Patch {
				l := sector(512)
				le.PutUint32(l[4:], 0xCA5E600D) // d_magic
				le.PutUint32(l[156:], 0x600DDEEE)
				le.PutUint32(l[160:], 1)
				// libblkid 2.38 wants the (misspelt) d_magic 29174 bytes in.
				return []Patch{{Off: 29 * 512, Data: l}, {Off: 29174, Data: []byte{0x0D, 0x60, 0xE5, 0xCA}}}
			}},
		{Name: "solaris-x86", Type: "solaris", Source: "Linux block/partitions/msdos.c (struct solaris_x86_vtoc in sector 1: v_sanity 0x600DDEEE, version 1)", Libblkid: true,
			Build: func(int64) []Patch {
				v := sector(512)
				le.PutUint32(v[12:], 0x600DDEEE)
				le.PutUint32(v[16:], 1)
				le.PutUint16(v[30:], 512)
				return at(512, v)
			}},
		{Name: "atari", Type: "atari", Source: "Linux block/partitions/atari.h (AHDI root sector: disk size, four entries with flag, id, start, size)", Libblkid: true,
			Build: func(size int64) []Patch {
				rs := sector(512)
				be.PutUint32(rs[0x1C2:], uint32(size/512))
				p := rs[0x1C6:]
				p[0] = 0x01 // active
				copy(p[1:], "GEM")
				be.PutUint32(p[4:], 2)
				be.PutUint32(p[8:], 2048)
				return at(0, rs)
			}},
		{Name: "ultrix", Type: "ultrix", Source: "Linux block/partitions/ultrix.c (struct ultrix_disklabel ending at 16 KiB: magic 0x032957, valid)", Libblkid: true,
			Build: func(int64) []Patch {
				l := sector(72)
				le.PutUint32(l[0:], 0x032957)
				le.PutUint32(l[4:], 1)
				le.PutUint32(l[8:], 2048) // partition a: sectors
				return at(16384-72, l)
			}},
		{Name: "bsd-sector1", Type: "bsd", Source: "FreeBSD sys/sys/disklabel.h (struct disklabel at sector 1, d_magic 0x82564557)", Libblkid: false,
			Build: bsd(512)},
		{Name: "bsd-offset64", Type: "bsd", Source: "NetBSD/OpenBSD disklabel at byte 64 (alpha, vax, luna88k)", Libblkid: false,
			Build: bsd(64)},
		{Name: "minix-in-dos", Type: "minix", Source: "Linux block/partitions/msdos.c (a primary partition of type 0x81 holding a Minix subpartition table)", Libblkid: false,
			Build: func(size int64) []Patch {
				sub := mbr(entry{typ: 0x81, start: 2048 + 8, sectors: 1000})
				return []Patch{
					{Off: 0, Data: mbr(entry{typ: 0x81, start: 2048, sectors: 4096})},
					{Off: 2048 * 512, Data: sub},
				}
			}},
	}
}

// bsd builds a BSD disklabel with its two magics (d_magic and d_magic2)
// at off.
func bsd(off int64) func(int64) []Patch {
	return func(size int64) []Patch {
		l := sector(276)
		le.PutUint32(l[0:], 0x82564557)
		le.PutUint32(l[40:], 512)                    // d_secsize
		le.PutUint32(l[132:], 0x82564557)            // d_magic2
		le.PutUint16(l[138:], 3)                     // d_npartitions
		le.PutUint32(l[148+2*16:], uint32(size/512)) // partition c: the whole disk
		return at(off, l)
	}
}

type entry struct {
	typ            byte
	start, sectors uint32
}

// mbr builds a DOS boot sector with the given primary entries.
func mbr(es ...entry) []byte {
	s := sector(512)
	for i, e := range es {
		p := s[446+16*i:]
		p[4] = e.typ
		le.PutUint32(p[8:], e.start)
		le.PutUint32(p[12:], e.sectors)
	}
	s[510], s[511] = 0x55, 0xAA
	return s
}
