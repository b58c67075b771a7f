package verify

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// testKey stands for the key of one file target.
var testKey = FileKey(0x1234, 99, 1700000000, 5)

func block(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestFormatThenCheck(t *testing.T) {
	b := block(8192, 1)
	Format(b, 1<<20, testKey, 7, 1)
	require.Equal(t, OK, Check(b, 1<<20, testKey).Problem)
	// Each sector stands alone: any aligned slice of the block checks.
	require.Equal(t, OK, Check(b[4096:4608], 1<<20+4096, testKey).Problem)
}

func TestEveryKindOfDamage(t *testing.T) {
	fresh := func() []byte { b := block(4096, 2); Format(b, 40960, testKey, 9, 3); return b }

	b := fresh()
	b[1000] ^= 0x01 // one bit in the payload of sector 1
	f := Check(b, 40960, testKey)
	require.Equal(t, BadChecksum, f.Problem)
	require.EqualValues(t, 40960+512, f.Offset)

	b = fresh()
	clear(b[2048:2560]) // a zeroed sector
	f = Check(b, 40960, testKey)
	require.Equal(t, NoMagic, f.Problem)
	require.EqualValues(t, 40960+2048, f.Offset)

	b = fresh()
	f = Check(b, 40960+4096, testKey) // read back from the wrong place
	require.Equal(t, Misplaced, f.Problem)
	require.EqualValues(t, 40960+4096, f.Offset)
	require.EqualValues(t, 40960, f.Found)
	require.Contains(t, f.Error(), "misdirected")

	b = block(4096, 4) // never formatted
	require.Equal(t, NoMagic, Check(b, 0, testKey).Problem)

	b = fresh()
	b[crcOff] ^= 0xff // the checksum itself
	require.Equal(t, BadChecksum, Check(b, 40960, testKey).Problem)
}

func TestRewriteStaysValid(t *testing.T) {
	// Writes reuse buffers that hold what was read: formatting again over
	// old sectors gives sound sectors for the new place.
	b := block(4096, 5)
	Format(b, 0, testKey, 1, 1)
	Format(b, 8192, testKey, 2, 2)
	require.Equal(t, OK, Check(b, 8192, testKey).Problem)
	require.Equal(t, Misplaced, Check(b, 0, testKey).Problem)
}

func BenchmarkFormat4k(b *testing.B) { benchStamp(b, Format) }

// What a plain write costs per 4 KiB block to stay recognisable.
func BenchmarkMark4k(b *testing.B) { benchStamp(b, Mark) }

func benchStamp(b *testing.B, stamp func([]byte, int64, uint64, uint64, uint64)) {
	buf := block(4096, 6)
	b.SetBytes(4096)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		stamp(buf, int64(i)*4096, testKey, 1, uint64(i))
	}
}

func BenchmarkCheck4k(b *testing.B) {
	buf := block(4096, 7)
	Format(buf, 0, testKey, 1, 1)
	b.SetBytes(4096)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if Check(buf, 0, testKey).Problem != OK {
			b.Fatal("bad")
		}
	}
}

func TestHeadersDoNotCompress(t *testing.T) {
	// No header word repeats from one sector to the next, checksummed or
	// plain: a compressing device finds no pattern in them.
	for _, stamp := range []func([]byte, int64, uint64, uint64, uint64){Format, Mark} {
		b := block(64*SectorSize, 8)
		stamp(b, 0, testKey, 1, 0)
		for w := 0; w < 32; w += 8 {
			seen := map[uint64]bool{}
			for s := 0; s < len(b); s += SectorSize {
				v := binary.LittleEndian.Uint64(b[s+w:])
				require.False(t, seen[v], "header word %d repeats at sector %d", w/8, s/SectorSize)
				seen[v] = true
			}
		}
	}
}

// Plain writes (Mark) keep sectors recognisable and in their place, and a
// sector formatted either way reads the same stamp back.
func TestMarkedSectorsCheck(t *testing.T) {
	b := block(4096, 9)
	Format(b, 0, testKey, 1, 1) // a checksummed sector read into the buffer earlier
	Mark(b, 12288, testKey, 5, 6)
	require.Equal(t, OK, Check(b, 12288, testKey).Problem, "a stale checksum field is not judged on a plain sector")
	require.Equal(t, OK, Recognise(b, 12288, testKey).Problem)
	f := Check(b, 8192, testKey)
	require.Equal(t, Misplaced, f.Problem)
	require.EqualValues(t, 12288, f.Found)
	run, seq, summed := Stamp(b[512:1024], testKey)
	require.Equal(t, []uint64{5, 6}, []uint64{run, seq})
	require.False(t, summed)

	Format(b, 12288, testKey, 7, 8) // and back: checksummed again
	run, seq, summed = Stamp(b, testKey)
	require.Equal(t, []uint64{7, 8}, []uint64{run, seq})
	require.True(t, summed)
	b[700] ^= 1
	require.Equal(t, BadChecksum, Check(b, 12288, testKey).Problem)
	require.Equal(t, OK, Recognise(b, 12288, testKey).Problem, "Recognise ignores checksums")

	clear(b[1024:1536])
	f = Recognise(b, 12288, testKey)
	require.Equal(t, NoMagic, f.Problem)
	require.EqualValues(t, 12288+1024, f.Offset)
}

