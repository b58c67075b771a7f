package verify

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Sector layout (little endian):
//
//	0   magic   "IOPRBSV1"
//	8   offset  byte offset of this sector in the target
//	16  run     identifier of the run that wrote it
//	24  seq     the writer's sequence number (distinct contents for every write)
//	32  crc     CRC-32C of the 512 bytes with this field zero
//	36  payload whatever the buffer held (random data from the fill or an earlier read)
//
// The four header words are stored XORed with keys derived from payload
// bytes 40–47, so that no two sectors share a byte pattern: a compressing
// or deduplicating device must not be flattered by a constant header.
const (
	SectorSize = 512
	magic      = uint64(0x3156534252504f49) // "IOPRBSV1" read little endian
	crcOff     = 32
	keyOff     = 40
)

// key is the mask of header word i for a sector whose key bytes hold k
// (the splitmix64 finaliser: every bit of k moves every bit of the mask).
func key(k uint64, i uint64) uint64 {
	x := k + (i+1)*0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Format stamps every sector of buf, which is written at byte offset off of
// the target. len(buf) and off must be multiples of SectorSize.
func Format(buf []byte, off int64, run, seq uint64) {
	for s := 0; s+SectorSize <= len(buf); s += SectorSize {
		p := buf[s : s+SectorSize : s+SectorSize]
		k := binary.LittleEndian.Uint64(p[keyOff:])
		binary.LittleEndian.PutUint64(p[0:], magic^key(k, 0))
		binary.LittleEndian.PutUint64(p[8:], (uint64(off)+uint64(s))^key(k, 1))
		binary.LittleEndian.PutUint64(p[16:], run^key(k, 2))
		binary.LittleEndian.PutUint64(p[24:], seq^key(k, 3))
		binary.LittleEndian.PutUint32(p[crcOff:], 0)
		binary.LittleEndian.PutUint32(p[crcOff:], crc32.Checksum(p, castagnoli))
	}
}

// Problem says what is wrong with a sector.
type Problem uint8

// Problems, from the most to the least telling.
const (
	OK          Problem = iota
	NoMagic             // not a sector ioprobe wrote: overwritten, zeroed, or never formatted
	Misplaced           // a sound sector that belongs at another offset: a misdirected write or read
	BadChecksum         // the header is there but the contents changed: corruption or a torn write
	Stale               // a sound sector older than the last write that completed there: a lost write
)

func (p Problem) String() string {
	switch p {
	case OK:
		return "ok"
	case NoMagic:
		return "not an ioprobe sector (overwritten or zeroed)"
	case Misplaced:
		return "sector belongs elsewhere (misdirected I/O)"
	case BadChecksum:
		return "checksum mismatch (corrupted or torn)"
	case Stale:
		return "an older version of the sector (lost write)"
	}
	return fmt.Sprintf("problem %d", uint8(p))
}

// Failure is the first bad sector of a buffer.
type Failure struct {
	Offset  int64   // byte offset of the bad sector in the target
	Problem Problem // what is wrong with it
	Found   int64   // for Misplaced: the offset the sector says it belongs at
}

func (f Failure) Error() string {
	if f.Problem == Misplaced {
		return fmt.Sprintf("sector at %d: %s: it says %d", f.Offset, f.Problem, f.Found)
	}
	return fmt.Sprintf("sector at %d: %s", f.Offset, f.Problem)
}

// Check verifies every sector of buf, read from byte offset off, and
// returns the first bad one (Problem OK when all are sound). It does not
// allocate.
func Check(buf []byte, off int64) Failure {
	for s := 0; s+SectorSize <= len(buf); s += SectorSize {
		p := buf[s : s+SectorSize : s+SectorSize]
		at := off + int64(s)
		k := binary.LittleEndian.Uint64(p[keyOff:])
		if binary.LittleEndian.Uint64(p[0:])^key(k, 0) != magic {
			return Failure{Offset: at, Problem: NoMagic}
		}
		want := binary.LittleEndian.Uint32(p[crcOff:])
		crc := crc32.Update(0, castagnoli, p[:crcOff])
		crc = crc32.Update(crc, castagnoli, zero4[:])
		crc = crc32.Update(crc, castagnoli, p[crcOff+4:])
		if crc != want {
			return Failure{Offset: at, Problem: BadChecksum}
		}
		if got := int64(binary.LittleEndian.Uint64(p[8:]) ^ key(k, 1)); got != at {
			return Failure{Offset: at, Problem: Misplaced, Found: got}
		}
	}
	return Failure{}
}

var zero4 [4]byte

// Stamp returns the run and sequence number a sector was written with.
// Only meaningful for a sector Check found sound.
func Stamp(sector []byte) (run, seq uint64) {
	k := binary.LittleEndian.Uint64(sector[keyOff:])
	return binary.LittleEndian.Uint64(sector[16:]) ^ key(k, 2), binary.LittleEndian.Uint64(sector[24:]) ^ key(k, 3)
}
