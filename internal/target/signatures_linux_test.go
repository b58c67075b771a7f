package target

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/blkid/handmade"
)

// An existing file that holds a filesystem image is somebody's data:
// --allow-destructive does not make ioprobe write over it, and the file is
// left as it was. Its size need not be a whole number of blocks.
func TestFileWithSignatureRefusedEvenWithAllowDestructive(t *testing.T) {
	for _, size := range []int64{4 << 20, 4<<20 + 1000} {
		path := filepath.Join(t.TempDir(), "disk.img")
		img := make([]byte, size)
		_, err := rand.Read(img)
		require.NoError(t, err)
		for _, h := range handmade.FSHeaders() {
			if h.Type == "hfsplus" {
				handmade.Apply(img, h.Build(size))
				break
			}
		}
		require.NoError(t, os.WriteFile(path, img, 0o644))

		_, err = Open(path, Options{Write: true, AllowDestructive: true, Align: 4096})
		requireSafetyError(t, err, "(TYPE=hfsplus, signature at byte 1024)", "")
		after, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, img, after, "size %d: the file changed", size)
	}
}

// Random bytes hold nothing: with --allow-destructive the file is ioprobe's
// to write, as before.
func TestFileOfRandomBytesWritableWithAllowDestructive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "random.dat")
	img := make([]byte, 4<<20+1000)
	_, err := rand.Read(img)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, img, 0o644))
	tg, err := Open(path, Options{Write: true, AllowDestructive: true, Align: 4096})
	require.NoError(t, err)
	require.True(t, tg.Writable)
	require.NoError(t, tg.Close())
}
