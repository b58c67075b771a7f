package hostfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeTree makes files (path: content) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, text := range files {
		full := filepath.Join(root, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(text), 0o644))
	}
}

// The loop devices come from sysfs alone: name, number, backing file (a
// deleted one said so), offset and size limit; one bound to nothing is
// left out.
func TestLoopsFromSysfs(t *testing.T) {
	sys := t.TempDir()
	writeTree(t, sys, map[string]string{
		"block/loop0/dev":               "7:0\n",
		"block/loop0/loop/backing_file": "/tmp/x/mnt/img\n",
		"block/loop0/loop/offset":       "0\n",
		"block/loop0/loop/sizelimit":    "0\n",
		"block/loop1/dev":               "7:1\n", // not attached: no loop/
		"block/loop2/dev":               "7:2\n",
		"block/loop2/loop/backing_file": "/var/old.img (deleted)\n",
		"block/loop2/loop/offset":       "1048576\n",
		"block/loop2/loop/sizelimit":    "4096\n",
		"block/sda/dev":                 "8:0\n",
	})
	h := &Host{Sys: sys}
	ls, err := h.Loops()
	require.NoError(t, err)
	require.Equal(t, []Loop{
		{Name: "loop0", Dev: DevNum{7, 0}, BackingFile: "/tmp/x/mnt/img"},
		{Name: "loop2", Dev: DevNum{7, 2}, BackingFile: "/var/old.img", Deleted: true, Offset: 1 << 20, SizeLimit: 4096},
	}, ls)
	require.Equal(t, "all of it", ls[0].Span())
	require.Equal(t, "bytes 1048576 to 1052672", ls[1].Span())

	ms := Mounts{{MountPoint: "/", FSType: "ext4", Source: "/dev/vda"}, {MountPoint: "/tmp/x/mnt", FSType: "fuse", Source: "StallFS"}}
	require.Equal(t, "loop device loop0 (its backing file /tmp/x/mnt/img, on the fuse mount /tmp/x/mnt (StallFS))", ls[0].Describe(ms))
	require.Equal(t, "loop device loop2 (its backing file /var/old.img, deleted, on the ext4 mount / (/dev/vda))", ls[1].Describe(ms))

	// A broken attribute is an error naming the device, not a device left out.
	writeTree(t, sys, map[string]string{"block/loop0/loop/offset": "lots\n"})
	_, err = h.Loops()
	require.ErrorContains(t, err, "loop0: loop/offset")
}

// A block device's attributes, by kernel name, bounded; a name with a
// slash is refused before anything is read.
func TestBlockAttrs(t *testing.T) {
	sys := t.TempDir()
	writeTree(t, sys, map[string]string{
		"devices/virtual/block/loop0/dev":                      "7:0\n",
		"devices/virtual/block/loop0/size":                     "2048\n",
		"devices/virtual/block/loop0/queue/logical_block_size": "512\n",
		"devices/virtual/block/loop0/holders/dm-0":             "",
	})
	require.NoError(t, os.MkdirAll(filepath.Join(sys, "class", "block"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(sys, "dev", "block"), 0o755))
	require.NoError(t, os.Symlink("../../devices/virtual/block/loop0", filepath.Join(sys, "class", "block", "loop0")))
	require.NoError(t, os.Symlink("../../devices/virtual/block/loop0", filepath.Join(sys, "dev", "block", "7:0")))
	h := &Host{Sys: sys}
	n, err := h.BlockAttrUint("loop0", "size")
	require.NoError(t, err)
	require.EqualValues(t, 2048, n)
	s, err := h.BlockAttr("loop0", "queue/logical_block_size")
	require.NoError(t, err)
	require.Equal(t, "512", s)
	d, err := h.BlockDevNum("loop0")
	require.NoError(t, err)
	require.Equal(t, DevNum{7, 0}, d)
	name, ok := h.BlockName(d)
	require.True(t, ok)
	require.Equal(t, "loop0", name)
	_, ok = h.BlockName(DevNum{0, 40})
	require.False(t, ok, "an anonymous device has no sysfs entry")
	hs, err := h.Holders("loop0")
	require.NoError(t, err)
	require.Equal(t, []string{"dm-0"}, hs)
	ss, err := h.Slaves("loop0")
	require.NoError(t, err)
	require.Empty(t, ss)
	require.False(t, h.IsPartition("loop0"))
	_, err = h.BlockAttr("../loop0", "size")
	require.ErrorContains(t, err, `bad block device name "../loop0"`)
}
