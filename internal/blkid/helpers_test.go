package blkid

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/blkid/handmade"
	"github.com/ioprobe/ioprobe/internal/testdeps"
)

// scanOther scans and keeps this part's types, as "type@offset".
func scanOther(size int64, sectorSize int64, ps []handmade.Patch) []string {
	mine := otherTypes()
	var got []string
	for _, s := range Scan(patchedDev{size, ps}, size, sectorSize) {
		if mine[s.Type] {
			got = append(got, fmt.Sprintf("%s@%d", s.Type, s.Offset))
		}
	}
	return got
}

func headerPatches(t *testing.T, name string, size int64) []handmade.Patch {
	t.Helper()
	for _, h := range handmade.Headers() {
		if h.Name == name {
			return h.Build(size)
		}
	}
	t.Fatalf("no hand-built header %q", name)
	return nil
}

// otherTypes are the types of this part of the package (not filesystems).
func otherTypes() map[string]bool {
	m := map[string]bool{}
	var ps []Probe
	for _, f := range []func() []Probe{raidProbes, volumeProbes, cryptoProbes, swapProbes, zfsProbes, ptableProbes} {
		ps = append(ps, f()...)
	}
	for _, p := range ps {
		m[p.Type] = true
	}
	return m
}

// scanAt lists what Scan finds on a device of size bytes read through r,
// as "type@offset".
func scanAt(r interface {
	ReadAt([]byte, int64) (int, error)
}, size int64, primary bool) []string {
	scan := Scan
	if primary {
		scan = ScanPrimary
	}
	var got []string
	for _, s := range scan(r, size, 512) {
		got = append(got, fmt.Sprintf("%s@%d", s.Type, s.Offset))
	}
	return got
}

// makeImage makes a sparse file of size bytes and runs tool on it.
func makeImage(t *testing.T, size int64, tool string, args ...string) string {
	t.Helper()
	path := testdeps.LookPath(t, tool)
	img := filepath.Join(t.TempDir(), "image")
	require.NoError(t, os.WriteFile(img, nil, 0o600))
	require.NoError(t, os.Truncate(img, size))
	out, err := exec.Command(path, append(args, img)...).CombinedOutput()
	require.NoError(t, err, "%s %v: %s", tool, args, out)
	return img
}

func scanFile(t *testing.T, img string) []string {
	t.Helper()
	f, err := os.Open(img)
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	return scanAt(f, st.Size(), false)
}

func extImage(logBlock, rev, compat, incompat, rocompat, flags uint32) []byte {
	img := make([]byte, 1<<20)
	le := binary.LittleEndian
	le.PutUint32(img[1024+24:], logBlock)
	le.PutUint16(img[1024+0x38:], 0xEF53)
	le.PutUint32(img[1024+76:], rev)
	le.PutUint32(img[1024+0x5C:], compat)
	le.PutUint32(img[1024+0x60:], incompat)
	le.PutUint32(img[1024+0x64:], rocompat)
	le.PutUint32(img[1024+0x160:], flags)
	return img
}
