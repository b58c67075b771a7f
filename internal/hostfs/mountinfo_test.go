package hostfs

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseMountInfo(t *testing.T) {
	got, err := ReadMountInfo("testdata/mountinfo")
	require.NoError(t, err)
	require.Equal(t, Mounts{
		{ID: 22, Parent: 27, DevNum: DevNum{0, 21}, Root: "/", MountPoint: "/proc", Options: "rw,relatime", FSType: "proc", Source: "proc", SuperOptions: "rw"},
		{ID: 25, Parent: 24, DevNum: DevNum{0, 23}, Root: "/", MountPoint: "/dev/shm", Options: "rw,relatime", FSType: "tmpfs", Source: "tmpfs", SuperOptions: "rw,size=24684096k"},
		{ID: 27, Parent: 1, DevNum: DevNum{254, 0}, Root: "/", MountPoint: "/", Options: "rw,relatime", FSType: "ext4", Source: "/dev/vda", SuperOptions: "rw,discard"},
		{ID: 36, Parent: 35, DevNum: DevNum{98, 0}, Root: "/mnt1", MountPoint: "/mnt/with space", Options: "rw,noatime", FSType: "ext3", Source: "/dev/root", SuperOptions: "rw,errors=continue"},
		{ID: 40, Parent: 27, DevNum: DevNum{0, 45}, Root: "/", MountPoint: "/srv/data", Options: "rw,relatime", FSType: "btrfs", Source: "/dev/loop3", SuperOptions: "rw,space_cache=v2"},
		{ID: 41, Parent: 27, DevNum: DevNum{259, 1}, Root: "/sub", MountPoint: "/mnt/tab\tand\\back", Options: "rw", FSType: "xfs", Source: "/dev/nvme0n1p2", SuperOptions: "rw"},
	}, got)
}

func TestParseMountInfoErrors(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"no separator", "27 1 254:0 / / rw,relatime ext4 /dev/vda rw\n", "mountinfo line 1: malformed"},
		{"nothing after separator", "27 1 254:0 / / rw - ext4\n", "mountinfo line 1: malformed"},
		{"bad major:minor", "22 27 0:21 / /proc rw - proc proc rw\n27 1 254-0 / / rw - ext4 /dev/vda rw\n", `mountinfo line 2: bad major:minor "254-0"`},
		{"bad id", "x 1 254:0 / / rw - ext4 /dev/vda rw\n", `mountinfo line 1: bad mount ids`},
		{"too short", "27 1 254:0\n", "mountinfo line 1: malformed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseMountInfo(strings.NewReader(tc.text))
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// The real table of this machine parses, and shows / mounted.
func TestMountsLive(t *testing.T) {
	if _, err := os.Stat("/proc/self/mountinfo"); err != nil {
		t.Skip("no /proc/self/mountinfo") //hygiene:skip not Linux
	}
	got, err := (&Host{}).Mounts()
	require.NoError(t, err)
	require.NotEmpty(t, got.Under("/"))
	require.Equal(t, "/", got.Under("/etc/passwd")[len(got.Under("/etc/passwd"))-1].MountPoint)
}

// A path lies on the mount at its longest mount point, on a component
// boundary; stacked mounts at that point all count, the top one first.
func TestMountsUnder(t *testing.T) {
	ms := Mounts{
		{ID: 1, MountPoint: "/", FSType: "ext4"},
		{ID: 2, MountPoint: "/tmp/x", FSType: "tmpfs"},
		{ID: 3, MountPoint: "/tmp/x/mnt", FSType: "fuse"},
		{ID: 4, MountPoint: "/tmp/x/mnt", FSType: "nfs"},
		{ID: 5, MountPoint: "/tmp/xy", FSType: "xfs"},
	}
	ids := func(path string) []int {
		var out []int
		for _, m := range ms.Under(path) {
			out = append(out, m.ID)
		}
		return out
	}
	require.Equal(t, []int{1}, ids("/img"))
	require.Equal(t, []int{2}, ids("/tmp/x"))
	require.Equal(t, []int{2}, ids("/tmp/x/mntfile"))
	require.Equal(t, []int{4, 3}, ids("/tmp/x/mnt/img"))
	require.Equal(t, []int{4, 3}, ids("/tmp/x/mnt/../mnt/img"))
	require.Equal(t, []int{5}, ids("/tmp/xy/a"))
	require.Nil(t, ids("relative/img"))
	require.Nil(t, ids(""))
	require.True(t, Mount{Options: "rw,nosuid,nodev,relatime"}.HasOption("nodev"))
	require.False(t, Mount{Options: "rw,nodevx"}.HasOption("nodev"))
	require.Equal(t, "the fuse mount /tmp/x/mnt (StallFS)", Mount{FSType: "fuse", MountPoint: "/tmp/x/mnt", Source: "StallFS"}.String())
}

func TestUnescapeOctal(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:         "plain",
		`a\040b`:        "a b",
		`\134`:          `\`,
		`trailing\04`:   `trailing\04`,
		`not\xyzoctal`:  `not\xyzoctal`,
		`\011\012\040x`: "\t\n x",
	} {
		require.Equal(t, want, UnescapeOctal(in), in)
	}
}

func TestDevNum(t *testing.T) {
	for _, d := range []DevNum{{0, 0}, {8, 1}, {7, 3}, {259, 65536}, {4095, 255}, {4096, 256}, {1 << 20, 1 << 19}} {
		require.Equal(t, d, DevNumOf(d.Encode()), "%v", d)
	}
	// st_rdev of /dev/sda1 and of a minor past 255 (loop256), as glibc's makedev.
	require.Equal(t, DevNum{8, 1}, DevNumOf(0x801))
	require.Equal(t, DevNum{7, 256}, DevNumOf(0x100700))
	d, err := ParseDevNum(" 259:12\n")
	require.NoError(t, err)
	require.Equal(t, DevNum{259, 12}, d)
	_, err = ParseDevNum("259")
	require.ErrorContains(t, err, `bad major:minor "259"`)
}
