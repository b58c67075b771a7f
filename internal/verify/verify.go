package verify

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/bits"

	"github.com/ioprobe/ioprobe/internal/iobuf"
)

// Sector layout (little endian):
//
//	0   magic   "IOPRBSV2" (checksummed) or "IOPRBSP2" (plain: no checksum)
//	8   offset  byte offset of this sector in the target
//	16  run     identifier of the run (or worker) that wrote it
//	24  seq     the writer's sequence number (distinct contents for every write)
//	32  crc     checksummed sectors: CRC-32C of the 512 bytes with this field zero
//	36  payload whatever the buffer held (random data from the fill or an earlier read)
//
// The four header words are stored XORed with masks so that no two
// sectors share a byte pattern (a compressing or deduplicating device must
// not be flattered by a constant header), and so that a sector reads as
// ioprobe's only under the key of the target it was written to: a copy of
// an ioprobe file (another inode) has another key, and its sectors are not
// recognised. Checksummed sectors take their mask from payload bytes
// 40–47 and the key; plain ones from the key and their own offset, so
// that marking a buffer only stores into it and never waits for a load
// (a 1 MiB write touches 2048 cache lines, mostly not in cache).
//
// Every write ioprobe makes keeps the format: --verify's writes and the
// fill are checksummed; plain writes are marked (a header without
// checksum: two multiplies and four stores per sector), so a file stays
// recognisable and every later read of it can still be judged.
const (
	SectorSize = 512
	magicSum   = uint64(0x3256534252504f49) // "IOPRBSV2" read little endian
	magicPlain = uint64(0x3250534252504f49) // "IOPRBSP2"
	crcOff     = 32
	keyOff     = 40
)

// mask is the header mask of a checksummed sector whose key bytes hold k,
// written to a target with key key (of a plain sector with k 0): a
// bijection of k^key, so two keys never give one sector the same mask.
func mask(k, key uint64) uint64 {
	x := (k ^ key) * 0x9e3779b97f4a7c15
	return x ^ x>>29
}

// header stores the four header words of sector p under mask m.
func header(p []byte, m, magic, off, run, seq uint64) {
	binary.LittleEndian.PutUint64(p[0:], magic^m)
	binary.LittleEndian.PutUint64(p[8:], off^bits.RotateLeft64(m, 16))
	binary.LittleEndian.PutUint64(p[16:], run^bits.RotateLeft64(m, 32))
	binary.LittleEndian.PutUint64(p[24:], seq^bits.RotateLeft64(m, 48))
}

// spread varies a plain sector's magic, run and seq words with its offset.
func spread(off uint64) uint64 { return off * 0xd6e8feb86659fd93 }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Format stamps every sector of buf, which is written at byte offset off of
// a target with key key, with a checksummed header. len(buf) and off must
// be multiples of SectorSize.
func Format(buf []byte, off int64, key, run, seq uint64) {
	for s := 0; s+SectorSize <= len(buf); s += SectorSize {
		p := buf[s : s+SectorSize : s+SectorSize]
		header(p, mask(binary.LittleEndian.Uint64(p[keyOff:]), key), magicSum, uint64(off)+uint64(s), run, seq)
		binary.LittleEndian.PutUint32(p[crcOff:], 0)
		binary.LittleEndian.PutUint32(p[crcOff:], crc32.Checksum(p, castagnoli))
	}
}

// Mark stamps every sector of buf like Format, without the checksum: what
// a plain write (no --verify) costs to keep a target recognisable. A
// buffered write need not be whole sectors (fio's bs=2300): then every
// header of the target's own sectors that the write covers, wholly or in
// part, is written where it lies in buf, so the target stays recognisable
// whatever the write's offset and length.
func Mark(buf []byte, off int64, key, run, seq uint64) {
	if off%SectorSize != 0 || len(buf)%SectorSize != 0 {
		markUnaligned(buf, off, key, run, seq)
		return
	}
	m := mask(0, key)
	m1 := bits.RotateLeft64(m, 16)
	for s := 0; s+SectorSize <= len(buf); s += SectorSize {
		p := buf[s : s+32 : s+32]
		o := uint64(off) + uint64(s)
		h := m ^ spread(o)
		binary.LittleEndian.PutUint64(p[0:], magicPlain^h)
		binary.LittleEndian.PutUint64(p[8:], o^m1)
		binary.LittleEndian.PutUint64(p[16:], run^bits.RotateLeft64(h, 32))
		binary.LittleEndian.PutUint64(p[24:], seq^bits.RotateLeft64(h, 48))
	}
}

// markUnaligned is Mark for a write that is not whole sectors.
func markUnaligned(buf []byte, off int64, key, run, seq uint64) {
	m := mask(0, key)
	m1 := bits.RotateLeft64(m, 16)
	end := off + int64(len(buf))
	var hdr [32]byte
	for sec := off / SectorSize * SectorSize; sec < end; sec += SectorSize {
		lo, hi := max(sec, off), min(sec+32, end)
		if lo >= hi {
			continue // the write covers none of this sector's header
		}
		o := uint64(sec)
		h := m ^ spread(o)
		binary.LittleEndian.PutUint64(hdr[0:], magicPlain^h)
		binary.LittleEndian.PutUint64(hdr[8:], o^m1)
		binary.LittleEndian.PutUint64(hdr[16:], run^bits.RotateLeft64(h, 32))
		binary.LittleEndian.PutUint64(hdr[24:], seq^bits.RotateLeft64(h, 48))
		copy(buf[lo-off:hi-off], hdr[lo-sec:hi-sec])
	}
}

