package target

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/blkid/handmade"
	"github.com/ioprobe/ioprobe/internal/iobuf"
	"github.com/ioprobe/ioprobe/internal/verify"
)

// requireOwned checks that path may be written without a flag, as ioprobe's.
func requireOwned(t *testing.T, path string) {
	t.Helper()
	tg, err := Open(path, Options{Write: true})
	require.NoError(t, err)
	require.True(t, tg.Writable)
	require.True(t, tg.Formatted)
	require.NotZero(t, tg.SectorKey)
	require.NoError(t, tg.Close())
}

// An ioprobe file that a filesystem was made on through a loop device
// (same size, same inode, the marker untouched) is someone's data now.
func TestMkfsOnOwnFileMakesItForeign(t *testing.T) {
	requireRoot(t)
	mkfs := requireTool(t, "mkfs.ext4")
	path := newOwned(t, t.TempDir(), 32*mib)
	requireOwned(t, path)
	marked := markerOf(t, path)
	t.Run("mkfs and mount", func(t *testing.T) {
		dev := attachLoop(t, path)
		run(t, mkfs, "-q", "-F", dev)
		dir := mountAt(t, dev, "rw")
		require.NoError(t, os.WriteFile(filepath.Join(dir, "precious.txt"), []byte("a user's data\n"), 0o644))
	}) // unmounted and detached here
	require.Equal(t, marked, markerOf(t, path), "the marker survives mkfs")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.EqualValues(t, 32*mib, fi.Size())
	// The filesystem is the reason given, one no flag lifts: the refusal
	// does not offer --allow-destructive only to refuse again once given.
	before := sha256File(t, path)
	for _, o := range []Options{{Write: true}, {Write: true, AllowDestructive: true}} {
		_, err = Open(path, o)
		requireSafetyError(t, err, "it holds an ext4 filesystem (TYPE=ext4", "")
	}
	tg, err := Open(path, Options{})
	require.NoError(t, err, "reading stays allowed")
	require.True(t, tg.Formatted)
	require.NoError(t, tg.Close())
	require.Equal(t, before, sha256File(t, path), "refusing changed the file")
}

// Copies carry the marker (cp --preserve=xattr) but are not ioprobe's:
// neither a whole copy, nor a user's file that only got the xattr, nor
// one whose marker was forged to name it.
func TestCopiedMarkerIsNotOwnership(t *testing.T) {
	cp := requireTool(t, "cp")
	dir := t.TempDir()
	path := newOwned(t, dir, 4*mib)

	copied := filepath.Join(dir, "copy.dat")
	run(t, cp, "--preserve=xattr", path, copied)
	require.Equal(t, markerOf(t, path), markerOf(t, copied))
	requireForeign(t, copied, "it carries the marker of another file", false)

	user := filepath.Join(dir, "user.db")
	require.NoError(t, os.WriteFile(user, bytes.Repeat([]byte("rows of a user's database\n"), 4*mib/26+1)[:4*mib], 0o644))
	run(t, cp, "--attributes-only", "--preserve=xattr", path, user)
	require.Equal(t, markerOf(t, path), markerOf(t, user))
	requireForeign(t, user, "it carries the marker of another file", false)

	// A marker that names the user's file itself, its size and times
	// too: the content decides.
	var st unix.Statx_t
	require.NoError(t, unix.Statx(unix.AT_FDCWD, user, 0, unix.STATX_INO|unix.STATX_BTIME|unix.STATX_MTIME|unix.STATX_CTIME, &st))
	forged := marker{size: 4 * mib, id: 42, ino: st.Ino, gen: 1, mtime: st.Mtime.Sec*1e9 + int64(st.Mtime.Nsec), ctime: st.Ctime.Sec*1e9 + int64(st.Ctime.Nsec)}
	if st.Mask&unix.STATX_BTIME != 0 {
		forged.btime = st.Btime.Sec*1e9 + int64(st.Btime.Nsec)
	}
	require.NoError(t, unix.Setxattr(user, markerXattr, []byte(forged.String()), 0))
	requireForeign(t, user, "its content is no longer ioprobe's (byte 0)", true)
	forged.legacy = true // as an earlier ioprobe marked files
	require.NoError(t, unix.Setxattr(user, markerXattr, []byte(fmt.Sprintf("%s size=%d id=%016x ino=%d btime=%d", markerPrefixV2, forged.size, forged.id, forged.ino, forged.btime)), 0))
	requireForeign(t, user, "its content is no longer ioprobe's (byte 0)", true)

	requireOwned(t, path) // the original stays ioprobe's
}

