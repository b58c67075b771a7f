package target

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// inUse over a fake sysfs and mount table: every relation is named.
func TestInUse(t *testing.T) {
	sys := fakeSysfs(t)
	tests := []struct {
		name      string
		dev       string
		mountinfo string // "" means no mountinfo file
		swaps     string
		want      []string
	}{
		{name: "nothing", dev: "loop2", mountinfo: "27 1 254:0 / / rw - ext4 /dev/vda rw\n", want: nil},
		{name: "mounted itself", dev: "loop2", mountinfo: "50 27 7:2 / /mnt/x rw - xfs src rw\n",
			want: []string{"it is mounted at /mnt/x (xfs)"}},
		{name: "a disk whose partition is mounted", dev: "loop0", mountinfo: "50 27 259:0 / /mnt/a rw - ext4 src rw\n",
			want: []string{"its partition loop0p1 is mounted at /mnt/a (ext4)", "it has partitions (loop0p1, loop0p2)"}},
		// Writing loop0p2 cannot reach what loop0p1 holds.
		{name: "a partition whose sibling is mounted", dev: "loop0p2", mountinfo: "50 27 259:0 / /mnt/a rw - ext4 src rw\n",
			want: nil},
		{name: "a partition of a mounted disk", dev: "loop0p1", mountinfo: "50 27 7:0 / /mnt/d rw - vfat src rw\n",
			want: []string{"it is a partition of loop0, and that disk is mounted at /mnt/d (vfat)"}},
		{name: "held by device-mapper", dev: "loop1", mountinfo: "\n",
			want: []string{"it is held by dm-0 (device-mapper/LVM, md RAID or bcache is using it)"}},
		{name: "active swap (a node of 7:2, as the fake loop2)", dev: "loop2", mountinfo: "\n",
			swaps: "Filename\tType\tSize\tUsed\tPriority\n/dev/loop2 partition 1024 0 -2\n",
			want:  []string{"it is active swap (/dev/loop2)"}},
		{name: "no mount table: fail closed", dev: "loop2",
			want: []string{"cannot read the mount table: open"}},
		{name: "unknown device", dev: "", mountinfo: "\n",
			want: []string{"it has no entry under"}},
		{name: "not in sysfs", dev: "sdq", mountinfo: "\n",
			want: []string{"cannot read its sysfs entry"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			proc := t.TempDir()
			if tc.mountinfo != "" {
				require.NoError(t, os.WriteFile(filepath.Join(proc, "mountinfo"), []byte(tc.mountinfo), 0o644))
			}
			if tc.swaps != "" {
				if _, err := os.Stat("/dev/loop2"); err != nil {
					t.Skip("no /dev/loop2 node to stand for the swap device") //hygiene:skip the machine's device nodes
				}
				require.NoError(t, os.WriteFile(filepath.Join(proc, "swaps"), []byte(tc.swaps), 0o644))
			}
			e := env{sysRoot: sys, procSelf: proc, swaps: filepath.Join(proc, "swaps")}
			got := e.inUse(tc.dev)
			require.Len(t, got, len(tc.want), "%q", got)
			for i := range tc.want {
				require.Contains(t, got[i].text, tc.want[i])
				require.NotEmpty(t, overrideOrNone(got[i].id), "%s is not in Refusals", got[i].id)
			}
		})
	}
}
