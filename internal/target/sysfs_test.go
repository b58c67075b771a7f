package target

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadFamily(t *testing.T) {
	root := fakeSysfs(t)
	p1 := blockDev{"loop0p1", 259, 0}
	p2 := blockDev{"loop0p2", 259, 1}
	disk := blockDev{"loop0", 7, 0}
	tests := []struct {
		name    string
		want    blockFamily
		members []blockDev
	}{
		{"loop0", blockFamily{Self: disk, Partitions: []blockDev{p1, p2}}, []blockDev{disk, p1, p2}},
		{"loop0p1", blockFamily{Self: p1, Disk: &disk, Partitions: []blockDev{p1, p2}}, []blockDev{p1, disk, p2}},
		{"loop2", blockFamily{Self: blockDev{"loop2", 7, 2}}, []blockDev{{"loop2", 7, 2}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readFamily(root, tc.name)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.members, got.Members())
		})
	}
	_, err := readFamily(root, "sdq")
	require.Error(t, err)
	_, err = readFamily(root, "../loop0")
	require.ErrorContains(t, err, "bad block device name")
}

func TestHoldersAndNames(t *testing.T) {
	root := fakeSysfs(t)
	h, err := holders(root, "loop1")
	require.NoError(t, err)
	require.Equal(t, []string{"dm-0"}, h)
	h, err = holders(root, "loop2")
	require.NoError(t, err)
	require.Empty(t, h)

	require.Equal(t, "loop0p2", devName(root, 259, 1))
	require.Equal(t, "loop1", devName(root, 7, 1))
	require.Equal(t, "", devName(root, 0, 45), "anonymous devices have no name")

	require.Equal(t, int64(4096), sysLogicalBlock(root, "loop0p1"), "a partition has its disk's logical block size")
	require.Equal(t, int64(512), sysLogicalBlock(root, "loop2"))
	require.Equal(t, int64(0), sysLogicalBlock(root, "dm-0"), "unknown")
}
