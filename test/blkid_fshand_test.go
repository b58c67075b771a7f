package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/blkid/handmade"
)

// handFSCases are hand-built filesystem headers, each from the published
// format its source names, for the types no Debian package here creates.
// Each writes only what the format's superblock needs to be recognised
// (libblkid checks these fields too, so a case it does not recognise is a
// broken case and fails).
var handFSCases = append(fsHeaderCases(), []sigCase{
	{name: "exfs: an XFS superblock made by mkfs.xfs, magic EXFS", want: "exfs", tools: []string{"mkfs.xfs"},
		source: "libblkid exfs.c: EXFS is XFS's on-disk superblock (Linux fs/xfs/libxfs/xfs_format.h) with magic \"EXFS\"",
		make: func(t *testing.T, dev string) {
			img := filepath.Join(t.TempDir(), "xfs")
			require.NoError(t, os.WriteFile(img, nil, 0o600))
			require.NoError(t, os.Truncate(img, 320<<20))
			out, err := exec.Command("mkfs.xfs", "-q", "-f", img).CombinedOutput()
			require.NoError(t, err, "%s", out)
			p, err := os.ReadFile(img)
			require.NoError(t, err)
			sb := append([]byte(nil), p[:512]...)
			copy(sb, "EXFS")
			writeAt(t, dev, 0, sb)
		}},
}...)

// fsHeaderCases writes each of internal/blkid/handmade's filesystem
// headers onto a device.
func fsHeaderCases() []sigCase {
	var cs []sigCase
	for _, h := range handmade.FSHeaders() {
		cs = append(cs, handmadeCase(h))
	}
	return cs
}