// Anything written into an ioprobe file by something else makes it
// foreign: its modification time says so, wherever the bytes went. Where
// the writer put the modification time back (touch -d, utimensat), the
// change time moved, and every sector is read: the first foreign one is
// named.
func TestOverwrittenPartsMakeItForeign(t *testing.T) {
	for _, c := range []struct {
		name     string
		off, len int64
	}{
		{"first sector", 0, 512},
		{"one sector past 64 KiB", 64<<10 + 3*512, 512},
		{"1 MiB in the middle", 7 * mib, mib},
		{"near the end", 16*mib - 40<<10, 512},
		{"last sector", 16*mib - 512, 512},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := newOwned(t, t.TempDir(), 16*mib)
			requireOwned(t, path)
			mtime := mtimeOf(t, path)
			pastSlack()
			writeAt(t, path, c.off, bytes.Repeat([]byte{0xa5}, int(c.len)))
			requireForeign(t, path, "something else modified it since ioprobe last wrote it", true)
			setMtime(t, path, mtime)
			requireForeign(t, path, fmt.Sprintf("its content is no longer ioprobe's (byte %d)", c.off), true)
		})
	}
}

// pastSlack waits until a change made now moves a file's ctime past what
// ioprobe's last marker allows for its own marking (ctimeSlack): a change
// that puts the modification time back is then seen by the change time.
func pastSlack() {
	time.Sleep(2 * ctimeSlack) //hygiene:sleep the clock must pass ioprobe's ctime slack: no event to wait on
}

func mtimeOf(t *testing.T, path string) unix.Timespec {
	t.Helper()
	var st unix.Stat_t
	require.NoError(t, unix.Stat(path, &st))
	return st.Mtim
}

// setMtime puts path's modification time back, as touch -d would.
func setMtime(t *testing.T, path string, mtime unix.Timespec) {
	t.Helper()
	require.NoError(t, unix.UtimesNanoAt(unix.AT_FDCWD, path, []unix.Timespec{{Nsec: unix.UTIME_OMIT}, mtime}, 0))
	require.Equal(t, mtime, mtimeOf(t, path))
}

// markerState reads path's marker.
func markerState(t *testing.T, path string) marker {
	t.Helper()
	m, _, ok := parseMarker([]byte(markerOf(t, path)))
	require.True(t, ok, markerOf(t, path))
	return m
}

// writeOwn writes n bytes at off of the target as an engine would: every
// sector stamped under its key, through its O_DIRECT descriptor.
func writeOwn(t *testing.T, tg *Target, off, n int64) {
	t.Helper()
	mem, err := iobuf.New(1, int(n), 1)
	require.NoError(t, err)
	defer mem.Close()
	p := mem.Slot(0, n)
	verify.Mark(p, off, tg.SectorKey, 7, 1)
	got, err := unix.Pwrite(tg.FD, p, off)
	require.NoError(t, err)
	require.EqualValues(t, n, got)
}

// ioprobe's own runs keep the file ioprobe's: busy while one writes,
// ready after with its times, the generation counting the runs; the
// next run takes it without reading every sector.
func TestOwnRunsKeepOwnership(t *testing.T) {
	path := newOwned(t, t.TempDir(), 8*mib)
	m := markerState(t, path)
	require.False(t, m.busy)
	require.EqualValues(t, 1, m.gen, "the fill")
	for run := 0; run < 3; run++ {
		gen := markerState(t, path).gen
		tg, err := Open(path, Options{Write: true})
		require.NoError(t, err)
		require.True(t, markerState(t, path).busy, "busy while a run writes")
		writeOwn(t, tg, int64(run+1)*mib, 64<<10)
		require.NoError(t, tg.Close())
		m := markerState(t, path)
		require.False(t, m.busy)
		require.Equal(t, gen+1, m.gen)
		mt := mtimeOf(t, path)
		require.Equal(t, mt.Nano(), m.mtime, "the times as the run left them")
		requireOwned(t, path)
	}
	// Reads change nothing.
	before := markerOf(t, path)
	tg, err := Open(path, Options{})
	require.NoError(t, err)
	require.NoError(t, tg.Close())
	require.Equal(t, before, markerOf(t, path))
}

