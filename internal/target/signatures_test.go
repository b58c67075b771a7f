package target

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/blkid"
)

// alignedReads serves reads of img like an O_DIRECT descriptor: offsets and
// lengths must be multiples of the logical block, and it counts them.
type alignedReads struct {
	t     *testing.T
	img   []byte
	lbs   int64
	calls int
}

func (a *alignedReads) read(off int64, n int) ([]byte, error) {
	a.calls++
	require.Zero(a.t, off%a.lbs, "unaligned offset %d", off)
	require.Zero(a.t, int64(n)%a.lbs, "unaligned length %d", n)
	require.LessOrEqual(a.t, off+int64(n), int64(len(a.img)), "read past the end")
	return append([]byte(nil), a.img[off:off+int64(n)]...), nil
}

func TestChunkReaderServesWhatTheDeviceHolds(t *testing.T) {
	const size = 3<<20 + 4096 // not a multiple of the chunk
	img := make([]byte, size)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range img {
		img[i] = byte(rng.Uint32())
	}
	dev := &alignedReads{t: t, img: img, lbs: 4096}
	r := newChunkReader(size, 4096, dev.read)
	for i := 0; i < 2000; i++ {
		off := rng.Int64N(size)
		n := rng.IntN(3 * scanChunk)
		p := make([]byte, n)
		got, err := r.ReadAt(p, off)
		want := min(int64(n), size-off)
		require.Equal(t, int(want), got)
		require.Equal(t, img[off:off+want], p[:got])
		if want < int64(n) {
			require.Error(t, err, "a short read says so")
		} else {
			require.NoError(t, err)
		}
	}
	require.LessOrEqual(t, dev.calls, (size+scanChunk-1)/scanChunk, "every chunk is read once")
	_, err := r.ReadAt(make([]byte, 1), size)
	require.Error(t, err)
}

func TestChunkReaderRemembersErrors(t *testing.T) {
	eio := errors.New("EIO")
	sigs, err := scanSignatures(1<<20, 512, 512, func(off int64, n int) ([]byte, error) { return nil, eio })
	require.ErrorIs(t, err, eio, "a device that cannot be read is not one without signatures")
	require.Empty(t, sigs)
	require.Equal(t, []finding{because(RefuseSignature, "cannot read it to look for filesystems and labels: EIO")}, signatureFindings(sigs, err))
}

// A device that can be read only in part (an OPAL drive whose locking
// range is locked fails every read past its LUKS2 header) still shows
// what it holds where it can be read, and the refusal names both.
func TestScanPartlyUnreadable(t *testing.T) {
	const size = 64 << 20
	img := make([]byte, size)
	put(img, 0, []byte("LUKS\xba\xbe\x00\x02"))
	put(img, 208, []byte("HW-OPAL"))
	eio := errors.New("input/output error")
	dev := &alignedReads{t: t, img: img, lbs: 512}
	sigs, err := scanSignatures(size, 512, 512, func(off int64, n int) ([]byte, error) {
		if off+int64(n) > 16<<20 {
			return nil, eio
		}
		return dev.read(off, n)
	})
	require.ErrorIs(t, err, eio)
	require.Len(t, sigs, 1)
	fs := signatureFindings(sigs, err)
	require.Len(t, fs, 2)
	require.Contains(t, fs[0].text, "TYPE=crypto_LUKS")
	require.Contains(t, fs[0].text, "OPAL")
	require.Equal(t, "and parts of it cannot be read to look for more: input/output error", fs[1].text)
}

// A regular file is probed with 512-byte sectors whatever its direct-I/O
// alignment: reads come in 4096-byte multiples, and Intel's metadata in
// the second-to-last 512-byte sector and an Atari root sector are found
// (with 4096-byte sectors libblkid would look elsewhere, and not at all).
func TestFileScanUses512ByteSectors(t *testing.T) {
	const size = 64<<20 + 3*512 // not a multiple of 4096
	img := make([]byte, size)
	put(img, (size/512-2)*512, []byte("Intel Raid ISM Cfg Sig. 1.0.00"))
	be := func(off int, v uint32) {
		img[off], img[off+1], img[off+2], img[off+3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	}
	be(0x1C2, size/512)
	img[0x1C6] = 1
	copy(img[0x1C7:], "GEM")
	be(0x1C6+4, 2)
	be(0x1C6+8, 2048)
	dev := &alignedReads{t: t, img: append(img, make([]byte, 4096)...), lbs: 4096}
	sigs, err := scanSignatures(size, 4096, fileSectorSize, dev.read)
	require.NoError(t, err)
	var got []string
	for _, s := range sigs {
		got = append(got, fmt.Sprintf("%s@%d", s.Type, s.Offset))
	}
	require.Equal(t, []string{"atari@454", fmt.Sprintf("isw_raid_member@%d", (size/512-2)*512)}, got)
}

// Scanning through the chunk reader finds what scanning the bytes finds,
// at the start, in the 1-2 MiB area and at the end, and reads a bounded
// part of the device.
func TestScanSignaturesThroughChunks(t *testing.T) {
	const size = 64 << 20
	img := make([]byte, size)
	put(img, 65600, []byte("_BHRfS_M"))
	put(img, 2<<20, []byte("\x5e\xf1\xab\x2f")) // VMFS
	put(img, size-512, []byte("EFI PART"))
	mbr(img, 0xEE)
	dev := &alignedReads{t: t, img: img, lbs: 512}
	got, err := scanSignatures(size, 512, 512, dev.read)
	require.NoError(t, err)
	require.Equal(t, blkid.Scan(bytes.NewReader(img), size, 512), got)
	var types []string
	for _, s := range got {
		types = append(types, s.Type)
	}
	require.Subset(t, types, []string{"btrfs", "VMFS"})
	t.Logf("a scan of a %d MiB device read %d chunks of %d KiB", size>>20, dev.calls, scanChunk>>10)
	require.Less(t, dev.calls, size/scanChunk/4, "the scan reads what the probes ask for, not the device")
}

func TestSignatureReasonsNameTypesAsBlkid(t *testing.T) {
	sigs := []Signature{
		{Type: "vfat", Usage: blkid.Filesystem, Offset: 54, What: "a FAT filesystem"},
		{Type: "vfat", Usage: blkid.Filesystem, Offset: 0, What: "a FAT filesystem"},
		{Type: "dos", Usage: blkid.PartitionTable, Offset: 510, What: "a DOS partition table"},
		{Type: "ext4", Usage: blkid.Filesystem, Offset: 1080, What: "an ext4 filesystem"},
	}
	require.Equal(t, []string{
		"it holds a FAT filesystem (TYPE=vfat, signatures at bytes 54, 0)",
		"it holds a DOS partition table (PTTYPE=dos, signature at byte 510)",
		"it holds an ext4 filesystem (TYPE=ext4, signature at byte 1080)",
	}, signatureReasons(sigs))
}
