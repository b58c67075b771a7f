package blkid

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/blkid/handmade"
	"github.com/ioprobe/ioprobe/internal/testdeps"
)

// randomImage is a device of size bytes whose first and last MiB are
// pseudo-random (what the red team fills devices with), the rest zero.
func randomImage(size int64, seed uint64) []byte {
	img := make([]byte, size)
	rng := rand.New(rand.NewPCG(seed, 7))
	fill := func(p []byte) {
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
	}
	fill(img[:min(size, 1<<20)])
	fill(img[max(0, size-1<<20):])
	return img
}

// typesAt lists what Scan finds as "type@offset".
func typesAt(img []byte, sector int64) map[string][]int64 {
	got := map[string][]int64{}
	for _, s := range Scan(bytes.NewReader(img), int64(len(img)), sector) {
		got[s.Type] = append(got[s.Type], s.Offset)
	}
	return got
}

// Every hand-built filesystem header is found, and nothing else is, on
// random data.
func TestFilesystemHeaders(t *testing.T) {
	for i, h := range handmade.FSHeaders() {
		t.Run(h.Name, func(t *testing.T) {
			// The headers lie in the first few MiB: a device just past them
			// is enough, and cheaper than h.Size.
			size := int64(4 << 20)
			for _, p := range h.Build(h.Size) {
				require.Less(t, p.Off+int64(len(p.Data)), size, "a header past 4 MiB: build it at its own size")
			}
			img := randomImage(size, uint64(i))
			handmade.Apply(img, h.Build(size))
			got := typesAt(img, 512)
			require.Contains(t, got, h.Type)
			require.Len(t, got, 1, "only %s: %v", h.Type, got)
		})
	}
}

// Random data holds no filesystem: eager is not the same as credulous.
func TestRandomDataHoldsNothing(t *testing.T) {
	for seed := uint64(0); seed < 8; seed++ {
		img := randomImage(8<<20, 100+seed)
		require.Empty(t, Scan(bytes.NewReader(img), int64(len(img)), 512), "seed %d", seed)
	}
}

// The ext family is told apart as libblkid does, in its order.
func TestExtGenerations(t *testing.T) {
	tests := []struct {
		name string
		img  []byte
		want string
	}{
		{"ext2", extImage(0, 1, 0, 0x2, 0x1, 0), "ext2"},
		{"ext3: a journal", extImage(2, 1, 0x4, 0x2|0x4, 0x1, 0), "ext3"},
		{"ext4: extents", extImage(2, 1, 0x4, 0x2|0x40, 0x1, 0), "ext4"},
		{"ext4 without a journal", extImage(2, 1, 0, 0x40|0x80|0x200, 0x8, 0), "ext4"},
		{"ext4: huge_file alone", extImage(2, 1, 0x4, 0x2, 0x8, 0), "ext4"},
		{"ext4dev: the test flag", extImage(2, 1, 0x4, 0x40, 0x1, 0x4), "ext4dev"},
		{"jbd: an external journal", extImage(2, 1, 0, 0x8, 0, 0x4), "jbd"},
		{"ext2 with a feature libblkid does not expect, still somebody's", extImage(0, 1, 0, 0x4, 0, 0), "ext2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, map[string][]int64{tc.want: {1080}}, typesAt(tc.img, 512))
		})
	}
	require.Empty(t, typesAt(extImage(200, 1, 0, 0, 0, 0), 512), "an impossible block size: random bytes, not ext")
	require.Empty(t, typesAt(extImage(2, 9, 0, 0, 0, 0), 512), "an unknown revision: random bytes, not ext")
}

func fatBoot(typeOff int, typ string) []byte {
	img := make([]byte, 1<<20)
	copy(img, []byte{0xEB, 0x3C, 0x90})
	copy(img[3:], "mkfs.fat")
	binary.LittleEndian.PutUint16(img[11:], 512)
	img[13] = 4
	binary.LittleEndian.PutUint16(img[14:], 1)
	img[16] = 2
	img[21] = 0xf8
	copy(img[typeOff:], typ)
	img[510], img[511] = 0x55, 0xAA
	return img
}