// A run killed while writing leaves the marker busy and nobody holding the
// writers' lock: the next run reads every sector, takes the file when all
// are ioprobe's and marks it ready; a foreign sector anywhere is named.
func TestKilledRunIsRecognised(t *testing.T) {
	kill := func(t *testing.T, tg *Target) { // what SIGKILL leaves: no Close
		require.NoError(t, unix.Close(tg.FD))
		tg.file.ref.close()
	}
	t.Run("ours", func(t *testing.T) {
		path := newOwned(t, t.TempDir(), 8*mib)
		tg, err := Open(path, Options{Write: true})
		require.NoError(t, err)
		writeOwn(t, tg, 3*mib, mib)
		kill(t, tg)
		require.True(t, markerState(t, path).busy)
		tg, err = Open(path, Options{})
		require.NoError(t, err, "read every sector: ours")
		require.True(t, tg.Formatted)
		require.NoError(t, tg.Close())
		m := markerState(t, path)
		require.False(t, m.busy, "a read run that scanned it marks it ready")
		requireOwned(t, path)
	})
	t.Run("changed after", func(t *testing.T) {
		path := newOwned(t, t.TempDir(), 8*mib)
		tg, err := Open(path, Options{Write: true})
		require.NoError(t, err)
		kill(t, tg)
		writeAt(t, path, 5*mib+4096, []byte("a user's row"))
		requireForeign(t, path, fmt.Sprintf("its content is no longer ioprobe's (byte %d)", 5*mib+4096), true)
		require.True(t, markerState(t, path).busy, "refusing changes nothing")
	})
	t.Run("another run is writing", func(t *testing.T) {
		path := newOwned(t, t.TempDir(), 8*mib)
		first, err := Open(path, Options{Write: true})
		require.NoError(t, err)
		second, err := Open(path, Options{Write: true})
		require.NoError(t, err, "a live writer's file is ioprobe's")
		require.NoError(t, first.Close())
		require.True(t, markerState(t, path).busy, "the second run still writes")
		require.NoError(t, second.Close())
		require.False(t, markerState(t, path).busy, "the last one out marks it ready")
		requireOwned(t, path)
	})
}

// A change of status only (chmod, rename, another xattr) moves the
// change time, not the content: every sector is read, and the file stays
// ioprobe's.
func TestStatusChangeIsScanned(t *testing.T) {
	dir := t.TempDir()
	path := newOwned(t, dir, 4*mib)
	require.NoError(t, os.Chmod(path, 0o600))
	moved := filepath.Join(dir, "moved.dat")
	require.NoError(t, os.Rename(path, moved))
	before := markerState(t, moved)
	requireOwned(t, moved)
	after := markerState(t, moved)
	require.Equal(t, before.gen+1, after.gen, "written once since")
}

// A superblock written into an ioprobe file past its first 64 KiB is
// somebody's filesystem: refused, and not as a foreign file that
// --allow-destructive would let ioprobe write (it does not), whether the
// writer left the file's modification time or put it back.
func TestSignatureInOwnFile(t *testing.T) {
	want := map[string]string{"ufs2": "ufs", "gfs": "gfs", "vmfs": "VMFS", "zfs-label1-only": "zfs_member"}
	var hs []handmade.Header
	for _, h := range append(handmade.FSHeaders(), handmade.Headers()...) {
		if _, ok := want[h.Name]; ok {
			hs = append(hs, h)
		}
	}
	require.Len(t, hs, len(want))
	for _, h := range hs {
		t.Run(h.Name, func(t *testing.T) {
			const size = 16 * mib
			path := newOwned(t, t.TempDir(), size)
			mtime := mtimeOf(t, path)
			pastSlack()
			for _, p := range h.Build(size) {
				require.GreaterOrEqual(t, p.Off, int64(64<<10), "past the first 64 KiB")
				writeAt(t, path, p.Off, p.Data)
			}
			for _, restore := range []bool{false, true} {
				if restore {
					setMtime(t, path, mtime)
				}
				before := sha256File(t, path)
				for _, allow := range []bool{false, true} {
					_, err := Open(path, Options{Write: true, AllowDestructive: allow})
					se := requireSafetyError(t, err, "it holds", "")
					require.Contains(t, se.Reason, want[h.Name])
					require.Contains(t, se.IDs, RefuseSignature)
				}
				require.Equal(t, before, sha256File(t, path))
			}
		})
	}
}