// headerBytes is a sector's header: the four words Mark writes.
const headerBytes = 32

// Keep says which bytes of a write of n bytes at off must be written as
// the target holds them already (the caller reads them into the buffer
// after Mark), so that every sector the write touches still describes
// itself afterwards. A write that is not whole sectors (a buffered one,
// fio's bs=2300) covers the sectors at its ends in part. Where it covers
// a sector's whole header, Mark makes it a plain sector, sound whatever
// the rest of it holds. Where it does not — it starts inside the sector,
// or ends inside the header — the bytes before it are another write's
// or the fill's: a checksummed header there keeps its mask in payload
// bytes 40–47 and its CRC over the whole sector, and a plain header
// written over part of it would tear it (the sector no longer reads as
// ioprobe's, and the file is refused as foreign). Such a sector is left
// as it is: the write writes its part of it unchanged. Two writes that
// share a sector and run at once both do, or one makes it plain, so
// either order leaves a sound sector.
//
// It returns at most two ranges [lo, hi) of target offsets, in order;
// none for a write of whole sectors.
func Keep(off int64, n int) (ranges [2][2]int64, count int) {
	end := off + int64(n)
	if n <= 0 || (off%SectorSize == 0 && end%SectorSize == 0) {
		return ranges, 0
	}
	first := off / SectorSize * SectorSize
	if hi := min(end, first+SectorSize); off != first || hi-first < headerBytes {
		ranges[count] = [2]int64{off, hi}
		count++
	}
	if last := (end - 1) / SectorSize * SectorSize; last != first && end-last < headerBytes {
		ranges[count] = [2]int64{last, end}
		count++
	}
	return ranges, count
}

// plainWords decodes a sector as a plain one: the offset it names, its
// mask h, and whether its magic says it is plain.
func plainWords(p []byte, key uint64) (found, h uint64, ok bool) {
	m := mask(0, key)
	found = binary.LittleEndian.Uint64(p[8:]) ^ bits.RotateLeft64(m, 16)
	h = m ^ spread(found)
	return found, h, binary.LittleEndian.Uint64(p[0:])^h == magicPlain
}

// Problem says what is wrong with a sector.
type Problem uint8

// Problems, from the most to the least telling.
const (
	OK          Problem = iota
	NoMagic             // not a sector ioprobe wrote to this target: overwritten, zeroed, or never formatted
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

// Check verifies every sector of buf, read from byte offset off of a
// target with key key, and returns the first bad one (Problem OK when all
// are sound). A plain sector (Mark) has no checksum: only its place is
// checked. It does not allocate.
func Check(buf []byte, off int64, key uint64) Failure {
	return check(buf, off, key, true)
}

// Recognise is Check without the checksums: it says whether buf holds
// sectors ioprobe wrote at off to the target with key key (Problem OK), or
// the first sector that is not (NoMagic) or not in its place (Misplaced).
// It decides whether a file is still ioprobe's.
func Recognise(buf []byte, off int64, key uint64) Failure {
	return check(buf, off, key, false)
}

func check(buf []byte, off int64, key uint64, sums bool) Failure {
	for s := 0; s+SectorSize <= len(buf); s += SectorSize {
		p := buf[s : s+SectorSize : s+SectorSize]
		at := off + int64(s)
		var found int64
		if f, _, plain := plainWords(p, key); plain {
			found = int64(f)
		} else {
			m := mask(binary.LittleEndian.Uint64(p[keyOff:]), key)
			if binary.LittleEndian.Uint64(p[0:])^m != magicSum {
				return Failure{Offset: at, Problem: NoMagic}
			}
			if sums && !sumOK(p) {
				return Failure{Offset: at, Problem: BadChecksum}
			}
			found = int64(binary.LittleEndian.Uint64(p[8:]) ^ bits.RotateLeft64(m, 16))
		}
		if found != at {
			return Failure{Offset: at, Problem: Misplaced, Found: found}
		}
	}
	return Failure{}
}

func sumOK(p []byte) bool {
	crc := crc32.Update(0, castagnoli, p[:crcOff])
	crc = crc32.Update(crc, castagnoli, zero4[:])
	crc = crc32.Update(crc, castagnoli, p[crcOff+4:])
	return crc == binary.LittleEndian.Uint32(p[crcOff:])
}

var zero4 [4]byte

// Stamp returns the run and sequence number a sector of the target with
// key key was written with, and whether it was checksummed. Only
// meaningful for a sector Check found sound.
func Stamp(sector []byte, key uint64) (run, seq uint64, summed bool) {
	if _, h, plain := plainWords(sector, key); plain {
		return binary.LittleEndian.Uint64(sector[16:]) ^ bits.RotateLeft64(h, 32), binary.LittleEndian.Uint64(sector[24:]) ^ bits.RotateLeft64(h, 48), false
	}
	m := mask(binary.LittleEndian.Uint64(sector[keyOff:]), key)
	return binary.LittleEndian.Uint64(sector[16:]) ^ bits.RotateLeft64(m, 32), binary.LittleEndian.Uint64(sector[24:]) ^ bits.RotateLeft64(m, 48), true
}

// FileKey is the key of a file target: the random id its marker records,
// bound to the file's identity (its inode number and birth time), so that
// the sectors of one file do not read as ioprobe's in any other file.
func FileKey(id, ino uint64, btimeSec int64, btimeNsec uint32) uint64 {
	x := id
	for _, v := range [...]uint64{ino, uint64(btimeSec), uint64(btimeNsec)} {
		x = iobuf.Mix64(x ^ v)
	}
	return x | 1 // never 0, the key of a target that is not an ioprobe file
}
