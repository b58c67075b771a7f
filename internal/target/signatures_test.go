package target

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

const imgSize = 1 << 20

func put(b []byte, off int, p []byte) []byte { copy(b[off:], p); return b }

func le16(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }
func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// extSB writes an ext superblock at 1024 with the given features.
func extSB(b []byte, logBlock, rev, compat, incompat uint32) []byte {
	put(b, 1024+24, le32(logBlock))
	put(b, 1024+56, le16(0xEF53))
	put(b, 1024+76, le32(rev))
	put(b, 1024+0x5C, le32(compat))
	put(b, 1024+0x60, le32(incompat))
	return b
}

// fatBoot writes a FAT boot sector with its type string at typeOff.
func fatBoot(b []byte, typeOff int, typ string) []byte {
	put(b, 0, []byte{0xEB, 0x3C, 0x90})
	put(b, 3, []byte("mkfs.fat"))
	put(b, 11, le16(512))
	b[13] = 4
	put(b, 14, le16(1))
	b[16] = 2
	put(b, typeOff, []byte(typ))
	b[510], b[511] = 0x55, 0xAA
	return b
}

// mbr writes an MBR with entries of the given partition types.
func mbr(b []byte, types ...byte) []byte {
	for i, t := range types {
		e := 446 + 16*i
		b[e+4] = t
		put(b, e+8, le32(uint32(2048*(i+1))))
		put(b, e+12, le32(1024))
	}
	b[510], b[511] = 0x55, 0xAA
	return b
}

func TestDetectSignatures(t *testing.T) {
	blank := func() []byte { return make([]byte, imgSize) }
	random := make([]byte, imgSize)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	md090 := imgSize&^(64<<10-1) - 64<<10
	md10 := ((imgSize >> 9) - 16) &^ 7 << 9

	type sig struct {
		typ string
		off int64
	}
	tests := []struct {
		name   string
		img    []byte
		sector int64
		want   []sig
	}{
		{"blank", blank(), 512, nil},
		{"random data", random, 512, nil},
		{"ext4", extSB(blank(), 2, 1, 0x4, 0x40|0x200), 512, []sig{{"ext4", 1080}}},
		{"ext3", extSB(blank(), 2, 1, 0x4, 0x2), 512, []sig{{"ext3", 1080}}},
		{"ext2", extSB(blank(), 0, 0, 0, 0x2), 512, []sig{{"ext2", 1080}}},
		{"ext magic with an impossible block size", extSB(blank(), 200, 1, 0, 0), 512, nil},
		{"xfs", put(blank(), 0, []byte("XFSB")), 512, []sig{{"xfs", 0}}},
		{"btrfs", put(blank(), 65600, []byte("_BHRfS_M")), 512, []sig{{"btrfs", 65600}}},
		{"ntfs", put(blank(), 3, []byte("NTFS    ")), 512, []sig{{"ntfs", 3}}},
		{"exfat", put(blank(), 3, []byte("EXFAT   ")), 512, []sig{{"exfat", 3}}},
		{"iso9660", put(blank(), 32769, []byte("CD001")), 512, []sig{{"iso9660", 32769}}},
		{"squashfs", put(blank(), 0, []byte("hsqs")), 512, []sig{{"squashfs", 0}}},
		{"luks", put(blank(), 0, []byte("LUKS\xba\xbe")), 512, []sig{{"luks", 0}}},
		{"f2fs", put(blank(), 1024, le32(0xF2F52010)), 512, []sig{{"f2fs", 1024}}},
		{"bcache", put(blank(), 4096+24, []byte("\xc6\x85\x73\xf6\x4e\x1a\x45\xca\x82\x65\xf5\x7f\x48\xba\x6d\x81")), 512, []sig{{"bcache", 4120}}},
		{"fat16 (no MBR reported for its boot sector)", fatBoot(blank(), 54, "FAT16   "), 512, []sig{{"vfat", 54}}},
		{"fat32", fatBoot(blank(), 82, "FAT32   "), 512, []sig{{"vfat", 82}}},
		{"swap, 4 KiB pages", put(blank(), 4086, []byte("SWAPSPACE2")), 512, []sig{{"swap", 4086}}},
		{"old swap", put(blank(), 4086, []byte("SWAP-SPACE")), 512, []sig{{"swap", 4086}}},
		{"swap, 64 KiB pages", put(blank(), 65526, []byte("SWAPSPACE2")), 512, []sig{{"swap", 65526}}},
		{"lvm2 label in sector 1", put(blank(), 512, []byte("LABELONE\x01\x00\x00\x00")), 512, []sig{{"lvm2", 512}}},
		{"lvm2 label in sector 0", put(blank(), 0, []byte("LABELONE")), 512, []sig{{"lvm2", 0}}},
		{"md v1.2", put(blank(), 4096, le32(0xa92b4efc)), 512, []sig{{"md", 4096}}},
		{"md v1.1", put(blank(), 0, le32(0xa92b4efc)), 512, []sig{{"md", 0}}},
		{"md v1.0 near the end", put(blank(), md10, le32(0xa92b4efc)), 512, []sig{{"md", int64(md10)}}},
		{"md v0.90 little-endian", put(blank(), md090, le32(0xa92b4efc)), 512, []sig{{"md", int64(md090)}}},
		{"md v0.90 big-endian", put(blank(), md090, be32(0xa92b4efc)), 512, []sig{{"md", int64(md090)}}},
		{"md magic elsewhere is nothing", put(blank(), 8192, le32(0xa92b4efc)), 512, nil},
		{"zfs uberblock", put(blank(), 128<<10+3<<10, le64(0x00bab10c)), 512, []sig{{"zfs", 128<<10 + 3<<10}}},
		{"gpt, 512-byte sectors", put(mbr(blank(), 0xEE), 512, []byte("EFI PART")), 512, []sig{{"gpt", 512}}},
		{"gpt, 4 KiB sectors", put(mbr(blank(), 0xEE), 4096, []byte("EFI PART")), 4096, []sig{{"gpt", 4096}}},
		{"gpt backup header only", put(blank(), imgSize-512, []byte("EFI PART")), 512, []sig{{"gpt", imgSize - 512}}},
		{"mbr with two partitions", mbr(blank(), 0x83, 0x82), 512, []sig{{"mbr", 510}}},
		{"protective mbr without gpt header", mbr(blank(), 0xEE), 512, []sig{{"mbr", 510}}},
		{"0x55AA over boot code is not a partition table", put(mbr(blank(), 0x83), 446, []byte{0x33}), 512, nil},
		{"0x55AA with empty entries", mbr(blank()), 512, nil},
		{"several at once", put(extSB(blank(), 2, 1, 0, 0x40), 4096, le32(0xa92b4efc)), 512, []sig{{"ext4", 1080}, {"md", 4096}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := DetectSignatures(bytes.NewReader(tc.img), int64(len(tc.img)), tc.sector)
			var gotSigs []sig
			for _, s := range got {
				gotSigs = append(gotSigs, sig{s.Type, s.Offset})
				require.NotEmpty(t, s.What)
			}
			require.ElementsMatch(t, tc.want, gotSigs)
		})
	}
}

