package blkid

import "fmt"

// cryptoProbes are encrypted and integrity-protected volumes.
//
// Formats: LUKS1 from cryptsetup's "LUKS On-Disk Format Specification
// 1.2.3", LUKS2 (with its secondary header at one of nine offsets) from
// "LUKS2 On-Disk Format Specification 1.1.x"; dm-verity's hash-device
// superblock and dm-integrity's superblock from cryptsetup's
// lib/verity/verity.h and lib/integrity/integrity.h; BitLocker from
// libyal's libbde "BitLocker Drive Encryption (BDE) format"; Apple Core
// Storage from libyal's libfvde "FileVault Drive Encryption (FVDE)"
// documentation. Where libblkid looks: luks.c, verity.c, integrity.c,
// bitlocker.c, cs_fvault2.c.
func cryptoProbes() []Probe {
	return []Probe{
		MagicProbe("DM_verity_hash", Crypto, "a dm-verity hash device", []Magic{{Magic: "verity\x00\x00"}}, func(d *Dev, off int64) bool {
			return d.U32LE(8) == 1
		}),
		MagicProbe("DM_integrity", Crypto, "a dm-integrity device", []Magic{{Magic: "integrt\x00"}}, func(d *Dev, off int64) bool {
			return d.U8(8) != 0
		}),
		{Type: "crypto_LUKS", Usage: Crypto, Find: findLUKS},
		{Type: "BitLocker", Usage: Crypto, Find: findBitLocker},
		// Apple Core Storage (FileVault 2): "CS" at 88 of the physical
		// volume header, which is version 1 with checksum algorithm 1
		// (libblkid cs_fvault2.c, since 2.39, also checks the CRC-32C and
		// the FileVault 2 block type, key size and cipher).
		MagicProbe("cs_fvault2", Crypto, "an Apple FileVault 2 (Core Storage) encrypted volume", []Magic{{Magic: "CS", SBOff: 88}}, func(d *Dev, off int64) bool {
			return d.U16LE(8) == 1 && d.U32LE(90) == 1
		}),
	}
}

// luks2Subsystem is where a LUKS2 header keeps its subsystem label: after
// magic, version, hdr_size, seqid, label, checksum_alg, salt and uuid.
const luks2Subsystem = 6 + 2 + 8 + 8 + 48 + 32 + 64 + 40

// luksWhat names the LUKS header at off: its version, and whether it is a
// LUKS2 volume whose data a self-encrypting drive guards (subsystem
// "HW-OPAL": libblkid probes it first since 2.41, because reading its
// locked range fails).
func luksWhat(d *Dev, off int64, copyOf string) string {
	v := d.U16BE(off + 6)
	what := "a LUKS encrypted volume"
	if v == 1 || v == 2 {
		what = fmt.Sprintf("a LUKS%d encrypted volume", v)
	}
	if v == 2 && d.Has(off+luks2Subsystem, "HW-OPAL\x00") {
		what = "a LUKS2 volume on a self-encrypting (OPAL) drive, SUBSYSTEM=HW-OPAL"
	}
	return what + copyOf
}

// luks2SecondaryOffsets are where LUKS2 may keep its second header: right
// after the first, whose size is one of these.
var luks2SecondaryOffsets = []int64{0x4000, 0x8000, 0x10000, 0x20000, 0x40000, 0x80000, 0x100000, 0x200000, 0x400000}

// findLUKS reports the primary header and every secondary LUKS2 header
// ("SKUL\xba\xbe"), so a device whose primary header was overwritten is
// still recognised by the header that survives.
func findLUKS(d *Dev) []Signature {
	var found []Signature
	if d.Has(0, "LUKS\xba\xbe") {
		found = append(found, Signature{Type: "crypto_LUKS", Usage: Crypto, Offset: 0, What: luksWhat(d, 0, "")})
	}
	for _, off := range luks2SecondaryOffsets {
		if d.Has(off, "SKUL\xba\xbe") {
			found = append(found, Signature{Type: "crypto_LUKS", Usage: Crypto, Offset: off, What: luksWhat(d, off, " (its secondary header)")})
		}
	}
	return found
}

// findBitLocker recognises the three BitLocker boot sectors. Windows 7 and
// To Go volumes are confirmed by the "-FVE-FS-" metadata block their boot
// sector points to: To Go's boot sector otherwise looks like any FAT32
// formatted by Windows ("MSWIN4.1").
func findBitLocker(d *Dev) []Signature {
	var metaAt int64
	switch {
	case d.Has(0, "\xeb\x52\x90-FVE-FS-"): // Vista
		return []Signature{bitLocker("Vista")}
	case d.Has(0, "\xeb\x58\x90-FVE-FS-"): // Windows 7 and later
		metaAt = 176
	case d.Has(0, "\xeb\x58\x90MSWIN4.1"): // To Go
		metaAt = 440
	default:
		return nil
	}
	meta := d.U64LE(metaAt)
	if meta == 0 || meta > uint64(d.Size) || !d.Has(int64(meta), "-FVE-FS-") {
		return nil
	}
	if metaAt == 440 {
		return []Signature{bitLocker("To Go")}
	}
	return []Signature{bitLocker("Windows 7+")}
}

func bitLocker(kind string) Signature {
	return Signature{Type: "BitLocker", Usage: Crypto, Offset: 0, What: "a BitLocker (" + kind + ") encrypted volume"}
}
