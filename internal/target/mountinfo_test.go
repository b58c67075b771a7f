package target

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseMountInfo(t *testing.T) {
	f, err := os.Open("testdata/mountinfo")
	require.NoError(t, err)
	defer f.Close()
	got, err := parseMountInfo(f)
	require.NoError(t, err)
	require.Equal(t, []mount{
		{ID: 22, Major: 0, Minor: 21, Root: "/", MountPoint: "/proc", Options: "rw,relatime", FSType: "proc", Source: "proc", SuperOptions: "rw"},
		{ID: 25, Major: 0, Minor: 23, Root: "/", MountPoint: "/dev/shm", Options: "rw,relatime", FSType: "tmpfs", Source: "tmpfs", SuperOptions: "rw,size=24684096k"},
		{ID: 27, Major: 254, Minor: 0, Root: "/", MountPoint: "/", Options: "rw,relatime", FSType: "ext4", Source: "/dev/vda", SuperOptions: "rw,discard"},
		{ID: 36, Major: 98, Minor: 0, Root: "/mnt1", MountPoint: "/mnt/with space", Options: "rw,noatime", FSType: "ext3", Source: "/dev/root", SuperOptions: "rw,errors=continue"},
		{ID: 40, Major: 0, Minor: 45, Root: "/", MountPoint: "/srv/data", Options: "rw,relatime", FSType: "btrfs", Source: "/dev/loop3", SuperOptions: "rw,space_cache=v2"},
		{ID: 41, Major: 259, Minor: 1, Root: "/sub", MountPoint: "/mnt/tab\tand\\back", Options: "rw", FSType: "xfs", Source: "/dev/nvme0n1p2", SuperOptions: "rw"},
	}, got)
}

func TestParseMountInfoErrors(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"no separator", "27 1 254:0 / / rw,relatime ext4 /dev/vda rw\n", "mountinfo line 1: malformed"},
		{"nothing after separator", "27 1 254:0 / / rw - ext4\n", "mountinfo line 1: malformed"},
		{"bad major:minor", "22 27 0:21 / /proc rw - proc proc rw\n27 1 254-0 / / rw - ext4 /dev/vda rw\n", `mountinfo line 2: bad major:minor "254-0"`},
		{"too short", "27 1 254:0\n", "mountinfo line 1: malformed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseMountInfo(strings.NewReader(tc.text))
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// The real table of this machine parses, and shows / mounted.
func TestParseMountInfoLive(t *testing.T) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Skip("no /proc/self/mountinfo") //hygiene:skip not Linux
	}
	defer f.Close()
	got, err := parseMountInfo(f)
	require.NoError(t, err)
	var points []string
	for _, m := range got {
		points = append(points, m.MountPoint)
	}
	require.Contains(t, points, "/")
}

func TestParseSwaps(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"none", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n", nil},
		{"two", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/zram0                              partition\t8388604\t\t0\t\t100\n/swap\\040file                             file\t\t1048572\t\t0\t\t-2\n",
			[]string{"/dev/zram0", "/swap file"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseSwaps(strings.NewReader(tc.text))
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
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
		require.Equal(t, want, unescapeOctal(in), in)
	}
}