// wipefs lists every FAT magic it finds (type string, jump, boot
// signature): so does Scan.
func TestVFATMagics(t *testing.T) {
	require.Equal(t, []int64{0, 54, 510}, typesAt(fatBoot(54, "FAT16   "), 512)["vfat"])
	require.Equal(t, []int64{0, 82, 510}, typesAt(fatBoot(82, "FAT32   "), 512)["vfat"])
	noBPB := fatBoot(54, "FAT16   ")
	noBPB[13] = 3 // sectors per cluster must be a power of two
	require.NotContains(t, typesAt(noBPB, 512), "vfat")
	jfs := fatBoot(54, "JFS     ")
	require.NotContains(t, typesAt(jfs, 512), "vfat", "OS/2's FAT-like header in front of JFS is not FAT")
	require.True(t, IsVFAT(NewDev(bytes.NewReader(fatBoot(82, "FAT32   ")), 1<<20, 512)))
}

// The copies libblkid does not read are found on their own too: the first
// copy may be what got overwritten.
func TestBackupSuperblocks(t *testing.T) {
	const size = 80 << 20
	img := make([]byte, size)
	copy(img[64<<20+0x40:], "_BHRfS_M")
	require.Equal(t, []int64{64<<20 + 0x40}, typesAt(img, 512)["btrfs"], "btrfs's first mirror")

	img = make([]byte, 1<<20)
	binary.LittleEndian.PutUint32(img[5<<10:], 0xF2F52010)
	require.Equal(t, []int64{5 << 10}, typesAt(img, 512)["f2fs"], "f2fs's second superblock")

	img = make([]byte, 4<<20)
	back := int64(len(img))/512*512 - 8*512
	binary.LittleEndian.PutUint16(img[back+6:], 0x3434)
	binary.LittleEndian.PutUint16(img[back+8:], 1024)
	require.Equal(t, []int64{back + 6}, typesAt(img, 512)["nilfs2"], "nilfs2's superblock at the end")

	for _, bs := range []int64{512, 2048, 4096} {
		img = make([]byte, 8<<20)
		tag := img[256*bs:]
		binary.LittleEndian.PutUint16(tag, 2)
		binary.LittleEndian.PutUint32(tag[12:], 256)
		var sum byte
		for i, b := range tag[:16] {
			if i != 4 {
				sum += b
			}
		}
		tag[4] = sum
		require.Equal(t, []int64{256 * bs}, typesAt(img, 512)["udf"], "a UDF anchor at block 256 of %d bytes, its recognition sequence erased", bs)
	}
}

// Dev never reads outside the device, and says so instead.
func TestDevBounds(t *testing.T) {
	d := NewDev(bytes.NewReader([]byte("0123456789")), 10, 0)
	require.Equal(t, int64(512), d.SectorSize)
	require.Equal(t, []byte("89"), d.At(8, 2))
	require.Nil(t, d.At(9, 2))
	require.Nil(t, d.At(-1, 1))
	require.Nil(t, d.At(11, 0))
	require.True(t, d.Has(0, "0123"))
	require.False(t, d.Has(8, "890"))
	require.Equal(t, uint32(0), d.U32LE(8))
	require.Equal(t, uint16(0x3938), d.U16LE(8))
}

// An ext filesystem whose first MiB was wiped is still found, by the
// backup superblock mke2fs put at the start of block group 1.
func TestExtBackupSuperblock(t *testing.T) {
	mkfs := testdeps.LookPath(t, "mkfs.ext4")
	for _, bs := range []string{"1024", "4096"} {
		img := filepath.Join(t.TempDir(), "ext4")
		require.NoError(t, os.WriteFile(img, nil, 0o600))
		require.NoError(t, os.Truncate(img, 256<<20))
		out, err := exec.Command(mkfs, "-q", "-F", "-b", bs, img).CombinedOutput()
		require.NoError(t, err, "%s", out)
		f, err := os.OpenFile(img, os.O_RDWR, 0)
		require.NoError(t, err)
		defer f.Close()
		_, err = f.WriteAt(make([]byte, 1<<20), 0)
		require.NoError(t, err)
		want := map[string]int64{"1024": 8193*1024 + 0x38, "4096": 32768*4096 + 0x38}[bs]
		var got []string
		for _, s := range Scan(f, 256<<20, 512) {
			got = append(got, fmt.Sprintf("%s@%d", s.Type, s.Offset))
		}
		require.Equal(t, []string{fmt.Sprintf("ext4@%d", want)}, got, "%s-byte blocks", bs)
	}
}
