package blkid

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/blkid/handmade"
	"github.com/ioprobe/ioprobe/internal/testdeps"
)

// Every hand-built backup copy is found, alone, where its format's own
// tools look, on a device whose first copy is gone (the rest of it
// pseudo-random); and only by the full scan: the interval look (primary
// places only) does not read there.
func TestBackupHeaders(t *testing.T) {
	const gib = int64(1) << 30
	want := map[string]string{
		"ext4-group1-4k":                fmt.Sprintf("ext4@%d", 32768*4096+0x38),
		"ext4-group3-4k-group1-wiped":   fmt.Sprintf("ext4@%d", 3*32768*4096+0x38),
		"ext4-g4096-1k":                 fmt.Sprintf("ext4@%d", 4097*1024+0x38),
		"ext4-g8192-4k":                 fmt.Sprintf("ext4@%d", 8192*4096+0x38),
		"ext4-bigalloc-4k-64k-clusters": fmt.Sprintf("ext4@%d", 524288*4096+0x38),
		"ext4-64k-blocks":               fmt.Sprintf("ext4@%d", 65528*65536+0x38),
		"xfs-ag1":                       fmt.Sprintf("xfs@%d", 80<<20),
		"xfs-ag2-ag1-wiped":             fmt.Sprintf("xfs@%d", 160<<20),
		"ntfs-last-sector":              fmt.Sprintf("ntfs@%d", 64<<20-512+3),
		"fat32-sector6":                 "vfat@3072",
		"fat32-sector6-4k-sectors":      fmt.Sprintf("vfat@%d", 6*4096),
		"exfat-sector12":                "exfat@6147",
		"exfat-sector12-4k-sectors":     fmt.Sprintf("exfat@%d", 12*4096+3),
		"jfs-secondary":                 "jfs@61440",
		"ocfs2-backup-1g":               fmt.Sprintf("ocfs2@%d", gib),
		"hfsplus-alternate":             fmt.Sprintf("hfsplus@%d", 64<<20-1024),
		"apfs-checkpoint":               fmt.Sprintf("apfs@%d", 2*4096+32),
		"lvm2-metadata-area":            "LVM2_member@4100",
		"lvm2-text-only":                "LVM2_member@4608",
		"vhdx-header-copies":            "vhdx@65536",
	}
	hs := handmade.BackupHeaders()
	require.Len(t, hs, len(want))
	for _, h := range hs {
		t.Run(h.Name, func(t *testing.T) {
			require.Contains(t, want, h.Name)
			dev := patchedDev{h.Size, h.Build(h.Size)}
			require.Equal(t, []string{want[h.Name]}, scanAt(dev, h.Size, false))
			require.Empty(t, scanAt(dev, h.Size, true), "the primary places hold nothing")
		})
	}
}

// A copy is believed only where its own fields say it lies: moved, or
// naming another place, it is random data that happens to hold a magic.
func TestBackupsAtTheirOwnPlaceOnly(t *testing.T) {
	for _, c := range []struct {
		header string
		spoil  func(ps []handmade.Patch)
	}{
		{"ext4-group1-4k", func(ps []handmade.Patch) { binary.LittleEndian.PutUint16(ps[0].Data[0x5A:], 2) }}, // says group 2
		{"ext4-g8192-4k", func(ps []handmade.Patch) { binary.LittleEndian.PutUint32(ps[0].Data[0x20:], 16384) }},
		{"xfs-ag1", func(ps []handmade.Patch) { binary.BigEndian.PutUint32(ps[0].Data[84:], 20000) }},
		{"xfs-ag2-ag1-wiped", func(ps []handmade.Patch) { binary.BigEndian.PutUint32(ps[0].Data[88:], 2) }}, // AG 2 of 2 AGs
		{"ntfs-last-sector", func(ps []handmade.Patch) { binary.LittleEndian.PutUint16(ps[0].Data[11:], 4096) }},
		{"fat32-sector6", func(ps []handmade.Patch) { binary.LittleEndian.PutUint16(ps[0].Data[0x32:], 7) }},
		{"exfat-sector12", func(ps []handmade.Patch) { ps[0].Data[108] = 12 }},
		{"jfs-secondary", func(ps []handmade.Patch) { binary.LittleEndian.PutUint16(ps[0].Data[20:], 11) }},
		{"ocfs2-backup-1g", func(ps []handmade.Patch) { binary.LittleEndian.PutUint64(ps[0].Data[0x50:], 262145) }},
		{"apfs-checkpoint", func(ps []handmade.Patch) { binary.LittleEndian.PutUint64(ps[0].Data[8:], 2) }},
		{"lvm2-metadata-area", func(ps []handmade.Patch) {
			binary.LittleEndian.PutUint64(ps[0].Data[24:], 8192) // the header says it starts elsewhere
			copy(ps[1].Data, "not a volume group")
		}},
		{"vhdx-header-copies", func(ps []handmade.Patch) { ps[0].Data[100]++; ps[1].Data[100]++ }}, // CRC-32C no longer holds
	} {
		t.Run(c.header, func(t *testing.T) {
			var h handmade.Header
			for _, x := range handmade.BackupHeaders() {
				if x.Name == c.header {
					h = x
				}
			}
			ps := h.Build(h.Size)
			c.spoil(ps)
			require.Empty(t, scanAt(patchedDev{h.Size, ps}, h.Size, false))
		})
	}
}

// A device that holds a primary is refused for it: the backups, and the
// partition starts, are not searched and the refusal reads as before.
func TestBackupsOnlyWhenNothingElse(t *testing.T) {
	img := extImage(2, 1, 0x4, 0x2|0x40, 0x1, 0)
	ps := handmade.BackupHeaders()[0].Build(512 << 20)
	ps = append(ps, handmade.Patch{Off: 0, Data: img[:4096]})
	require.Equal(t, []string{"ext4@1080"}, scanAt(patchedDev{512 << 20, ps}, 512<<20, false))
}

