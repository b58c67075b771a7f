package target

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/iobuf"
)

const loopSize = 32 << 20

var writeAll = Options{Write: true, AllowDestructive: true, Align: 4096, MaxBlock: 65536}

// Every refusal on a real device, and each time the device's bytes are
// the same afterwards.
func TestBlockDeviceRefusals(t *testing.T) {
	requireRoot(t)
	tests := []struct {
		name string
		// setup prepares the backing file, attaches it and returns the
		// device to open.
		setup  func(t *testing.T, backing string) string
		opts   Options
		reason string
		// override is the flag that would override it ("" for none).
		override string
	}{
		{
			name:     "plain device without --allow-destructive",
			setup:    func(t *testing.T, b string) string { return attachLoop(t, b) },
			opts:     Options{Write: true, Align: 4096},
			reason:   "block devices are read-only by default, and no filesystem, partition table or other signature was found on it",
			override: "--allow-destructive",
		},
		{
			name: "ext4 filesystem",
			setup: func(t *testing.T, b string) string {
				run(t, requireTool(t, "mkfs.ext4"), "-q", "-F", b)
				return attachLoop(t, b)
			},
			opts:   writeAll,
			reason: "it holds an ext4 filesystem (TYPE=ext4, signature at byte 1080)",
		},
		{
			name: "ext4 filesystem, and no --allow-destructive: the real reason, no flag offered",
			setup: func(t *testing.T, b string) string {
				run(t, requireTool(t, "mkfs.ext4"), "-q", "-F", b)
				return attachLoop(t, b)
			},
			opts:   Options{Write: true},
			reason: "it holds an ext4 filesystem (TYPE=ext4, signature at byte 1080)",
		},
		{
			name: "swap",
			setup: func(t *testing.T, b string) string {
				run(t, requireTool(t, "mkswap"), b)
				return attachLoop(t, b)
			},
			opts:   writeAll,
			reason: "(TYPE=swap, signature at byte 4086)",
		},
		{
			name: "MBR partition table",
			setup: func(t *testing.T, b string) string {
				writeAt(t, b, 0, mbr(make([]byte, 512), 0x83, 0x83))
				return attachLoop(t, b)
			},
			opts:   writeAll,
			reason: "(PTTYPE=dos, signature at byte 510)",
		},
		{
			name: "GPT partition table",
			setup: func(t *testing.T, b string) string {
				cmd := exec.Command(requireTool(t, "sfdisk"), "-q", b)
				cmd.Stdin = strings.NewReader("label: gpt\n")
				out, err := cmd.CombinedOutput()
				require.NoError(t, err, "%s", out)
				return attachLoop(t, b)
			},
			opts:   writeAll,
			reason: "(PTTYPE=gpt, signatures at bytes 512, ",
		},
		{
			name: "LVM2 label",
			setup: func(t *testing.T, b string) string {
				if pv, err := exec.LookPath("pvcreate"); err == nil {
					dev := attachLoop(t, b)
					run(t, pv, "-ff", "-y", dev)
					return dev
				}
				writeAt(t, b, 512, []byte("LABELONE\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x20\x00\x00\x00LVM2 001"))
				return attachLoop(t, b)
			},
			opts:   writeAll,
			reason: "(TYPE=LVM2_member, signature at byte 536)",
		},
		{
			name: "md RAID superblock v1.2",
			setup: func(t *testing.T, b string) string {
				// magic, major version 1, and super_offset (sectors) where it lies.
				sb := put(put(make([]byte, 256), 0, le32(0xa92b4efc)), 4, le32(1))
				writeAt(t, b, 4096, put(sb, 144, le32(4096>>9)))
				return attachLoop(t, b)
			},
			opts:   writeAll,
			reason: "(TYPE=linux_raid_member, signature at byte 4096)",
		},
		{
			name: "md RAID superblock v0.90 at the end",
			setup: func(t *testing.T, b string) string {
				writeAt(t, b, loopSize-64<<10, le32(0xa92b4efc))
				return attachLoop(t, b)
			},
			opts:   writeAll,
			reason: "(TYPE=linux_raid_member, signature at byte ",
		},
		{
			name: "mounted",
			setup: func(t *testing.T, b string) string {
				run(t, requireTool(t, "mkfs.ext4"), "-q", "-F", b)
				dev := attachLoop(t, b)
				mountAt(t, dev, "ro")
				return dev
			},
			opts:   writeAll,
			reason: "it is mounted at /",
		},
		{
			name: "disk with partitions",
			setup: func(t *testing.T, b string) string {
				dev := attachLoop(t, b)
				addPartitions(t, dev, [2]int64{2048, 16384})
				return dev
			},
			opts:   writeAll,
			reason: "it has partitions (loop",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			backing := newBacking(t, loopSize)
			dev := tc.setup(t, backing)
			before := sha256File(t, backing)

			tg, err := Open(dev, tc.opts)
			if tg != nil {
				tg.Close() // so cleanup can still detach it
			}
			require.Nil(t, tg)
			t.Log(err)
			se := requireSafetyError(t, err, tc.reason, tc.override)
			require.True(t, se.Write)
			require.Contains(t, err.Error(), "refusing to write to "+dev+": ")

			// Reading is always allowed.
			ro, err := Open(dev, Options{Align: 4096})
			require.NoError(t, err)
			require.False(t, ro.Writable)
			require.NoError(t, ro.Close())

			require.Equal(t, before, sha256File(t, backing), "the device's bytes changed")
		})
	}
}

