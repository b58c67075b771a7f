package blkid

// filesystemProbes are the probes of the types util-linux lists in its
// superblocks chain that are not RAID, volume-manager, crypto or swap
// labels: every USAGE=filesystem type, and the few "other"/"raid" types
// that belong to a filesystem (jbd, xfs_external_log, ubi). The order is
// libblkid's.
func filesystemProbes() []Probe {
	var ps []Probe
	ps = append(ps, vfatProbe())
	ps = append(ps,
		MagicProbe("xfs", Filesystem, "an XFS filesystem", []Magic{{Magic: "XFSB"}}, nil),
		xfsLogProbe(),
		MagicProbe("exfs", Filesystem, "an EXFS filesystem", []Magic{{Magic: "EXFS"}}, nil),
	)
	ps = append(ps, extProbes()...)
	ps = append(ps,
		MagicProbe("reiserfs", Filesystem, "a ReiserFS filesystem", []Magic{
			{"ReIsErFs", 8, 0x34}, {"ReIsEr2Fs", 64, 0x34}, {"ReIsEr3Fs", 64, 0x34},
			{"ReIsErFs", 64, 0x34}, {"ReIsErFs", 8, 20},
		}, nil),
		MagicProbe("reiser4", Filesystem, "a Reiser4 filesystem", []Magic{{"ReIsEr4", 64, 0}}, nil),
		MagicProbe("jfs", Filesystem, "a JFS filesystem", []Magic{{"JFS1", 32, 0}}, nil),
		udfProbe(),
		MagicProbe("iso9660", Filesystem, "an ISO 9660 filesystem", []Magic{{"CD001", 32, 1}, {"CDROM", 32, 9}}, nil),
	)
	ps = append(ps, hfsProbes()...)
	ps = append(ps,
		ufsProbe(),
		MagicProbe("hpfs", Filesystem, "an HPFS filesystem", []Magic{{"\x49\xe8\x95\xf9", 8, 0}}, nil),
		sysvProbe(),
		xenixProbe(),
		MagicProbe("ntfs", Filesystem, "an NTFS filesystem", []Magic{{"NTFS    ", 0, 3}}, nil),
		MagicProbe("ReFS", Filesystem, "a ReFS filesystem", []Magic{{"\x00\x00\x00ReFS\x00", 0, 0}}, nil),
		MagicProbe("cramfs", Filesystem, "a cramfs filesystem", []Magic{{"\x45\x3d\xcd\x28", 0, 0}, {"\x28\xcd\x3d\x45", 0, 0}}, nil),
		MagicProbe("romfs", Filesystem, "a romfs filesystem", []Magic{{"-rom1fs-", 0, 0}}, nil),
	)
	ps = append(ps, scoutfsProbes()...)
	ps = append(ps,
		minixProbe(),
	)
	ps = append(ps, gfsProbes()...)
	ps = append(ps,
		MagicProbe("ocfs", Filesystem, "an OCFS filesystem", []Magic{{"OracleCFS", 8, 0}}, nil),
		MagicProbe("ocfs2", Filesystem, "an OCFS2 filesystem", []Magic{{"OCFSV2", 1, 0}, {"OCFSV2", 2, 0}, {"OCFSV2", 4, 0}, {"OCFSV2", 8, 0}}, nil),
		MagicProbe("oracleasm", Filesystem, "an Oracle ASM disk", []Magic{{"ORCLDISK", 0, 32}}, nil),
		MagicProbe("vxfs", Filesystem, "a VxFS filesystem", []Magic{{"\xf5\xfc\x01\xa5", 1, 0}, {"\xa5\x01\xfc\xf5", 8, 0}}, nil),
	)
	ps = append(ps, squashfsProbes()...)
	ps = append(ps,
		MagicProbe("nss", Filesystem, "a NetWare NSS pool", []Magic{{"SPB5", 4, 0}}, nil),
		btrfsProbe(),
		MagicProbe("ubifs", Filesystem, "a UBIFS filesystem", []Magic{{"\x31\x18\x10\x06", 0, 0}}, nil),
		MagicProbe("ubi", Raid, "a UBI volume", []Magic{{"UBI#", 0, 0}}, nil),
		MagicProbe("bfs", Filesystem, "an SCO BFS filesystem", []Magic{{"\xce\xfa\xad\x1b", 0, 0}}, nil),
		MagicProbe("VMFS", Filesystem, "a VMware VMFS filesystem", []Magic{{"\x5e\xf1\xab\x2f", 2048, 0}}, nil),
		MagicProbe("befs", Filesystem, "a BeOS BFS filesystem", []Magic{{"BFS1", 0, 32}, {"1SFB", 0, 32}, {"BFS1", 0, 0x200 + 32}, {"1SFB", 0, 0x200 + 32}}, nil),
		nilfs2Probe(),
		MagicProbe("exfat", Filesystem, "an exFAT filesystem", []Magic{{"EXFAT   ", 0, 3}}, nil),
		// f2fs keeps a second superblock 4 KiB after the first; libblkid
		// reads only the first.
		MagicProbe("f2fs", Filesystem, "an F2FS filesystem", []Magic{{"\x10\x20\xf5\xf2", 1, 0}, {"\x10\x20\xf5\xf2", 5, 0}}, nil),
		MagicProbe("mpool", Filesystem, "an mpool device", []Magic{{"mpoolDev", 0, 0}}, nil),
		MagicProbe("apfs", Filesystem, "an APFS container", []Magic{{"NXSB", 0, 32}}, nil),
		MagicProbe("zonefs", Filesystem, "a zonefs filesystem", []Magic{{"SFOZ", 0, 0}}, nil),
		MagicProbe("erofs", Filesystem, "an EROFS filesystem", []Magic{{"\xe2\xe1\xf5\xe0", 1, 0}}, nil),
	)
	return ps
}

// found is the one signature of a probe that found its type at off.
func found(p Probe, what string, off int64) []Signature {
	return []Signature{{Type: p.Type, Usage: p.Usage, Offset: off, What: what}}
}