// A sector is ioprobe's only under the key of the file it was written to:
// the same bytes in another file (another key) are not recognised, and
// keys differ with any part of a file's identity.
func TestKeyBindsSectorsToTheirFile(t *testing.T) {
	b := block(4096, 10)
	Mark(b, 0, testKey, 1, 1)
	require.Equal(t, OK, Recognise(b, 0, testKey).Problem)
	for _, other := range []uint64{
		FileKey(0x1235, 99, 1700000000, 5), // another id
		FileKey(0x1234, 98, 1700000000, 5), // another inode
		FileKey(0x1234, 99, 1700000001, 5), // born at another second
		FileKey(0x1234, 99, 1700000000, 6), // or nanosecond
		0,                                  // no file key (a device)
	} {
		require.NotEqual(t, testKey, other)
		f := Recognise(b, 0, other)
		require.Equal(t, NoMagic, f.Problem)
		require.EqualValues(t, 0, f.Offset)
	}
}

// Zeroed storage, and storage of any other content, never reads as
// ioprobe's, under any key.
func TestZeroesAreNeverIoprobes(t *testing.T) {
	z := make([]byte, 4096)
	for _, k := range []uint64{0, 1, testKey} {
		require.Equal(t, NoMagic, Recognise(z, 0, k).Problem)
		require.Equal(t, NoMagic, Recognise(block(4096, k), 0, k).Problem)
	}
}

// TestMarkUnaligned: buffered writes of any offset and length (fio's
// bs=2300) keep every sector of the target recognisable: after writes
// tiling a region in 2300-byte pieces, each 512-byte sector reads as a
// plain ioprobe sector at its own offset, as after aligned writes.
func TestMarkUnaligned(t *testing.T) {
	const key, size = 0x1234, 2300 * 40
	target := make([]byte, size/SectorSize*SectorSize+SectorSize)
	for off := 0; off+2300 <= len(target); off += 2300 {
		buf := make([]byte, 2300)
		for i := range buf {
			buf[i] = byte(i*7 + off)
		}
		Mark(buf, int64(off), key, 1, uint64(off))
		copy(target[off:], buf)
	}
	for sec := 0; sec+SectorSize <= 2300*(len(target)/2300)/SectorSize*SectorSize; sec += SectorSize {
		found, _, ok := plainWords(target[sec:sec+SectorSize], key)
		require.True(t, ok, "sector at %d", sec)
		require.Equal(t, uint64(sec), found)
	}
	require.Zero(t, testing.AllocsPerRun(100, func() { Mark(target[100:2400], 100, key, 1, 2) }))
}

// TestUnalignedWritesKeepSectorsSound: buffered writes of odd sizes at
// odd offsets over a filled (checksummed) target, some at once with the
// write beside them (both prepared from the same old bytes, landing in
// either order), leave every sector sound — recognised as the file's and
// its checksum right where it still has one — when each write keeps what
// Keep names. Mark alone tears the sectors whose header a write starts in
// or ends in: a 2300-byte write after a read (issue 35).
func TestUnalignedWritesKeepSectorsSound(t *testing.T) {
	const size = 1 << 20
	r := rand.New(rand.NewPCG(35, 2300))
	run := func(keep bool) Failure {
		disk := block(size, 7)
		Format(disk, 0, testKey, 1, 0)
		prepare := func(off int64, n int, seq uint64) []byte {
			buf := block(n, seq)
			Mark(buf, off, testKey, 2, seq)
			if keep {
				ranges, k := Keep(off, n)
				for _, rg := range ranges[:k] {
					copy(buf[rg[0]-off:rg[1]-off], disk[rg[0]:rg[1]])
				}
			}
			return buf
		}
		seq := uint64(0)
		for i := 0; i < 2000; i++ {
			n := []int{2300, 100, 513, 31, 4096 + 7, 700}[r.IntN(6)]
			off := r.Int64N(size - 2*int64(n) - 1)
			if r.IntN(3) == 0 {
				off = off / 2300 * 2300 // fio's bs=2300 stream
			}
			seq++
			a := prepare(off, n, seq)
			if r.IntN(2) == 0 { // the next write, prepared before this one lands
				seq++
				b := prepare(off+int64(n), n, seq)
				if r.IntN(2) == 0 {
					copy(disk[off+int64(n):], b)
					copy(disk[off:], a)
				} else {
					copy(disk[off:], a)
					copy(disk[off+int64(n):], b)
				}
				continue
			}
			copy(disk[off:], a)
		}
		if f := Recognise(disk, 0, testKey); f.Problem != OK {
			return f
		}
		return Check(disk, 0, testKey)
	}
	require.Equal(t, OK, run(true).Problem, "%v", run(true))
	require.NotEqual(t, OK, run(false).Problem, "Mark alone tears sectors")
}

func TestKeep(t *testing.T) {
	for _, c := range []struct {
		off  int64
		n    int
		want [][2]int64
	}{
		{0, 4096, nil},   // whole sectors
		{512, 2300, nil}, // starts on a sector, ends past the next one's header
		{512, 512 + 20, [][2]int64{{1024, 1044}}},         // ends inside a header
		{434700, 2300, [][2]int64{{434700, 435200}}},      // starts inside a sector (issue 35's byte 434688)
		{100, 10, [][2]int64{{100, 110}}},                 // inside one sector
		{0, 10, [][2]int64{{0, 10}}},                      // part of one header
		{0, 100, nil},                                     // a whole header: the sector becomes plain
		{300, 1241, [][2]int64{{300, 512}, {1536, 1541}}}, // both ends
	} {
		r, k := Keep(c.off, c.n)
		var got [][2]int64
		got = append(got, r[:k]...)
		require.Equal(t, c.want, got, "%d bytes at %d", c.n, c.off)
	}
	require.Zero(t, testing.AllocsPerRun(100, func() { Keep(300, 2300) }))
}
