package test

import (
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// TestVerifyDetectsEveryCorruptedSector corrupts a file behind ioprobe's
// back and checks that --verify finds exactly the damaged sectors, after
// clean runs (reads, and reads mixed with writes) found nothing.
func TestVerifyDetectsEveryCorruptedSector(t *testing.T) {
	dir := t.TempDir()
	tgt := filepath.Join(dir, "probe.dat")
	run := func(args ...string) (outcome, *result.Result) {
		base := []string{"run", "--target", tgt, "--size", "16MiB", "--verify", "--ramp", "0s", "--output", "json"}
		o := ioprobe(t, dir, append(base, args...)...)
		return o, decodeResult(t, o.stdout)
	}

	// A new file is filled with self-checking sectors: every read checks.
	// The runs are counts of I/Os, not windows (which beside load may
	// complete none): 256 sequential 64 KiB reads are the whole file.
	o, r := run(append([]string{"--bs", "64k", "--random-pct", "0", "--qd", "4"}, countedIOs(256)...)...)
	require.Equal(t, 0, o.code, o.stderr)
	require.NotNil(t, r.Summary.Verify)
	require.Equal(t, r.Summary.ReadOps, r.Summary.Verify.ReadsVerified)
	require.Zero(t, r.Summary.Verify.ReadsUnverified)
	require.Zero(t, r.Summary.Verify.Failures)
	require.EqualValues(t, 256, r.Summary.ReadOps, "the whole file was read")

	// Reads and writes together: writes keep the format, nothing is flagged.
	o, r = run(append([]string{"--bs", "4k:50,16k:50", "--read-pct", "50", "--qd", "8", "--workers", "2"}, countedIOs(256)...)...)
	require.Equal(t, 0, o.code, o.stderr)
	require.Greater(t, r.Summary.WriteOps, uint64(0))
	require.Equal(t, r.Summary.ReadOps, r.Summary.Verify.ReadsVerified)
	require.Zero(t, r.Summary.Verify.Failures, "false positive")

	// Damage five sectors (one at the very start, one at the end).
	bad := []int64{0, 4096 + 512, 1<<20 + 3*512, 8<<20 + 4096, 16<<20 - 512}
	f, err := os.OpenFile(tgt, os.O_WRONLY, 0)
	require.NoError(t, err)
	junk := make([]byte, 512)
	for _, off := range bad {
		_, err := rand.Read(junk)
		require.NoError(t, err)
		_, err = f.WriteAt(junk, off)
		require.NoError(t, err)
	}
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())

	o, r = run(append([]string{"--bs", "64k", "--random-pct", "0", "--qd", "4", "--max-errors", "0"}, countedIOs(256)...)...)
	require.Equal(t, 1, o.code, "verification failures are I/O errors: %s", o.stderr)
	require.Equal(t, result.StatusErrors, r.Status)
	require.Contains(t, r.Message, "verify:")
	v := r.Summary.Verify
	var found []int64
	for _, s := range v.FailedSectors {
		require.Equal(t, tgt, s.Target)
		found = append(found, s.Offset)
	}
	require.Equal(t, bad, found, "every damaged sector, and no other")
	require.Equal(t, v.Failures, r.Summary.ErrorsByClass["verify"])
	// Counted by read: one pass of 64 KiB reads, and the first two
	// damaged sectors share the first block.
	require.EqualValues(t, 4, v.Failures, "a failed read for each damaged 64 KiB block")

	// Stopping at the first failure is the default.
	o, r = run("--bs", "64k", "--random-pct", "0", "--qd", "1", "--duration", "5s")
	require.Equal(t, 1, o.code)
	require.EqualValues(t, 1, r.Summary.Verify.Failures)
	require.Less(t, r.Summary.ElapsedSeconds, 4.0)
}

