package blkid

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/blkid/handmade"
	"github.com/ioprobe/ioprobe/internal/testdeps"
)

// Every hand-built disk image header is found where qemu's driver looks,
// by the full scan and by the interval look alike (an image copied onto a
// device while ioprobe writes is a signature appearing).
func TestImageHeaders(t *testing.T) {
	want := map[string][]string{
		"qcow":            {"qcow@0"},
		"qcow2":           {"qcow2@0"},
		"qed":             {"qed@0"},
		"vmdk-sparse":     {"vmdk@0"},
		"vmdk-cowd":       {"vmdk@0"},
		"vmdk-descriptor": {"vmdk@0"},
		"vdi":             {"vdi@64"},
		"vhdx":            {"vhdx@0"},
		"vpc-dynamic":     {"vpc@0", fmt.Sprintf("vpc@%d", 64<<20-512)},
		"vpc-fixed":       {fmt.Sprintf("vpc@%d", 64<<20-512)},
		"parallels":       {"parallels@0"},
	}
	hs := handmade.ImageHeaders()
	require.Len(t, hs, len(want))
	for _, h := range hs {
		t.Run(h.Name, func(t *testing.T) {
			dev := patchedDev{h.Size, h.Build(h.Size)}
			require.Equal(t, want[h.Name], scanAt(dev, h.Size, false))
			require.Equal(t, want[h.Name], scanAt(dev, h.Size, true))
		})
	}
}

// qemu-img's own images of a partitioned disk are each found and named as
// qemu-img names them; the partition table inside is not at 0, and a
// probe of a disk's places would see nothing.
func TestImagesFromQemuImg(t *testing.T) {
	qemuImg := testdeps.LookPath(t, "qemu-img")
	raw := makeImage(t, 64<<20, "sgdisk", "-o", "-n", "1:2048:0")
	for _, c := range []struct{ format, opts, want string }{
		{"qcow2", "", "qcow2@0"},
		{"qcow2", "compat=0.10", "qcow2@0"},
		{"qed", "", "qed@0"},
		{"vmdk", "", "vmdk@0"},
		{"vmdk", "subformat=streamOptimized", "vmdk@0"},
		{"vdi", "", "vdi@64"},
		{"vhdx", "", "vhdx@0"},
		{"vpc", "", "vpc@0"},
		{"parallels", "", "parallels@0"},
	} {
		t.Run(c.format+" "+c.opts, func(t *testing.T) {
			img := filepath.Join(t.TempDir(), "disk."+c.format)
			args := []string{"convert", "-O", c.format}
			if c.opts != "" {
				args = append(args, "-o", c.opts)
			}
			out, err := exec.Command(qemuImg, append(args, raw, img)...).CombinedOutput()
			require.NoError(t, err, "%s", out)
			got := scanFile(t, img)
			require.NotEmpty(t, got)
			require.Equal(t, c.want, got[0], "all: %v", got)
		})
	}
	// A fixed VHD is the raw disk (rounded up to a CHS geometry) and its
	// footer: the GPT and the footer.
	img := filepath.Join(t.TempDir(), "fixed.vpc")
	out, err := exec.Command(qemuImg, "convert", "-O", "vpc", "-o", "subformat=fixed", raw, img).CombinedOutput()
	require.NoError(t, err, "%s", out)
	st, err := os.Stat(img)
	require.NoError(t, err)
	require.Equal(t, []string{"PMBR@510", "gpt@512", fmt.Sprintf("vpc@%d", st.Size()-512)}, scanFile(t, img))
}
