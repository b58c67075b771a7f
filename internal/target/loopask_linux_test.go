package target

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/hostfs"
)

// The mount table of the scope tests: the root filesystem, /dev, a tmpfs
// without device nodes and a FUSE mount (nodev, as fusermount mounts).
var scopeMounts = hostfs.Mounts{
	{ID: 1, DevNum: hostfs.DevNum{Major: 254}, MountPoint: "/", Options: "rw,relatime", FSType: "ext4", Source: "/dev/vda"},
	{ID: 2, DevNum: hostfs.DevNum{Minor: 5}, MountPoint: "/dev", Options: "rw", FSType: "devtmpfs", Source: "devtmpfs"},
	{ID: 3, DevNum: hostfs.DevNum{Minor: 30}, MountPoint: "/run", Options: "rw,nosuid,nodev", FSType: "tmpfs", Source: "tmpfs"},
	{ID: 4, DevNum: hostfs.DevNum{Minor: 40}, MountPoint: "/mnt/fuse", Options: "rw,nosuid,nodev", FSType: "fuse", Source: "StallFS"},
}

func loopOver(name, backing string) hostfs.Loop { return hostfs.Loop{Name: name, BackingFile: backing} }

// A file target asks only the loop devices whose backing file lies on its
// filesystem: a loop device over a file on a FUSE mount that stopped
// answering is never asked about a file elsewhere.
func TestFileScopeAsksOnlyItsFilesystem(t *testing.T) {
	s := &loopScope{}
	s.addDev(hostfs.DevNum{Major: 254}) // a file on /
	require.True(t, s.asks(loopOver("loop0", "/var/lib/snapd/snaps/core.snap"), scopeMounts))
	require.False(t, s.asks(loopOver("loop1", "/mnt/fuse/img"), scopeMounts), "another filesystem")
	require.False(t, s.asks(loopOver("loop2", "/dev/sdb"), scopeMounts), "a device node is not a regular file")
	require.False(t, s.asks(loopOver("loop3", "/run/x.img"), scopeMounts))
	require.True(t, s.asks(loopOver("loop4", "relative/name"), scopeMounts), "a name the mount table cannot place is asked")
	require.True(t, s.asks(loopOver("loop5", "/mnt/fuse/img"), nil), "no mount table: everything is asked")
	require.True(t, (*loopScope)(nil).clone().asks(loopOver("loop1", "/mnt/fuse/img"), scopeMounts), "no scope: everything is asked")

	// A file on the FUSE mount: the loop device over the FUSE file is asked.
	f := &loopScope{}
	f.addDev(hostfs.DevNum{Minor: 40})
	require.True(t, f.asks(loopOver("loop1", "/mnt/fuse/img"), scopeMounts))
	require.False(t, f.asks(loopOver("loop0", "/var/x.img"), scopeMounts))

	require.True(t, s.mayHold("/swapfile", scopeMounts))
	require.False(t, s.mayHold("/mnt/fuse/swap", scopeMounts))
	require.True(t, s.mayHold("swap", scopeMounts))
}

// A block device target asks itself, every loop device whose backing may
// be a device node (not on a nodev mount), and, once its chain is known,
// those over files on the filesystem of the file at its bottom.
func TestBlockScopeAsksDeviceNodesAndItsChain(t *testing.T) {
	s := blockScope("loop7")
	require.True(t, s.asks(loopOver("loop7", "/mnt/fuse/img"), scopeMounts), "the target itself")
	require.True(t, s.asks(loopOver("loop2", "/dev/loop7"), scopeMounts), "stacked on a device node")
	require.True(t, s.asks(loopOver("loop0", "/var/x.img"), scopeMounts), "the root filesystem may hold device nodes")
	require.False(t, s.asks(loopOver("loop1", "/mnt/fuse/other"), scopeMounts), "a FUSE mount holds no device nodes")
	require.False(t, s.asks(loopOver("loop3", "/run/x.img"), scopeMounts))

	// loop7 is over /mnt/fuse/img: loop devices over files there are
	// over the same file, perhaps, and are asked in the next round.
	got := []loopDev{{blockDev: blockDev{Name: "loop7"}, backDev: hostfs.DevNum{Minor: 40}.Encode(), backIno: 12, file: "/mnt/fuse/img"}}
	require.True(t, s.widen(&hostfs.Host{}, got, scopeMounts))
	require.True(t, s.asks(loopOver("loop1", "/mnt/fuse/other"), scopeMounts))
	require.False(t, s.widen(&hostfs.Host{}, got, scopeMounts), "nothing new")
	require.False(t, s.asks(loopOver("loop3", "/run/x.img"), scopeMounts))
}