// TestVerifyDetectsLostWrites plays a device that loses writes: while a
// 50/50 run with --verify rewrites and reads a small file, the test keeps
// putting two blocks back as they were before the run (sound sectors, in
// their places: only their age is wrong). The run reports stale sectors
// in those blocks and nowhere else.
func TestVerifyDetectsLostWrites(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	tgt := filepath.Join(dir, "probe.dat")
	base := []string{"run", "--target", tgt, "--size", "1MiB", "--verify", "--ramp", "0s", "--bs", "4k", "--output", "json"}
	o := ioprobe(t, dir, append(base, "--read-pct", "0", "--random-pct", "0", "--qd", "1", "--duration", "300ms")...)
	require.Equal(t, 0, o.code, o.stderr)

	blocks := []int64{0, 512 << 10}
	old, err := unix.Mmap(-1, 0, len(blocks)*4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	require.NoError(t, err)
	defer unix.Munmap(old)
	// The descriptor is closed before the run starts: a file another
	// process holds open for writing is a file in use, which the run's
	// checks refuse (the lost writes come from "the device", after them).
	// O_CLOEXEC keeps it out of every process a parallel test starts.
	open := func() int {
		fd, err := unix.Open(tgt, unix.O_RDWR|unix.O_DIRECT|unix.O_CLOEXEC, 0)
		require.NoError(t, err)
		return fd
	}
	fd := open()
	for i, off := range blocks {
		_, err := unix.Pread(fd, old[i*4096:(i+1)*4096], off)
		require.NoError(t, err)
	}
	require.NoError(t, unix.Close(fd))

	st, err := os.Stat(tgt)
	require.NoError(t, err)
	b := startBackground(t, append(base, "--read-pct", "50", "--random-pct", "100", "--qd", "4",
		"--duration", "3s", "--max-errors", "0")...)
	// Once the run writes it has passed its checks (which refuse a file
	// something else holds or changed since ioprobe last wrote it). From
	// then on, put the blocks back every 20 ms until it ends: its reads
	// find old sectors. Its first write is seen in the file's modification
	// time, which its checks leave alone (marking the file busy is an
	// xattr: the change time). Not in /proc/PID/io's write_bytes: marking
	// the file busy dirties the filesystem's metadata blocks, counted
	// there when they were clean (8 KiB here, before any write) — make
	// test beside helpers put the blocks back before the run's last
	// check, which refused the changed file.
	whileAlive(t, b, "the run never wrote", func(c *assert.CollectT) {
		now, err := os.Stat(tgt)
		if assert.NoError(c, err) {
			assert.NotEqual(c, st.ModTime(), now.ModTime())
		}
	})
	fd = open()
	defer unix.Close(fd)
	pace := time.NewTicker(20 * time.Millisecond)
	defer pace.Stop()
	guard := time.After(time.Minute)
	var runErr error
	for ended := false; !ended; {
		for i, off := range blocks {
			_, err := unix.Pwrite(fd, old[i*4096:(i+1)*4096], off)
			require.NoError(t, err)
		}
		select {
		case runErr = <-b.waited:
			b.exited, ended = true, true
		case <-pace.C:
		case <-guard:
			t.Fatalf("the 3 s run did not end within a minute: %s", b.stderr())
		}
	}
	var ee *exec.ExitError
	require.ErrorAs(t, runErr, &ee, "lost writes are I/O errors: %s", b.stderr())
	require.Equal(t, 1, ee.ExitCode(), "lost writes are I/O errors: %s", b.stderr())
	r := decodeResult(t, b.out.String())
	v := r.Summary.Verify
	require.True(t, v.LostWritesChecked)
	require.Positive(t, v.Failures)
	stale := 0
	for _, s := range v.FailedSectors {
		inBlock := false
		for _, b := range blocks {
			inBlock = inBlock || s.Offset >= b && s.Offset < b+4096
		}
		require.True(t, inBlock, "a failure outside the blocks put back: %+v", s)
		if s.Problem == "an older version of the sector (lost write)" {
			stale++
		}
	}
	require.Positive(t, stale, "%+v", v.FailedSectors)
}
