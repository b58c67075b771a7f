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
// order libblkid probes them where that matters.
func Probes() []Probe {
	var ps []Probe
	ps = append(ps, raidProbes()...)
	ps = append(ps, volumeProbes()...)
	ps = append(ps, cryptoProbes()...)
	ps = append(ps, swapProbes()...)
	ps = append(ps, filesystemProbes()...)
	ps = append(ps, zfsProbes()...)
	ps = append(ps, ptableProbes()...)
	return ps
}

// Scan runs every probe over a device of size bytes read through r, whose
// logical sector is sectorSize bytes (0: 512), and returns everything found,
// ordered by offset then type. Reads that fail or fall outside the device
// count as "not there"; Scan never reads outside [0, size).
func Scan(r io.ReaderAt, size, sectorSize int64) []Signature {
	d := NewDev(r, size, sectorSize)
	var found []Signature
	for _, p := range Probes() {
		found = append(found, p.Find(d)...)
	}
	sort.SliceStable(found, func(i, j int) bool {
		if found[i].Offset != found[j].Offset {
			return found[i].Offset < found[j].Offset
		}
		return found[i].Type < found[j].Type
	})
	return found
}
