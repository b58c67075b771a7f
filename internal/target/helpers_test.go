package target

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func put(b []byte, off int, p []byte) []byte { copy(b[off:], p); return b }

func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

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

// fakeSysfs builds the parts of /sys/class/block, /sys/dev/block and
// /sys/devices that the target package reads:
//
//	loop0 (7:0, 4096-byte blocks) with partitions loop0p1 (259:0), loop0p2 (259:1)
//	loop1 (7:1) held by dm-0 (253:0)
//	loop2 (7:2), nothing on it
func fakeSysfs(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	dev := func(rel, majmin string, files map[string]string, holders ...string) {
		dir := filepath.Join(root, "devices", "virtual", "block", rel)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "holders"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "dev"), []byte(majmin+"\n"), 0o644))
		for name, content := range files {
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
		}
		for _, h := range holders {
			require.NoError(t, os.Symlink("../../"+h, filepath.Join(dir, "holders", h)))
		}
		name := filepath.Base(rel)
		up := "../../devices/virtual/block/" + rel
		require.NoError(t, os.MkdirAll(filepath.Join(root, "class", "block"), 0o755))
		require.NoError(t, os.MkdirAll(filepath.Join(root, "dev", "block"), 0o755))
		require.NoError(t, os.Symlink(up, filepath.Join(root, "class", "block", name)))
		require.NoError(t, os.Symlink(up, filepath.Join(root, "dev", "block", majmin)))
	}
	dev("loop0", "7:0", map[string]string{"queue/logical_block_size": "4096\n"})
	dev("loop0/loop0p1", "259:0", map[string]string{"partition": "1\n"})
	dev("loop0/loop0p2", "259:1", map[string]string{"partition": "2\n"})
	dev("loop1", "7:1", map[string]string{"queue/logical_block_size": "512\n"}, "dm-0")
	dev("dm-0", "253:0", nil)
	dev("loop2", "7:2", map[string]string{"queue/logical_block_size": "512\n"})
	return root
}
