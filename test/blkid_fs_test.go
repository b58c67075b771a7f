package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fsCases are the filesystem images of the differential test: every
// filesystem a Debian tool makes here, then hand-built headers
// (blkid_fshand_test.go) for the types no package creates.
var fsCases = append(toolFSCases, handFSCases...)

var toolFSCases = []sigCase{
	mkfs("ext2", "mkfs.ext2", "-q", "-F"),
	mkfs("ext3", "mkfs.ext3", "-q", "-F"),
	mkfs("ext4", "mkfs.ext4", "-q", "-F"),
	{name: "mke2fs -t ext4 -E test_fs", want: "ext4dev", tools: []string{"mke2fs"}, make: func(t *testing.T, dev string) {
		run(t, "mke2fs", "-q", "-F", "-t", "ext4", "-E", "test_fs", dev)
	}},
	{name: "mke2fs -O journal_dev", want: "jbd", tools: []string{"mke2fs"}, make: func(t *testing.T, dev string) {
		run(t, "mke2fs", "-q", "-F", "-O", "journal_dev", "-b", "4096", dev)
	}},
	withSize(mkfs("xfs", "mkfs.xfs", "-q", "-f"), 320<<20),
	{name: "mkfs.xfs -l logdev=DEV (the external log)", want: "xfs_external_log", tools: []string{"mkfs.xfs"}, size: 80 << 20, make: func(t *testing.T, dev string) {
		data := randomLoop(t, 320<<20)
		run(t, "mkfs.xfs", "-q", "-f", "-l", "logdev="+dev+",size=64m", data)
	}},
	withSize(mkfs("btrfs", "mkfs.btrfs", "-q", "-f"), 128<<20),
	{name: "mkfs.vfat -F 12", want: "vfat", tools: []string{"mkfs.vfat"}, size: 16 << 20, make: func(t *testing.T, dev string) {
		run(t, "mkfs.vfat", "-F", "12", dev)
	}},
	{name: "mkfs.vfat -F 16", want: "vfat", tools: []string{"mkfs.vfat"}, make: func(t *testing.T, dev string) {
		run(t, "mkfs.vfat", "-F", "16", dev)
	}},
	{name: "mkfs.vfat -F 32", want: "vfat", tools: []string{"mkfs.vfat"}, make: func(t *testing.T, dev string) {
		run(t, "mkfs.vfat", "-F", "32", dev)
	}},
	mkfs("exfat", "mkfs.exfat"),
	mkfs("ntfs", "mkfs.ntfs", "-Q", "-F", "-q"),
	mkfs("f2fs", "mkfs.f2fs", "-q", "-f"),
	mkfs("jfs", "mkfs.jfs", "-q"),
	mkfs("reiserfs", "mkfs.reiserfs", "-q", "-ff"),
	mkfs("reiser4", "mkfs.reiser4", "-y", "-f"),
	withSize(mkfs("nilfs2", "mkfs.nilfs2", "-q", "-f"), 160<<20),
	mkfs("gfs2", "mkfs.gfs2", "-O", "-p", "lock_nolock", "-J", "8"),
	mkfs("ocfs2", "mkfs.ocfs2", "-q", "-F", "-M", "local"),
	mkfs("udf", "mkudffs"),
	{name: "mkfs.minix -1", want: "minix", tools: []string{"mkfs.minix"}, make: func(t *testing.T, dev string) { run(t, "mkfs.minix", "-1", dev) }},
	{name: "mkfs.minix -2", want: "minix", tools: []string{"mkfs.minix"}, make: func(t *testing.T, dev string) { run(t, "mkfs.minix", "-2", dev) }},
	{name: "mkfs.minix -3", want: "minix", tools: []string{"mkfs.minix"}, make: func(t *testing.T, dev string) { run(t, "mkfs.minix", "-3", dev) }},
	{name: "mkfs.bfs", want: "bfs", tools: []string{"mkfs.bfs"}, size: 16 << 20, make: func(t *testing.T, dev string) { run(t, "mkfs.bfs", dev) }},
	withSize(mkfs("apfs", "mkapfs"), 128<<20),
	image("erofs", "mkfs.erofs", func(t *testing.T, img, dir string) { run(t, "mkfs.erofs", "--quiet", img, dir) }),
	image("squashfs", "mksquashfs", func(t *testing.T, img, dir string) { run(t, "mksquashfs", dir, img, "-noappend", "-quiet") }),
	image("cramfs", "mkfs.cramfs", func(t *testing.T, img, dir string) { run(t, "mkfs.cramfs", dir, img) }),
	image("romfs", "genromfs", func(t *testing.T, img, dir string) { run(t, "genromfs", "-d", dir, "-f", img) }),
	image("iso9660", "genisoimage", func(t *testing.T, img, dir string) { run(t, "genisoimage", "-quiet", "-o", img, dir) }),
	image("ubifs", "mkfs.ubifs", func(t *testing.T, img, dir string) {
		run(t, "mkfs.ubifs", "-r", dir, "-m", "2048", "-e", "126976", "-c", "64", "-o", img)
	}),
	image("ubi", "ubinize", func(t *testing.T, img, dir string) {
		cfg := filepath.Join(dir, "..", "ubinize.cfg")
		vol := filepath.Join(dir, "..", "vol.bin")
		require.NoError(t, os.WriteFile(vol, make([]byte, 64<<10), 0o600))
		require.NoError(t, os.WriteFile(cfg, []byte("[vol]\nmode=ubi\nimage="+vol+"\nvol_id=0\nvol_type=static\nvol_name=v\n"), 0o600))
		run(t, "ubinize", "-o", img, "-m", "2048", "-p", "128KiB", cfg)
	}),
}

// mkfs is a case that runs tool args... DEV and expects typ.
func mkfs(typ, tool string, args ...string) sigCase {
	return sigCase{name: strings.Join(append([]string{tool}, args...), " "), want: typ, tools: []string{tool}, make: func(t *testing.T, dev string) {
		run(t, tool, append(append([]string(nil), args...), dev)...)
	}}
}

func withSize(c sigCase, size int64) sigCase {
	c.size = size
	return c
}

// image is a case that builds an image file of a small directory tree
// with tool and copies it onto the device.
func image(typ, tool string, build func(t *testing.T, img, dir string)) sigCase {
	return sigCase{name: tool + " image", want: typ, tools: []string{tool}, make: func(t *testing.T, dev string) {
		base := t.TempDir()
		dir := filepath.Join(base, "tree")
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "hello.txt"), []byte("hello, blkid\n"), 0o644))
		img := filepath.Join(base, "image")
		build(t, img, dir)
		writeImage(t, dev, img)
	}}
}