// wipe zeroes n bytes at off of the file.
func wipe(t *testing.T, img string, off, n int64) {
	t.Helper()
	f, err := os.OpenFile(img, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(make([]byte, n), off)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// Each format's own mkfs makes the filesystem, its first copy is wiped,
// and the copy the format's recovery tool would read is what is found.
func TestBackupsOfRealFilesystems(t *testing.T) {
	t.Run("mkfs.xfs", func(t *testing.T) {
		img := makeImage(t, 320<<20, "mkfs.xfs", "-q", "-f")
		f, err := os.ReadFile(img)
		require.NoError(t, err)
		ag := int64(binary.BigEndian.Uint32(f[84:])) * int64(binary.BigEndian.Uint32(f[4:]))
		wipe(t, img, 0, 512)
		require.Equal(t, []string{fmt.Sprintf("xfs@%d", ag)}, scanFile(t, img), "AG 1's secondary")
		wipe(t, img, ag, 512)
		require.Equal(t, []string{fmt.Sprintf("xfs@%d", 2*ag)}, scanFile(t, img), "AG 2's, AG 1's wiped too")
	})
	t.Run("mkfs.ntfs", func(t *testing.T) {
		img := makeImage(t, 64<<20, "mkfs.ntfs", "-Q", "-F", "-q")
		wipe(t, img, 0, 512)
		require.Equal(t, []string{fmt.Sprintf("ntfs@%d", 64<<20-512+3)}, scanFile(t, img))
	})
	for _, ss := range []int64{512, 4096} {
		t.Run(fmt.Sprintf("mkfs.vfat -F 32 -S %d", ss), func(t *testing.T) {
			img := makeImage(t, 256<<20, "mkfs.vfat", "-F", "32", "-S", strconv.FormatInt(ss, 10))
			wipe(t, img, 0, ss)
			require.Equal(t, []string{fmt.Sprintf("vfat@%d", 6*ss)}, scanFile(t, img))
		})
	}
	t.Run("mkfs.exfat", func(t *testing.T) {
		img := makeImage(t, 64<<20, "mkfs.exfat")
		wipe(t, img, 0, 512)
		require.Equal(t, []string{"exfat@6147"}, scanFile(t, img))
	})
	t.Run("mkfs.jfs", func(t *testing.T) {
		img := makeImage(t, 64<<20, "mkfs.jfs", "-q")
		wipe(t, img, 32<<10, 4096)
		require.Equal(t, []string{"jfs@61440"}, scanFile(t, img))
	})
	t.Run("mkfs.ocfs2", func(t *testing.T) {
		img := makeImage(t, 1200<<20, "mkfs.ocfs2", "-q", "-F", "-M", "local")
		wipe(t, img, 0, 64<<10)
		require.Equal(t, []string{fmt.Sprintf("ocfs2@%d", 1<<30)}, scanFile(t, img))
	})
	t.Run("mkapfs", func(t *testing.T) {
		img := makeImage(t, 128<<20, "mkapfs")
		wipe(t, img, 0, 4096)
		got := scanFile(t, img)
		require.Len(t, got, 1)
		require.Regexp(t, `^apfs@\d+$`, got[0])
	})
	for _, c := range []struct {
		name   string
		size   int64
		args   []string
		group1 bool // wipe group 1's copy too
	}{
		{"-b 4096", 512 << 20, []string{"-b", "4096"}, false},
		{"-b 4096, group 1's copy wiped too", 512 << 20, []string{"-b", "4096"}, true},
		{"-g 4096 (1 KiB blocks)", 64 << 20, []string{"-g", "4096"}, false},
		{"-b 4096 -g 8192", 256 << 20, []string{"-b", "4096", "-g", "8192"}, false},
		{"-O bigalloc", 3 << 30, []string{"-O", "bigalloc"}, false},
		{"-b 4096 -O bigalloc -C 16384", 1 << 30, []string{"-b", "4096", "-O", "bigalloc", "-C", "16384"}, false},
		{"-b 1024, group 1's copy wiped too", 128 << 20, []string{"-b", "1024"}, true},
	} {
		t.Run("mkfs.ext4 "+c.name, func(t *testing.T) {
			img := makeImage(t, c.size, "mkfs.ext4", append([]string{"-q", "-F"}, c.args...)...)
			copies, bs := extCopies(t, img)
			require.NotEmpty(t, copies)
			if c.group1 {
				require.GreaterOrEqual(t, len(copies), 2, "the case needs two copies")
			}
			wipe(t, img, 1024, 1024)
			want := copies[0]
			if c.group1 {
				wipe(t, img, copies[0]*bs, 1024)
				want = copies[1]
			}
			require.Equal(t, []string{fmt.Sprintf("ext4@%d", want*bs+0x38)}, scanFile(t, img))
		})
	}
}

// extCopies are the blocks dumpe2fs says hold superblock copies, and the
// block size.
func extCopies(t *testing.T, img string) ([]int64, int64) {
	t.Helper()
	out, err := exec.Command(testdeps.LookPath(t, "dumpe2fs"), img).CombinedOutput()
	require.NoError(t, err, "%s", out)
	var blocks []int64
	for _, m := range regexp.MustCompile(`Backup superblock at (\d+)`).FindAllStringSubmatch(string(out), -1) {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		blocks = append(blocks, n)
	}
	m := regexp.MustCompile(`Block size:\s+(\d+)`).FindStringSubmatch(string(out))
	require.NotNil(t, m, "%s", out)
	bs, _ := strconv.ParseInt(m[1], 10, 64)
	return blocks, bs
}
