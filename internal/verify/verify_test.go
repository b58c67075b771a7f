package verify

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

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
	Format(b, 1<<20, 7, 1)
	require.Equal(t, OK, Check(b, 1<<20).Problem)
	// Each sector stands alone: any aligned slice of the block checks.
	require.Equal(t, OK, Check(b[4096:4608], 1<<20+4096).Problem)
}

func TestEveryKindOfDamage(t *testing.T) {
	fresh := func() []byte { b := block(4096, 2); Format(b, 40960, 9, 3); return b }

	b := fresh()
	b[1000] ^= 0x01 // one bit in the payload of sector 1
	f := Check(b, 40960)
	require.Equal(t, BadChecksum, f.Problem)
	require.EqualValues(t, 40960+512, f.Offset)

	b = fresh()
	clear(b[2048:2560]) // a zeroed sector
	f = Check(b, 40960)
	require.Equal(t, NoMagic, f.Problem)
	require.EqualValues(t, 40960+2048, f.Offset)

	b = fresh()
	f = Check(b, 40960+4096) // read back from the wrong place
	require.Equal(t, Misplaced, f.Problem)
	require.EqualValues(t, 40960+4096, f.Offset)
	require.EqualValues(t, 40960, f.Found)
	require.Contains(t, f.Error(), "misdirected")

	b = block(4096, 4) // never formatted
	require.Equal(t, NoMagic, Check(b, 0).Problem)

	b = fresh()
	b[crcOff] ^= 0xff // the checksum itself
	require.Equal(t, BadChecksum, Check(b, 40960).Problem)
}

func TestRewriteStaysValid(t *testing.T) {
	// Writes reuse buffers that hold what was read: formatting again over
	// old sectors gives sound sectors for the new place.
	b := block(4096, 5)
	Format(b, 0, 1, 1)
	Format(b, 8192, 2, 2)
	require.Equal(t, OK, Check(b, 8192).Problem)
	require.Equal(t, Misplaced, Check(b, 0).Problem)
}

func BenchmarkFormat4k(b *testing.B) {
	buf := block(4096, 6)
	b.SetBytes(4096)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Format(buf, int64(i)*4096, 1, uint64(i))
	}
}

func BenchmarkCheck4k(b *testing.B) {
	buf := block(4096, 7)
	Format(buf, 0, 1, 1)
	b.SetBytes(4096)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if Check(buf, 0).Problem != OK {
			b.Fatal("bad")
		}
	}
}

func TestHeadersDoNotCompress(t *testing.T) {
	// Two sectors with the same payload key still get different headers
	// when their offsets differ, and no header word is constant.
	b := block(64*SectorSize, 8)
	Format(b, 0, 1, 0)
	seen := map[uint64]bool{}
	for s := 0; s < len(b); s += SectorSize {
		w := binary.LittleEndian.Uint64(b[s:])
		require.False(t, seen[w], "magic word repeats at sector %d", s/SectorSize)
		seen[w] = true
	}
}
