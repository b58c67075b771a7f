package target

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/blkid/handmade"
	"github.com/ioprobe/ioprobe/internal/iobuf"
	"github.com/ioprobe/ioprobe/internal/verify"
)

// A file changed between Open and the first write is refused by Recheck;
// one nothing touched passes, and a read-only target is not checked.
func TestRecheckFile(t *testing.T) {
	path := newOwned(t, t.TempDir(), 8*mib)
	tg, err := Open(path, Options{Write: true})
	require.NoError(t, err)
	defer tg.Close()
	require.NoError(t, tg.Recheck())
	var c ReadCount
	each := 0
	c.Each = func(int) { each++ }
	require.NoError(t, tg.CheckSignatures(&c))
	require.Positive(t, c.Ops, "a look reads")
	require.EqualValues(t, each, c.Ops)
	require.GreaterOrEqual(t, c.Bytes, c.Ops*512)
	writeAt(t, path, 3*mib, []byte("a row written meanwhile"))
	se := requireSafetyError(t, tg.Recheck(), "something else changed it after ioprobe checked it, before ioprobe wrote anything", "")
	require.Equal(t, []RefusalID{RefuseChanged}, se.IDs)

	r, err := Open(path, Options{})
	require.NoError(t, err)
	require.NoError(t, r.Recheck(), "a read-only target is never written")
	require.NoError(t, r.Close())
}

// A loop device attached over a file after Open, and a filesystem made
// through it: Recheck refuses both, CheckSignatures the filesystem.
func TestRecheckFileUnderLoop(t *testing.T) {
	requireRoot(t)
	mkfs := requireTool(t, "mkfs.ext4")
	path := newOwned(t, t.TempDir(), 32*mib)
	tg, err := Open(path, Options{Write: true})
	require.NoError(t, err)
	defer tg.Close()
	dev := attachLoop(t, path)
	requireSafetyError(t, tg.Recheck(), "it backs loop device "+filepath.Base(dev), "")
	require.NoError(t, tg.CheckSignatures(nil), "nothing on it yet")
	run(t, mkfs, "-q", "-F", dev)
	requireSafetyError(t, tg.CheckSignatures(nil), "it holds an ext4 filesystem", "")
}

// A block device held open exclusively by a run is still written by
// whoever opens it without O_EXCL (sgdisk), or through a second loop
// device over the same file (mkfs): the checks see it.
func TestRecheckDevice(t *testing.T) {
	requireRoot(t)
	t.Run("mkfs through a second loop device", func(t *testing.T) {
		mkfs := requireTool(t, "mkfs.ext4")
		backing := newBacking(t, 64*mib)
		dev := attachLoop(t, backing)
		tg, err := Open(dev, Options{Write: true, AllowDestructive: true})
		require.NoError(t, err)
		defer tg.Close()
		require.NoError(t, tg.Recheck())
		require.NoError(t, tg.CheckSignatures(nil))
		second := attachLoop(t, backing)
		run(t, mkfs, "-q", "-F", second)
		requireSafetyError(t, tg.CheckSignatures(nil), "it holds an ext4 filesystem (TYPE=ext4, signature at byte 1080)", "")
		require.Error(t, tg.Recheck())
	})
	t.Run("sgdisk, which does not open exclusively", func(t *testing.T) {
		sgdisk := requireTool(t, "sgdisk")
		dev := attachLoop(t, newBacking(t, 64*mib))
		tg, err := Open(dev, Options{Write: true, AllowDestructive: true})
		require.NoError(t, err)
		defer tg.Close()
		require.NoError(t, tg.CheckSignatures(nil))
		_ = runAllowFail(sgdisk, "-o", "-n", "1:2048:+8M", dev) // the kernel cannot re-read a table on a device held exclusively
		requireSafetyError(t, tg.CheckSignatures(nil), "gpt", "")
		require.Error(t, tg.Recheck())
	})
}

// runAllowFail runs a tool whose exit status the test does not judge.
func runAllowFail(name string, args ...string) error {
	return exec.Command(name, args...).Run()
}

// jmSector returns a sector stamped for offset off under key as ioprobe
// stamps them (plain: a key for which it starts with JMicron's magic
// "JM", about one in 32768; checksummed: random content for which it
// does, one in 65536) and the key it used.
func jmSector(off int64, key uint64, plain bool) ([]byte, uint64) {
	sec := make([]byte, verify.SectorSize)
	r := rand.New(rand.NewPCG(1, 2))
	for {
		if plain {
			key = r.Uint64() | 1
			verify.Mark(sec, off, key, 1, 1)
		} else {
			binary.LittleEndian.PutUint64(sec[40:], r.Uint64())
			verify.Format(sec, off, key, 1, 1)
		}
		if sec[0] == 'J' && sec[1] == 'M' {
			return sec, key
		}
	}
}