// A mounted partition's disk is refused too, naming the partition.
func TestBlockDiskOfMountedPartition(t *testing.T) {
	requireRoot(t)
	backing := newBacking(t, loopSize)
	dev := attachLoop(t, backing)
	parts := addPartitions(t, dev, [2]int64{2048, 16384})
	run(t, requireTool(t, "mkfs.ext4"), "-q", "-F", parts[0])
	dir := mountAt(t, parts[0], "ro")
	before := sha256File(t, backing)

	_, err := Open(dev, writeAll)
	requireSafetyError(t, err, "its partition "+filepath.Base(parts[0])+" is mounted at "+dir+" (ext4)", "")
	_, err = Open(parts[0], writeAll)
	requireSafetyError(t, err, "it is mounted at "+dir+" (ext4)", "")
	require.Equal(t, before, sha256File(t, backing))
}

func TestBlockReadOnlyWithFilesystem(t *testing.T) {
	requireRoot(t)
	backing := newBacking(t, loopSize)
	run(t, requireTool(t, "mkfs.ext4"), "-q", "-F", backing)
	dev := attachLoop(t, backing)
	before := sha256File(t, backing)

	for _, opts := range []Options{{}, {AllowDestructive: true, Align: 4096, Region: 1 << 20}} {
		tg, err := Open(dev, opts)
		require.NoError(t, err)
		require.Equal(t, KindBlock, tg.Kind)
		require.Equal(t, int64(loopSize), tg.Size)
		require.Equal(t, int64(512), tg.LogicalBlock)
		require.Equal(t, filepath.Base(dev), tg.Device)
		require.Equal(t, dev, tg.Resolved)
		require.False(t, tg.Writable)
		require.False(t, tg.Created)
		if opts.Region == 0 {
			require.Equal(t, int64(loopSize), tg.Region)
		} else {
			require.Equal(t, opts.Region, tg.Region)
		}
		fl := openFlags(t, tg.FD)
		require.Equal(t, unix.O_RDONLY, fl&unix.O_ACCMODE)
		require.NotZero(t, fl&unix.O_DIRECT)

		// It reads, and what it reads is the filesystem.
		buf, err := readDirect(tg.FD, 0, 4096)
		require.NoError(t, err)
		require.Equal(t, []byte{0x53, 0xEF}, buf[1080:1082])
		_, err = ReadDiskStats("", tg.Device)
		require.NoError(t, err)
		require.NoError(t, tg.Close())
		require.NoError(t, tg.Close(), "Close twice is harmless")
	}
	require.Equal(t, before, sha256File(t, backing))
}

