package target

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A loop device is a view into what backs it: one whose backing holds a
// filesystem or a table anywhere, inside its window or not, at any depth,
// is refused naming the backing, with the bytes unchanged.
func TestLoopViewRefused(t *testing.T) {
	requireRoot(t)
	const mib = 1 << 20
	tests := []struct {
		name  string
		setup func(t *testing.T, img string) string // returns the loop device to write
		want  string                                // in the reason; %s: the device it is a loop over
	}{
		{"at an offset into an ext4 image", func(t *testing.T, img string) string {
			run(t, requireTool(t, "mkfs.ext4"), "-q", "-F", img)
			return attachLoop(t, img, "--offset", fmt.Sprint(mib))
		}, "its backing file %[1]s (%[2]s shows from byte 1048576 of it) holds an ext4 filesystem (TYPE=ext4, signature at byte 1080)"},
		{"over a loop device that holds unmounted ext4", func(t *testing.T, img string) string {
			lower := attachLoop(t, img)
			run(t, requireTool(t, "mkfs.ext4"), "-q", "-F", lower)
			return attachLoop(t, lower, "--offset", fmt.Sprint(mib))
		}, "the device it is a loop over, %[3]s (%[2]s shows from byte 1048576 of it) holds an ext4 filesystem"},
		{"over the last MiB of a GPT image", func(t *testing.T, img string) string {
			run(t, requireTool(t, "sgdisk"), "-o", "-n", "1:2048:+8M", img)
			return attachLoop(t, img, "--offset", fmt.Sprint(loopSize-mib), "--sizelimit", fmt.Sprint(mib))
		}, fmt.Sprintf("its backing file %%[1]s (%%[2]s shows bytes %d to %d of it) holds a protective MBR (a GPT disk) (PTTYPE=PMBR, signature at byte 510), and a GPT partition table (PTTYPE=gpt, signatures at bytes 512, %d)", loopSize-mib, loopSize, loopSize-512)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			img := newBacking(t, loopSize)
			dev := tc.setup(t, img)
			lower := ""
			if b, err := readSysLoopBacking(dev); err == nil && strings.HasPrefix(b, "/dev/loop") {
				lower = filepath.Base(b)
			}
			before := sha256File(t, img)
			want := fmt.Sprintf(tc.want, img, filepath.Base(dev), lower)
			for _, o := range []Options{writeAll, {Write: true, Align: 4096, MaxBlock: 65536}} {
				_, err := Open(dev, o)
				se := requireSafetyError(t, err, want, "")
				require.Contains(t, se.IDs, RefuseLoopView)
			}
			require.Equal(t, before, sha256File(t, img), "the backing's bytes changed")
		})
	}
}

// A loop device over a blank image at an offset may be written: the view
// alone is no reason.
func TestLoopViewOfBlankImage(t *testing.T) {
	requireRoot(t)
	img := newBacking(t, loopSize)
	dev := attachLoop(t, img, "--offset", "1048576")
	tg, err := Open(dev, writeAll)
	require.NoError(t, err)
	require.NoError(t, tg.Close())
}

// readSysLoopBacking is what sysfs says backs loop device dev.
func readSysLoopBacking(dev string) (string, error) {
	b, err := os.ReadFile("/sys/block/" + filepath.Base(dev) + "/loop/backing_file")
	return strings.TrimSpace(string(b)), err
}
