package blkid

import (
	"fmt"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/blkid/handmade"
	"github.com/ioprobe/ioprobe/internal/testdeps"
)

// A filesystem at any of the partition starts of a device without a
// partition table is found at its place on the device, and said to be
// there; with a table, the table is what refuses and the starts are not
// read.
func TestFilesystemAtPartitionStart(t *testing.T) {
	const size = 64 << 20
	sb := extImage(2, 1, 0x4, 0x2|0x40, 0x1, 0)[1024:2048]
	for _, start := range PartitionStarts {
		t.Run(fmt.Sprint(start), func(t *testing.T) {
			ps := []handmade.Patch{{Off: start + 1024, Data: sb}}
			dev := patchedDev{size, ps}
			got := Scan(dev, size, 512)
			require.Len(t, got, 1)
			require.Equal(t, "ext4", got[0].Type)
			require.Equal(t, start+1080, got[0].Offset)
			require.Contains(t, got[0].What, fmt.Sprintf("at byte %d, where a partition would start", start))
			require.Empty(t, scanAt(dev, size, true), "the interval look reads the primary places only")

			mbr := make([]byte, 512)
			mbr[446+4], mbr[446+8], mbr[446+12] = 0x83, 0x00, 0x10 // a Linux partition
			mbr[510], mbr[511] = 0x55, 0xaa
			require.Equal(t, []string{"dos@510"}, scanAt(patchedDev{size, append(ps, handmade.Patch{Off: 0, Data: mbr})}, size, false))
		})
	}
	// What keep drops (the caller's own data) does not end the search:
	// the next start is looked at.
	ps := []handmade.Patch{{Off: 1<<20 + 1024, Data: sb}, {Off: 2<<20 + 1024, Data: sb}}
	got := ScanKeeping(patchedDev{size, ps}, size, 512, func(s Signature) bool { return s.Offset > 2<<20 })
	require.Len(t, got, 1)
	require.Equal(t, int64(2<<20+1080), got[0].Offset)
	// Between the starts: not looked at.
	require.Empty(t, scanAt(patchedDev{size, []handmade.Patch{{Off: 5<<20 + 1024, Data: sb}}}, size, false))
}

// `wipefs -a` on a GPT disk whose first partition holds ext4 erases the
// GPT's headers and the protective MBR (-f: on an image file); the filesystem at 1 MiB is what
// blkid -p -O 1048576 still finds, and so does Scan.
func TestWipedGPTLeavesItsFilesystem(t *testing.T) {
	img := makeImage(t, 64<<20, "sgdisk", "-o", "-n", "1:2048:0")
	out, err := exec.Command(testdeps.LookPath(t, "mkfs.ext4"), "-q", "-F", "-E", "offset=1048576", img, "32M").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, []string{"PMBR@510", "gpt@512", fmt.Sprintf("gpt@%d", 64<<20-512)}, scanFile(t, img))
	out, err = exec.Command(testdeps.LookPath(t, "wipefs"), "-a", "-f", img).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, []string{fmt.Sprintf("ext4@%d", 1<<20+1080)}, scanFile(t, img))
	out, err = exec.Command(testdeps.LookPath(t, "blkid"), "-p", "-O", "1048576", "-s", "TYPE", "-o", "value", img).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "ext4\n", string(out), "the referee")
}