func TestBlockBlankDeviceWritable(t *testing.T) {
	requireRoot(t)
	backing := newBacking(t, loopSize)
	dev := attachLoop(t, backing)

	tg, err := Open(dev, Options{Write: true, AllowDestructive: true, Align: 4096, MaxBlock: 65536, Region: 1 << 20})
	require.NoError(t, err)
	t.Cleanup(func() { tg.Close() })
	require.True(t, tg.Writable)
	require.Equal(t, int64(1<<20), tg.Region)
	fl := openFlags(t, tg.FD)
	require.Equal(t, unix.O_RDWR, fl&unix.O_ACCMODE)
	require.NotZero(t, fl&unix.O_DIRECT)

	// The descriptor writes (from mmap'd memory, as engines do).
	bufs, err := iobuf.New(1, 4096, 7)
	require.NoError(t, err)
	defer bufs.Close()
	n, err := unix.Pwrite(tg.FD, bufs.Slot(0, 4096), 8192)
	require.NoError(t, err)
	require.Equal(t, 4096, n)
	got, err := os.ReadFile(backing)
	require.NoError(t, err)
	require.Equal(t, bufs.Slot(0, 4096), got[8192:8192+4096])

	// It is held exclusively while ioprobe writes: a second writer, a
	// mount or mkfs -t would get EBUSY.
	_, err = Open(dev, writeAll)
	requireSafetyError(t, err, "the kernel refused exclusive access", "")
	require.NoError(t, tg.Close())
	again, err := Open(dev, writeAll)
	require.NoError(t, err)
	require.NoError(t, again.Close())
}

func TestBlockAlignmentAndRegion(t *testing.T) {
	requireRoot(t)
	backing := newBacking(t, loopSize)
	dev := attachLoop(t, backing, "--sector-size", "4096")

	tg, err := Open(dev, Options{})
	require.NoError(t, err)
	require.Equal(t, int64(4096), tg.LogicalBlock)
	require.Equal(t, int64(4096), tg.Region/(loopSize/4096), "region 0 is the whole device")
	require.NoError(t, tg.Close())

	tests := []struct {
		opts Options
		want string
	}{
		{Options{Align: 512}, "alignment 512B is not a multiple of the logical block size 4KiB"},
		{Options{Align: 4096, MaxBlock: 6144}, "transfer size 6KiB is not a multiple of the logical block size 4KiB"},
		{Options{Align: 4096, Region: 2 * loopSize}, "region 64MiB is larger than the target's size 32MiB"},
		{Options{Align: 8192, Region: 12288}, "region 12KiB is not a multiple of the alignment 8KiB"},
	}
	before := sha256File(t, backing)
	for _, tc := range tests {
		for _, write := range []bool{false, true} {
			o := tc.opts
			o.Write, o.AllowDestructive = write, write
			_, err := Open(dev, o)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			require.ErrorContains(t, err, tc.want)
		}
	}
	require.Equal(t, before, sha256File(t, backing))
}

// A blank partition of a disk whose other partition is mounted may be
// written: the write cannot reach the other partition, and util-linux's
// blkid -p, which describes the blank partition's own table entry
// (PART_ENTRY_*) with exit status 0, finds nothing on it.
func TestBlankPartitionBesideAMountedOne(t *testing.T) {
	requireRoot(t)
	backing := newBacking(t, loopSize)
	dev := attachLoop(t, backing)
	parts := addPartitions(t, dev, [2]int64{2048, 16384}, [2]int64{18432, 16384})
	run(t, requireTool(t, "mkfs.ext4"), "-q", "-F", parts[0])
	mountAt(t, parts[0], "ro")

	tg, err := Open(parts[1], writeAll)
	require.NoError(t, err)
	require.True(t, tg.Writable)
	require.NoError(t, tg.Close())
}