// A fill killed before it could cut the file back leaves the file larger
// than its busy marker says, the rest ioprobe's sectors or preallocated
// zeros: the next Open fills it again. Anything else there is someone's
// data; and a ready file whose size changed is someone's too.
func TestInterruptedFillIsCompleted(t *testing.T) {
	dir := t.TempDir()
	path := newOwned(t, dir, 4*mib)
	m := markerState(t, path)
	m.busy, m.run, m.gen = true, 99, m.gen+1 // what a killed extension to 6 MiB leaves
	require.NoError(t, unix.Setxattr(path, markerXattr, []byte(m.String()), 0))
	require.NoError(t, os.Truncate(path, 6*mib)) // zeros, as fallocate leaves them
	tg, err := Open(path, Options{Write: true})
	require.NoError(t, err)
	require.True(t, tg.Extended)
	require.EqualValues(t, 6*mib, tg.Size)
	require.EqualValues(t, 6*mib, tg.Region)
	require.NoError(t, tg.Close())
	require.EqualValues(t, 6*mib, markedSize(t, path))
	requireOwned(t, path)

	m = markerState(t, path)
	m.busy, m.run, m.gen = true, 99, m.gen+1
	require.NoError(t, unix.Setxattr(path, markerXattr, []byte(m.String()), 0))
	require.NoError(t, os.Truncate(path, 8*mib))
	writeAt(t, path, 6*mib, []byte("appended by someone"))
	requireForeign(t, path, fmt.Sprintf("its content is no longer ioprobe's (byte %d)", 6*mib), false)

	// Truncated below what ioprobe filled: foreign too.
	path2 := newOwned(t, t.TempDir(), 4*mib)
	require.NoError(t, os.Truncate(path2, 2*mib))
	requireForeign(t, path2, "its size changed from 4194304 to 2097152 bytes", false)
	// Grown while ready: foreign.
	path3 := newOwned(t, t.TempDir(), 4*mib)
	require.NoError(t, os.Truncate(path3, 5*mib))
	requireForeign(t, path3, "its size changed from 4194304 to 5242880 bytes since ioprobe last wrote it", false)
}

// Files an older ioprobe marked (v1: size only) prove nothing.
func TestOldMarkerIsForeign(t *testing.T) {
	path := newOwned(t, t.TempDir(), mib)
	require.NoError(t, unix.Setxattr(path, markerXattr, []byte("ioprobe.target/v1 size=1048576 sectors=v1"), 0))
	requireForeign(t, path, "it carries the marker of an older ioprobe", false)
}

// A --verify run that writes is the only writer of a file: every other
// writer is refused while it runs, and it is refused while another writes.
// Plain writers share the file; readers are never held up.
func TestVerifyWriterIsAlone(t *testing.T) {
	path := newOwned(t, t.TempDir(), mib)
	plain1, err := Open(path, Options{Write: true})
	require.NoError(t, err)
	plain2, err := Open(path, Options{Write: true})
	require.NoError(t, err, "plain writers share a file")
	_, err = Open(path, Options{Write: true, Exclusive: true})
	requireSafetyError(t, err, "another run is writing to it, and --verify cannot tell that run's writes from lost ones", "")
	require.NoError(t, plain1.Close())
	require.NoError(t, plain2.Close())

	v, err := Open(path, Options{Write: true, Exclusive: true})
	require.NoError(t, err, "alone now")
	_, err = Open(path, Options{Write: true})
	requireSafetyError(t, err, "a run with --verify is writing to it", "")
	require.Error(t, Check(path, Options{Write: true}), "Check sees it too")
	r, err := Open(path, Options{})
	require.NoError(t, err, "reading is never held up")
	require.NoError(t, r.Close())
	require.NoError(t, v.Close())
	requireOwned(t, path)
}
