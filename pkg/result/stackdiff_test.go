package result

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// fileOnLoopDisk is a file on ext4 on a loop device over a file on the
// root filesystem of disk vda: the loop's scheduler and the disk's are
// the caller's.
func fileOnLoopDisk(loopSched, diskSched string) Target {
	dio, alloc, ext := true, int64(1<<20), int64(1)
	return Target{Path: "/mnt/x.dat", Kind: "file",
		Stack: []Layer{
			{Kind: LayerFile, Name: "/mnt/x.dat", SizeBytes: 1 << 20, AllocatedBytes: &alloc, Extents: &ext},
			{Kind: LayerFilesystem, Name: "/mnt", Depth: 1, FSType: "ext4", MountOptions: "rw,relatime", SuperOptions: "rw", Device: "loop5", BlockBytes: 4096},
			{Kind: LayerLoop, Name: "loop5", Depth: 2, Backing: "/img", DirectIO: &dio,
				Queue: &Queue{SizeBytes: 64 << 20, LogicalBlockBytes: 512, PhysicalBlockBytes: 512, Scheduler: loopSched, NrRequests: 128, WriteCache: "write back"}},
			{Kind: LayerFile, Name: "/img", Depth: 3},
			{Kind: LayerFilesystem, Name: "/", Depth: 4, FSType: "ext4", MountOptions: "rw,relatime", Device: "vda"},
			{Kind: LayerDisk, Name: "vda", Depth: 5},
		},
		Disk: &Disk{Name: "vda", Bus: "virtio", Queue: Queue{SizeBytes: 256 << 30, LogicalBlockBytes: 512, PhysicalBlockBytes: 4096,
			Scheduler: diskSched, NrRequests: 256, WriteCache: "write back"}, SerialSHA256: "b277d56e0c79cb31d420487b78bdece62e5c082d660bd7cff78a298bae8491cf"}}
}

func TestStorageSettings(t *testing.T) {
	tg := fileOnLoopDisk("mq-deadline", "none")
	got := map[string]string{}
	for _, s := range tg.StorageSettings() {
		_, dup := got[s.Key]
		require.False(t, dup, "%s is one setting", s.Key)
		got[s.Key] = s.Value
	}
	require.Equal(t, "file → ext4 → loop → file → ext4 → disk", got["stack"])
	require.Equal(t, "ext4", got["filesystem"])
	require.Equal(t, "ext4", got["filesystem 2"], "the second filesystem down is its own")
	require.Equal(t, "rw,relatime", got["filesystem mount options"])
	require.Equal(t, "4096", got["filesystem block size"])
	require.Equal(t, "fully allocated", got["file allocation"])
	require.Equal(t, "yes", got["loop direct I/O"])
	require.Equal(t, "mq-deadline", got["loop scheduler"])
	require.Equal(t, "none", got["disk scheduler"])
	require.Equal(t, "virtio", got["disk bus"])
	require.Equal(t, "sha256:b277d56e0c79", got["disk serial"])
	require.Equal(t, "512/4096", got["disk block sizes"])
	for k, v := range got {
		require.NotContains(t, v, "loop5", "%s: names of devices are not settings", k)
		require.NotContains(t, v, "/mnt", "%s: paths are not settings", k)
	}
	require.Nil(t, (&Target{Path: "/old"}).StorageSettings(), "a result written before ioprobe recorded it")
}

// Compare names what differs, by setting, and nothing else; a side
// without a description is said once.
func TestStorageDiffers(t *testing.T) {
	base := &Result{Targets: []Target{fileOnLoopDisk("mq-deadline", "none")}}
	other := &Result{Targets: []Target{fileOnLoopDisk("none", "none")}}
	require.Equal(t, []string{"loop scheduler: base mq-deadline, other none"}, StorageDiffers(base, other, "base", "other"))
	require.Empty(t, StorageDiffers(base, base, "base", "other"))

	other.Targets[0].Stack[1].FSType = "xfs"
	other.Targets[0].Disk.Model = "QEMU HARDDISK"
	require.Equal(t, []string{
		"stack: base file → ext4 → loop → file → ext4 → disk, other file → xfs → loop → file → ext4 → disk",
		"filesystem: base ext4, other xfs",
		"loop scheduler: base mq-deadline, other none",
		"disk model: base (none), other QEMU HARDDISK",
	}, StorageDiffers(base, other, "base", "other"))

	old := &Result{Targets: []Target{{Path: "/mnt/x.dat"}}}
	require.Equal(t, []string{"the other result does not describe its storage (written before ioprobe recorded it)"},
		StorageDiffers(base, old, "base", "other"))
	require.Empty(t, StorageDiffers(old, old, "base", "other"))
}

// A merge says which hosts' storage differed, setting by setting, and
// the comparison of points says it too.
func TestMergeAndCompareSayTheStorageDiffers(t *testing.T) {
	ra, wa := latencies(1000, 80_000, 100_000, 1), latencies(500, 150_000, 300_000, 2)
	a := run("node1", 8, ra, wa, 10, 12)
	b := run("node2", 8, ra, wa, 10, 12)
	c := run("node3", 8, ra, wa, 10, 12)
	a.Targets = []Target{fileOnLoopDisk("mq-deadline", "none")}
	b.Targets = []Target{fileOnLoopDisk("mq-deadline", "none")}
	c.Targets = []Target{fileOnLoopDisk("none", "none")}
	m, err := Merge(a, b, c)
	require.NoError(t, err)
	require.Equal(t, []string{"loop scheduler: mq-deadline on node1, node2; none on node3"}, m.Merged.StorageDiffers)

	m, err = Merge(a, b)
	require.NoError(t, err)
	require.Empty(t, m.Merged.StorageDiffers, "the same storage")

	// What an input merged already said is kept.
	m2, err := Merge(m, c)
	require.NoError(t, err)
	require.Equal(t, []string{"loop scheduler: mq-deadline on node1+node2; none on node3"}, m2.Merged.StorageDiffers)

	d := run("node4", 8, ra, wa, 10, 12)
	m, err = Merge(a, d)
	require.NoError(t, err)
	require.Equal(t, []string{"storage not recorded on node4 (results written before ioprobe recorded it)"}, m.Merged.StorageDiffers)

	cmp, err := Compare([]*Result{a}, []*Result{c})
	require.NoError(t, err)
	require.Len(t, cmp.Points, 1)
	require.Equal(t, []string{"loop scheduler: base mq-deadline, other none"}, cmp.Points[0].StorageDiffers)
}
