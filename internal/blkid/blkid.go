package blkid

import (
	"fmt"
	"io"
	"sort"
)

// Usage is what a signature is used for: blkid's USAGE= values, plus
// "partition_table" for what blkid reports as PTTYPE=.
type Usage string

// The usages, as blkid names them.
const (
	Filesystem     Usage = "filesystem"
	Raid           Usage = "raid"
	Crypto         Usage = "crypto"
	Other          Usage = "other"
	PartitionTable Usage = "partition_table"
)

// Signature is one thing found on a device.
type Signature struct {
	Type   string // blkid's TYPE or PTTYPE: "ext4", "LVM2_member", "dos", ...
	Usage  Usage
	Offset int64  // byte offset of the magic, as blkid's SBMAGIC_OFFSET / PTMAGIC_OFFSET
	What   string // for people: "an ext4 filesystem"
}

// String names the signature for people and as blkid does:
// "an ext4 filesystem (TYPE=ext4, signature at byte 1080)".
func (s Signature) String() string {
	key := "TYPE"
	if s.Usage == PartitionTable {
		key = "PTTYPE"
	}
	if s.Offset < 0 { // blkid -p names a type without saying where
		return fmt.Sprintf("%s (%s=%s)", s.What, key, s.Type)
	}
	return fmt.Sprintf("%s (%s=%s, signature at byte %d)", s.What, key, s.Type, s.Offset)
}

// Probe recognises one type.
type Probe struct {
	Type  string
	Usage Usage
	// Find returns every place it finds its type on d (several for types
	// with backup headers: ZFS labels, LUKS2's secondary header, nilfs2's
	// second superblock), or nothing.
	Find func(d *Dev) []Signature
}

// Probes is the registry of every type this package recognises, in the
// order libblkid probes them where that matters, then the disk images no
// libblkid release knows (image.go).
func Probes() []Probe {
	var ps []Probe
	ps = append(ps, superblockProbes()...)
	ps = append(ps, imageProbes()...)
	ps = append(ps, ptableProbes()...)
	return ps
}

// superblockProbes are libblkid's superblocks chain: what may also lie at
// the start of a partition whose table is gone (starts.go).
func superblockProbes() []Probe {
	var ps []Probe
	ps = append(ps, raidProbes()...)
	ps = append(ps, volumeProbes()...)
	ps = append(ps, cryptoProbes()...)
	ps = append(ps, swapProbes()...)
	ps = append(ps, filesystemProbes()...)
	ps = append(ps, zfsProbes()...)
	return ps
}

// Scan looks for everything on a device of size bytes read through r,
// whose logical sector is sectorSize bytes (0: 512), and returns what it
// found, ordered by offset then type. Reads that fail or fall outside the
// device count as "not there"; Scan never reads outside [0, size).
//
// It looks in three rounds, each only when the rounds before found
// nothing: every probe at its places (ScanPrimary); then the backup
// copies formats keep of metadata their first copy also holds (Backups:
// an XFS filesystem whose primary superblock was wiped); then, as on a
// disk whose partition table was wiped, the places a partition usually
// starts (PartitionStarts). A device that holds a primary is refused for
// it, and its backups would say no more.
func Scan(r io.ReaderAt, size, sectorSize int64) []Signature {
	return ScanKeeping(r, size, sectorSize, nil)
}

// ScanKeeping is Scan where keep (nil: everything) decides which
// findings count, before a round decides whether the next is needed: the
// caller's own data that happens to hold a magic (a random sector of
// ioprobe's) must not stand in for the backups behind it.
func ScanKeeping(r io.ReaderAt, size, sectorSize int64, keep func(Signature) bool) []Signature {
	d := NewDev(r, size, sectorSize)
	found := kept(runProbes(d, Probes()), keep)
	if len(found) == 0 {
		found = kept(findBackups(d), keep)
	}
	if len(found) == 0 {
		found = findAtPartitionStarts(d, keep)
	}
	sortSignatures(found)
	return found
}

// ScanPrimary runs every probe at its places and nothing more: no backup
// search, no partition starts. It is what a look for a signature that
// appeared while ioprobe writes needs (whatever writes one writes its
// primary: mkfs, pvcreate, sgdisk, qemu-img), at a fraction of Scan's
// reads on a blank device.
func ScanPrimary(r io.ReaderAt, size, sectorSize int64) []Signature {
	found := runProbes(NewDev(r, size, sectorSize), Probes())
	sortSignatures(found)
	return found
}

func runProbes(d *Dev, ps []Probe) []Signature {
	var found []Signature
	for _, p := range ps {
		found = append(found, p.Find(d)...)
	}
	return found
}

func kept(sigs []Signature, keep func(Signature) bool) []Signature {
	if keep == nil {
		return sigs
	}
	var out []Signature
	for _, s := range sigs {
		if keep(s) {
			out = append(out, s)
		}
	}
	return out
}

func sortSignatures(found []Signature) {
	sort.SliceStable(found, func(i, j int) bool {
		if found[i].Offset != found[j].Offset {
			return found[i].Offset < found[j].Offset
		}
		return found[i].Type < found[j].Type
	})
}