// ioprobe's random sectors now and then carry a weak magic by chance: a
// last sector ioprobe stamped that starts with "JM" is not taken for a
// JMicron RAID member; the same two bytes written by someone else are.
func TestOwnSectorIsNotASignature(t *testing.T) {
	const size = 8 * mib
	sec, key := jmSector(size-verify.SectorSize, 0, true)
	path := newBacking(t, size)
	writeAt(t, path, size-verify.SectorSize, sec)
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	fd := int(f.Fd())
	sigs, err := scanFileTarget(fd, size, verify.SectorSize)
	require.NoError(t, err)
	require.Len(t, sigs, 1)
	require.Equal(t, "jmicron_raid_member", sigs[0].Type, "the chance match this test is about")
	require.Empty(t, dropOwnSectors(fd, sigs, verify.SectorSize, key), "ioprobe's own sector")
	require.Len(t, dropOwnSectors(fd, sigs, verify.SectorSize, key+2), 1, "another file's key: not ours")
	require.Empty(t, dropOwnSectors(fd, sigs, verify.SectorSize, 0, key+2, key), "any of the keys")

	foreign := make([]byte, verify.SectorSize)
	copy(foreign, "JM")
	writeAt(t, path, size-verify.SectorSize, foreign)
	require.Len(t, dropOwnSectors(fd, sigs, verify.SectorSize, key), 1, "someone else's sector")
}

// The same on a device a --verify run writes (key 0, checksummed
// sectors): the look at an interval's end passes ioprobe's own last
// sector and stops at a foreign one.
func TestOwnSectorOnDevice(t *testing.T) {
	requireRoot(t)
	const size = 64 * mib
	sec, _ := jmSector(size-verify.SectorSize, 0, false)
	dev := attachLoop(t, newBacking(t, size))
	tg, err := Open(dev, Options{Write: true, AllowDestructive: true})
	require.NoError(t, err)
	defer tg.Close()
	mem, err := iobuf.New(1, verify.SectorSize, 3)
	require.NoError(t, err)
	defer mem.Close()
	p := mem.Slot(0, verify.SectorSize)
	copy(p, sec) // as an engine writes it
	_, err = unix.Pwrite(tg.FD, p, size-verify.SectorSize)
	require.NoError(t, err)
	sigs, err := scanDevice(tg.FD, size, tg.LogicalBlock)
	require.NoError(t, err)
	require.NotEmpty(t, sigs, "the probe matches by chance")
	require.NoError(t, tg.CheckSignatures(nil))
	require.NoError(t, tg.Recheck())

	clear(p)
	copy(p, "JM")
	_, err = unix.Pwrite(tg.FD, p, size-verify.SectorSize)
	require.NoError(t, err)
	requireSafetyError(t, tg.CheckSignatures(nil), "a JMicron RAID member", "")
}

// A weak magic in one of ioprobe's own sectors is not a signature, and
// does not stand in for the backup copies behind it either: a device whose
// last sector a --verify run stamped (starting "JM" by chance) and that
// holds a JFS secondary superblock, its primary gone, is refused for the
// JFS.
func TestOwnSectorDoesNotHideABackup(t *testing.T) {
	requireRoot(t)
	const size = 64 * mib
	sec, _ := jmSector(size-verify.SectorSize, 0, false)
	backing := newBacking(t, size)
	writeAt(t, backing, size-verify.SectorSize, sec)
	dev := attachLoop(t, backing)
	tg, err := Open(dev, Options{Write: true, AllowDestructive: true})
	require.NoError(t, err, "ioprobe's own sector alone")
	require.NoError(t, tg.Close())

	for _, h := range handmade.BackupHeaders() {
		if h.Name == "jfs-secondary" {
			for _, p := range h.Build(size) {
				writeAt(t, dev, p.Off, p.Data)
			}
		}
	}
	_, err = Open(dev, Options{Write: true, AllowDestructive: true})
	requireSafetyError(t, err, "it holds a JFS filesystem (its secondary superblock, at 60 KiB; fsck.jfs uses it when the primary is bad) (TYPE=jfs, signature at byte 61440)", "")
}