func TestSignatureString(t *testing.T) {
	got := DetectSignatures(bytes.NewReader(extSB(make([]byte, 8192), 2, 1, 0, 0x40)), 8192, 512)
	require.Len(t, got, 1)
	require.Equal(t, "an ext4 filesystem (signature at byte 1080)", got[0].String())
	got = DetectSignatures(bytes.NewReader(mbr(make([]byte, 8192), 0x83, 0x83)), 8192, 512)
	require.Len(t, got, 1)
	require.Equal(t, "an MBR partition table with 2 partition entries (signature at byte 510)", got[0].String())
}

// The device code reads only a head and a tail window; detection through
// them must see what it sees on the whole device, also at the end.
func TestDetectSignaturesThroughWindows(t *testing.T) {
	const size = 8 << 20
	img := make([]byte, size)
	md090 := size&^(64<<10-1) - 64<<10
	put(img, md090, le32(0xa92b4efc))
	put(img, 65600, []byte("_BHRfS_M"))
	put(img, size-512, []byte("EFI PART"))
	w := windowReader{head: img[:sigHead], tail: img[size-sigTail:], tailOff: size - sigTail}
	require.Equal(t, DetectSignatures(bytes.NewReader(img), size, 512), DetectSignatures(w, size, 512))
	require.Len(t, DetectSignatures(w, size, 512), 3)

	_, err := w.ReadAt(make([]byte, 16), sigHead)
	require.Error(t, err, "a read between the windows must fail, not return zeros")
}

func TestDetectSignaturesTinyDevices(t *testing.T) {
	for _, size := range []int{0, 1, 511, 512, 4096, 12288} {
		require.Empty(t, DetectSignatures(bytes.NewReader(make([]byte, size)), int64(size), 512), "size %d", size)
	}
}

// Images made by the real tools, not by hand, must be recognised too.
func TestDetectSignaturesOfRealTools(t *testing.T) {
	tests := []struct {
		tool string
		args []string
		want string
	}{
		{"mkfs.ext4", []string{"-q", "-F"}, "ext4"},
		{"mkswap", nil, "swap"},
		{"mkfs.vfat", nil, "vfat"},
		{"mkfs.xfs", []string{"-q"}, "xfs"},
		{"mkfs.btrfs", []string{"-q"}, "btrfs"},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			bin, err := exec.LookPath(tc.tool)
			if err != nil {
				t.Skipf("%s is not installed", tc.tool)
			}
			img := filepath.Join(t.TempDir(), "img")
			require.NoError(t, os.WriteFile(img, nil, 0o600))
			require.NoError(t, os.Truncate(img, 320<<20))
			out, err := exec.Command(bin, append(tc.args, img)...).CombinedOutput()
			require.NoError(t, err, "%s", out)
			f, err := os.Open(img)
			require.NoError(t, err)
			defer f.Close()
			var types []string
			for _, s := range DetectSignatures(f, 320<<20, 512) {
				types = append(types, s.Type)
			}
			require.Equal(t, []string{tc.want}, types)
		})
	}
}
