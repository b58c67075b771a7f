package blkid

// Backup is a copy of metadata a format keeps beside the copy libblkid
// reads, and that the format's own recovery tool finds when the first copy
// is gone: a device whose primary superblock was wiped still holds the
// filesystem, and the tool gives it back.
//
// The copies the probes themselves report (GPT's backup header, LUKS2's
// secondary header, btrfs's mirrors, nilfs2's and f2fs's second
// superblocks, UDF's anchors, ZFS's four labels, Stratis's and bcachefs's
// copies) are not here: they are cheap, and libblkid or wipefs read some
// of them. These are searched for only when nothing else was found (Scan).
type Backup struct {
	// Name is the format ("XFS"); Types the TYPE= values its copies are
	// reported under (registered probes' types).
	Name  string
	Types []string
	// Tool is the program that reads them; docs/signatures.md lists where
	// they lie and that program (a test keeps it in step).
	Tool string
	Find func(d *Dev) []Signature
}

// Backups is the registry of backup copies, in the order they are
// searched for. Each search stops at the first copy it finds: one is
// enough to refuse.
func Backups() []Backup {
	return []Backup{
		extBackup(),
		xfsBackup(),
		ntfsBackup(),
		fat32Backup(),
		exfatBackup(),
		jfsBackup(),
		ocfs2Backup(),
		hfsBackup(),
		apfsBackup(),
		lvm2Backup(),
		vhdxBackup(),
	}
}

func findBackups(d *Dev) []Signature {
	var found []Signature
	for _, b := range Backups() {
		found = append(found, b.Find(d)...)
	}
	return found
}

// backupSig is the signature of a backup copy of typ at off.
func backupSig(typ string, usage Usage, off int64, what string) []Signature {
	return []Signature{{Type: typ, Usage: usage, Offset: off, What: what}}
}
