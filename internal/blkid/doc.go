// Package blkid recognises what lies on a block device the way util-linux's
// libblkid does, up to its current development version (2.43-devel; Debian
// 12 ships 2.38.1, and the types learned since, bcachefs, cs_fvault2,
// scoutfs and the dasd partition table, are here too): every superblock
// type `blkid -k` lists and every partition-table type libblkid probes, at
// every offset libblkid probes, named exactly as blkid names them (its
// TYPE= and PTTYPE= values: "ext4", "LVM2_member", "crypto_LUKS", "dos").
// A device's sector size is the caller's: a block device's logical one,
// 512 for a regular file, as libblkid takes them.
//
// It is pure Go and does no I/O of its own: a device is an io.ReaderAt and
// a size, so the probes run on byte slices in tests and under the fuzzer,
// and the caller decides how the device is read (internal/target reads it
// with O_DIRECT, on demand).
//
// Scan is deliberately eager. ioprobe uses it to refuse writes: a false
// positive costs a refusal the user can override, a false negative costs
// somebody's data. So where libblkid checks a checksum or a consistency
// rule before it believes a magic, the probes here check only what keeps
// random data from matching by chance.
//
// Where each format comes from: the on-disk layouts are the published
// ones (the kernel's fs/*/ headers, the vendors' specifications, the
// filesystems' own documentation), and the magic strings and their offsets
// are those libblkid's probers use (util-linux libblkid/src/superblocks/*.c
// and partitions/*.c, read to learn, not copied). docs/signatures.md lists
// every type with where it is looked for and its source; a test keeps that
// table and Probes() in step.
//
// Beyond libblkid, Scan searches in two more rounds when the probes find
// nothing: the backup copies formats keep of their first copy's metadata,
// at the places the formats' own recovery tools read them (backup*.go:
// xfs_repair, ntfsfix, e2fsck -b, pvck …), and the places a partition
// usually starts on a disk whose table was wiped (starts.go). Disk images
// (image.go: qcow2, VMDK, VDI, VHDX, VHD, named as qemu-img names them)
// are probed like the rest. ScanPrimary is the first round alone.
//
// Who owns what: the filesystem probes (fs*.go, scoutfs.go) and the
// framework (blkid.go, dev.go) are one part; RAID, volume managers, crypto,
// swap and partition tables (raid*.go, volume*.go, bcache.go, crypto*.go,
// swap*.go, zfs*.go, ptable*.go) another; the backup copies, the partition
// starts and the disk images (backup*.go, starts.go, image.go) a third.
package blkid
