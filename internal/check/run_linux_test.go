package check

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/target"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// entries lists a directory's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestOpenCheckDirRefuses: what is not an existing directory is bad
// input, a directory in memory or one others could swap files in is
// refused, and nothing is created either way.
func TestOpenCheckDirRefuses(t *testing.T) {
	parent := t.TempDir()
	file := filepath.Join(parent, "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))
	for _, p := range []string{"", filepath.Join(parent, "missing"), filepath.Join(parent, "missing") + "/", file, file + "/", "/dev/null"} {
		_, err := openCheckDir(p)
		require.Error(t, err, p)
		require.True(t, target.IsBadInput(err), "%q: %v", p, err)
	}
	_, err := openCheckDir(filepath.Join(parent, "missing") + "/")
	require.ErrorContains(t, err, "no such directory")
	require.Equal(t, []string{"file"}, entries(t, parent))

	if _, err := os.Stat("/dev/shm"); err == nil {
		_, err := openCheckDir("/dev/shm")
		var se *target.SafetyError
		require.ErrorAs(t, err, &se)
		require.Equal(t, []target.RefusalID{target.RefuseBufferedFS}, se.IDs)
		require.Contains(t, err.Error(), "fdatasync touches no storage")
	}

	shared := filepath.Join(parent, "shared")
	require.NoError(t, os.Mkdir(shared, 0o777))
	require.NoError(t, unix.Chmod(shared, 0o777)) // past the umask
	_, err = openCheckDir(shared)
	require.ErrorContains(t, err, "is writable by every user (mode 0777, not sticky)")
	require.True(t, target.IsBadInput(err))
	var shse *target.SafetyError
	require.ErrorAs(t, err, &shse)
	require.Equal(t, []target.RefusalID{target.RefuseSharedDir}, shse.IDs, "the rule every file ioprobe writes is held to")
	require.NoError(t, unix.Chmod(shared, 0o1777))
	d, err := openCheckDir(shared)
	require.NoError(t, err, "sticky, as /tmp: others cannot rename what the check made")
	d.close()
	require.Empty(t, entries(t, shared))

	// A symlink to a directory is resolved once.
	link := filepath.Join(parent, "link")
	require.NoError(t, os.Symlink(shared, link))
	d, err = openCheckDir(link + "/")
	require.NoError(t, err)
	require.Equal(t, shared, d.resolved)
	d.close()
}

// TestRemoveOnlyWhatItCreated: a file renamed onto a name the check
// created is left where it is, with its content, and reported.
func TestRemoveOnlyWhatItCreated(t *testing.T) {
	dir := t.TempDir()
	d, err := openCheckDir(dir)
	require.NoError(t, err)
	defer d.close()
	mine, err := d.create(d.name("-a"), unix.O_WRONLY)
	require.NoError(t, err)
	replaced, err := d.create(d.name("-b"), unix.O_WRONLY)
	require.NoError(t, err)
	_, err = d.create(d.name("-a"), unix.O_WRONLY)
	require.ErrorIs(t, err, unix.EEXIST, "never opens a name that exists")

	victim := filepath.Join(dir, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("precious"), 0o600))
	require.NoError(t, os.Rename(victim, filepath.Join(dir, replaced.name)))
	// A symlink put in place of the other: the link is not followed, and
	// not removed either.
	require.NoError(t, os.Remove(filepath.Join(dir, mine.name)))
	require.NoError(t, os.Symlink("/etc/hostname", filepath.Join(dir, mine.name)))

	left, err := d.removeFiles()
	require.NoError(t, err)
	require.ElementsMatch(t, []string{filepath.Join(dir, replaced.name), filepath.Join(dir, mine.name)}, left)
	b, err := os.ReadFile(filepath.Join(dir, replaced.name))
	require.NoError(t, err)
	require.Equal(t, "precious", string(b))
	target, err := os.Readlink(filepath.Join(dir, mine.name))
	require.NoError(t, err)
	require.Equal(t, "/etc/hostname", target)

	// Its own files, still under their names, go.
	f, err := d.create(d.name("-c"), unix.O_WRONLY)
	require.NoError(t, err)
	left, err = d.removeFiles()
	require.NoError(t, err)
	require.Empty(t, left)
	_, err = os.Lstat(filepath.Join(dir, f.name))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestWALCutsSegments: with small segments, the stream cuts as wal.cut
// does — the full segment truncated at its end, a prepared one renamed
// into place under the next sequence number, the directory fsynced (a
// timed sample too) — and every segment holds etcd frames end to end.
func TestWALCutsSegments(t *testing.T) {
	dir := t.TempDir()
	d, err := openCheckDir(dir)
	require.NoError(t, err)
	defer d.close()
	const seg = 64 << 10
	w, err := newWAL(d, 1, 0, seg)
	require.NoError(t, err)
	const records = 100 // 230 KB: three cuts of 64 KiB
	for i := 0; i < records; i++ {
		require.NoError(t, w.save())
	}
	w.close()
	require.Equal(t, uint64(3), w.cuts)
	require.Equal(t, uint64(records), w.records)
	// A sample per record, two more a cut (the header's sync, the
	// directory's fsync).
	require.Equal(t, uint64(records+2*3), w.fsync.Count())
	require.Equal(t, uint64(records+3), w.write.Count())

	names := entries(t, dir)
	var wals, tmps []string
	for _, n := range names {
		require.True(t, strings.HasPrefix(n, d.prefix+"-r1-"), n)
		switch filepath.Ext(n) {
		case ".wal":
			wals = append(wals, n)
		case ".tmp":
			tmps = append(tmps, n)
		}
	}
	require.Len(t, wals, 4, names)
	require.Len(t, tmps, 1, "the pipeline keeps one segment prepared: %v", names)
	for i, n := range wals {
		require.Equal(t, d.name("-r1-"+strings.Repeat("0", 15)+string(rune('0'+i))+".wal"), n)
		b, err := os.ReadFile(filepath.Join(dir, n))
		require.NoError(t, err)
		if i < 3 {
			// Cut at its end: the record that crossed the size is the
			// one written in the cut.
			require.Greater(t, len(b), seg)
			require.LessOrEqual(t, len(b), seg+2*FrameBytes)
		}
		// Frames end to end: each length field says what follows.
		off, frames := 0, 0
		for off+8 <= len(b) {
			n := int(binary.LittleEndian.Uint64(b[off:]))
			if n == 0 && i == 3 {
				break // the last segment's preallocated rest
			}
			require.Zero(t, n%8)
			off += 8 + n
			frames++
		}
		require.Positive(t, frames)
	}
	st, err := os.Stat(filepath.Join(dir, tmps[0]))
	require.NoError(t, err)
	require.Equal(t, int64(seg), st.Size(), "prepared whole, size set (fallocate mode 0)")

	left, err := d.removeFiles()
	require.NoError(t, err)
	require.Empty(t, left)
	require.Empty(t, entries(t, dir))
}

// TestBackendCommits: each commit writes a page a put and four pages of
// the path and the freelist, then the meta page, with two fdatasyncs, growing the file by
// AllocSize when it must.
func TestBackendCommits(t *testing.T) {
	dir := t.TempDir()
	d, err := openCheckDir(dir)
	require.NoError(t, err)
	defer d.close()
	var puts atomic.Uint64
	b, err := newBackend(d, 1, &puts)
	require.NoError(t, err)
	require.NoError(t, b.commitPuts(10))
	require.NoError(t, b.commitPuts(7))
	require.Equal(t, uint64(4), b.fdatasyncs)
	require.Equal(t, uint64(1), b.grows, "one growth of 16 MiB covers both")
	require.Equal(t, uint64(10+4+1+7+4+1), b.pages)
	var st unix.Stat_t
	require.NoError(t, unix.Fstat(b.f.fd, &st))
	// The first commit needed pages up to 4+4+10 and one past: grown to
	// that plus AllocSize; the second fitted.
	require.Equal(t, (4+4+10+1)*int64(PageBytes)+AllocSize, st.Size)
	_, err = d.removeFiles()
	require.NoError(t, err)
}

// TestRunEtcdShort runs the whole check briefly: both streams measured,
// every fdatasync counted, the kernel's counters read when there is a
// device, every file gone.
//
// The backend commits only the puts the WAL has saved, so a repeat whose
// WAL saved none before the backend's last look (its first fdatasync
// outlasting the window, or the goroutines not scheduled, on a busy
// machine) commits nothing, as etcd would: the report must say that
// repeat timed nothing rather than give it a figure. Runs are gathered
// until one committed (a backend that never commits fails after five),
// and every run's counts are checked.
func TestRunEtcdShort(t *testing.T) {
	dir := t.TempDir()
	var rep *Report
	for run := 1; run <= 5; run++ {
		rep = checkShortRun(t, dir)
		if rep.Streams[1].Commits > 0 {
			break
		}
		t.Logf("run %d: no repeat committed (the WAL's first save outlasted the backend's looks): %s", run, rep.Verdict.Streams[1].Reason)
	}
	require.Positive(t, rep.Streams[1].Commits, "about 3 commits a repeat")

	// Interrupted: a report without a verdict, the files gone.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	rep, err := runEtcd(ctx, Options{Target: dir, Duration: time.Minute, Repeat: 1, Backend: true})
	require.NoError(t, err)
	require.Equal(t, result.StatusInterrupted, rep.Status)
	require.Nil(t, rep.Verdict)
	require.Empty(t, rep.Next)
	require.Empty(t, entries(t, dir))
}

// checkShortRun runs the check for two repeats of 400 ms and checks its
// counts: what the report says each repeat did adds up to the totals,
// and the backend's fdatasyncs are two a commit and the growths' fsyncs.
func checkShortRun(t *testing.T, dir string) *Report {
	t.Helper()
	rep, err := runEtcd(context.Background(), Options{Target: dir, Duration: 400 * time.Millisecond, Repeat: 2, Backend: true})
	require.NoError(t, err)
	require.Equal(t, result.StatusOK, rep.Status, rep.Message)
	require.Empty(t, entries(t, dir))
	require.Len(t, rep.Streams, 2)
	wal, backend := rep.Streams[0], rep.Streams[1]
	require.Equal(t, "wal", wal.Name)
	require.Positive(t, wal.Samples)
	require.Equal(t, wal.Records, wal.Fdatasyncs, "an fdatasync a record, no cut in 400 ms")
	require.Equal(t, wal.Records*FrameBytes, wal.Bytes)
	require.Equal(t, wal.Samples, wal.WriteHistogram.Count())
	require.Len(t, wal.RepeatFigures, 2)
	require.Len(t, wal.RepeatSamples, 2)
	require.Equal(t, wal.Samples, wal.RepeatSamples[0]+wal.RepeatSamples[1])
	require.Equal(t, "backend", backend.Name)
	require.Equal(t, backend.Commits, backend.Samples)
	require.Len(t, backend.RepeatSamples, 2)
	require.Len(t, backend.RepeatFigures, 2)
	require.Equal(t, backend.Commits, backend.RepeatSamples[0]+backend.RepeatSamples[1])
	var committed uint64
	var empty []string
	for i, n := range backend.RepeatSamples {
		require.Equal(t, n == 0, backend.RepeatFigures[i] == nil, "a figure exactly where the repeat committed")
		if n > 0 {
			committed++
		} else {
			empty = append(empty, fmt.Sprint(i+1))
		}
	}
	// Two fdatasyncs a commit; each repeat's new file grows (ftruncate,
	// fsync) at its first commit, and again only after AllocSize more
	// pages, which 400 ms seldom writes.
	require.GreaterOrEqual(t, backend.Fdatasyncs, 2*backend.Commits, "two a commit")
	growths := backend.Fdatasyncs - 2*backend.Commits
	require.GreaterOrEqual(t, growths, committed, "the first growth's fsync in each repeat that committed")
	require.LessOrEqual(t, growths, committed+backend.Pages/(AllocSize/PageBytes), "a growth fsync a repeat, and one more for every %d pages", AllocSize/PageBytes)
	require.NotNil(t, rep.Verdict)
	require.Len(t, rep.Verdict.Streams, 2)
	require.Equal(t, Inconclusive, rep.Verdict.Streams[1].Verdict, "a few commits are not 300")
	require.NotEqual(t, Pass, rep.Verdict.Verdict)
	if len(empty) > 0 {
		t.Logf("repeat %s committed nothing: %s", strings.Join(empty, " and "), rep.Verdict.Streams[1].Reason)
		require.Contains(t, rep.Verdict.Streams[1].Reason, " timed no commits", "a repeat that timed nothing says so")
		require.Contains(t, rep.Verdict.Streams[1].Reason, strings.Join(empty, " and "))
	}
	if rep.Target.Device != "" {
		require.NotNil(t, rep.Kernel)
		require.Equal(t, wal.Samples+backend.Fdatasyncs, rep.Kernel.Fdatasyncs)
	}
	return rep
}

// TestStreamsAllocateNothing: an append and a commit allocate nothing
// (the hot path's rule; BenchmarkWALSave measures).
func TestStreamsAllocateNothing(t *testing.T) {
	dir := t.TempDir()
	d, err := openCheckDir(dir)
	require.NoError(t, err)
	defer d.close()
	w, err := newWAL(d, 1, 0, SegmentBytes)
	require.NoError(t, err)
	defer w.close()
	require.Zero(t, testing.AllocsPerRun(20, func() { require.NoError(t, w.save()) }))
	b, err := newBackend(d, 1, &w.appended)
	require.NoError(t, err)
	require.NoError(t, b.commitPuts(4)) // the first commits allocate the path's pages, the first grows the file
	require.NoError(t, b.commitPuts(4))
	require.Zero(t, testing.AllocsPerRun(5, func() { require.NoError(t, b.commitPuts(4)) }))
	_, err = d.removeFiles()
	require.NoError(t, err)
}

// BenchmarkWALSave: one append (write, fdatasync) on the test's
// filesystem; -benchmem shows it allocates nothing.
func BenchmarkWALSave(b *testing.B) {
	d, err := openCheckDir(b.TempDir())
	require.NoError(b, err)
	defer d.close()
	w, err := newWAL(d, 1, 0, SegmentBytes)
	require.NoError(b, err)
	defer w.close()
	b.ReportAllocs()
	for b.Loop() {
		if err := w.save(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	_, _ = d.removeFiles()
}

// TestWALLayout: segment by segment, what etcd's wal.Save and wal.cut
// leave on disk, for segment sizes that cut often, at a frame's edge and
// rarely. The model, from etcd's code: a segment starts with the header
// (a crc, the metadata and the hard-state record, each framed); a record
// is written at the segment's end while the end is under the segment
// size; the record that finds it at or past the size is written there
// too, and the segment is cut — truncated at its end, so its size is
// exactly its frames — and the next one, prepared whole, begins.
func TestWALLayout(t *testing.T) {
	header := []int{8, 32, 24}
	headerBytes := 0
	for _, n := range header {
		headerBytes += 8 + n
	}
	for _, c := range []struct {
		name    string
		seg     int64
		records int
	}{
		{"a cut every third record", 4096, 10},
		{"the size a frame's end", int64(headerBytes + 5*FrameBytes), 12},
		{"the size a byte past a frame's end", int64(headerBytes+5*FrameBytes) + 1, 12},
		{"no cut", 1 << 20, 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The model: each segment's record count.
			perSeg := []int{0}
			off := int64(headerBytes)
			for i := 0; i < c.records; i++ {
				perSeg[len(perSeg)-1]++
				if off < c.seg {
					off += FrameBytes
					continue
				}
				perSeg = append(perSeg, 0)
				off = int64(headerBytes)
			}
			cuts := len(perSeg) - 1

			dir := t.TempDir()
			d, err := openCheckDir(dir)
			require.NoError(t, err)
			defer d.close()
			w, err := newWAL(d, 1, 0, c.seg)
			require.NoError(t, err)
			for i := 0; i < c.records; i++ {
				require.NoError(t, w.save())
			}
			w.close()
			require.Equal(t, uint64(cuts), w.cuts)
			require.Equal(t, uint64(c.records), w.records)
			require.Equal(t, uint64(c.records*FrameBytes+cuts*headerBytes), w.bytes, "every record and each new segment's header")
			require.Equal(t, uint64(c.records+2*cuts), w.fsync.Count(), "a sync a record; a cut adds the header's and the directory's")
			require.Equal(t, uint64(c.records+cuts), w.write.Count())

			var index uint64
			for seq, n := range perSeg {
				name := d.name(fmt.Sprintf("-r1-%016x.wal", seq))
				b, err := os.ReadFile(filepath.Join(dir, name))
				require.NoError(t, err, "segment %d", seq)
				used := headerBytes + n*FrameBytes
				if seq < cuts {
					require.Len(t, b, used, "segment %d: cut at its end", seq)
				} else {
					require.Len(t, b, max(int(c.seg), used), "the last segment: preallocated, the size set (fallocate mode 0)")
				}
				// The header's frames, then the records', each an 8-byte
				// length and what it says, the records in order.
				p := 0
				for _, h := range header {
					require.Equal(t, uint64(h), binary.LittleEndian.Uint64(b[p:]), "segment %d: header at %d", seq, p)
					p += 8 + h
				}
				for i := 0; i < n; i++ {
					require.Equal(t, uint64(RecordBytes), binary.LittleEndian.Uint64(b[p:]), "segment %d: frame %d", seq, i)
					require.Equal(t, index, binary.LittleEndian.Uint64(b[p+8:]), "segment %d: frame %d's entry", seq, i)
					index++
					p += FrameBytes
				}
				require.Equal(t, used, p)
				if p+8 <= len(b) {
					require.Zero(t, binary.LittleEndian.Uint64(b[p:]), "nothing after the last frame")
				}
			}
			require.Equal(t, uint64(c.records), index)
			tmps, err := filepath.Glob(filepath.Join(dir, d.prefix+"-r1-*.tmp"))
			require.NoError(t, err)
			require.Len(t, tmps, 1, "the pipeline keeps one segment prepared")
			st, err := os.Stat(tmps[0])
			require.NoError(t, err)
			require.Equal(t, c.seg, st.Size())
			_, err = os.Stat(filepath.Join(dir, d.name(fmt.Sprintf("-r1-%016x.wal", len(perSeg)))))
			require.ErrorIs(t, err, os.ErrNotExist, "no segment past the model's")

			left, err := d.removeFiles()
			require.NoError(t, err)
			require.Empty(t, left)
			require.Empty(t, entries(t, dir))
		})
	}
}
