package test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// TestStartAtRampBeginsAtTheInstant: the ramp (and so the measured
// window after it) begins at or after the requested instant, on the
// clock the test reads too.
func TestStartAtRampBeginsAtTheInstant(t *testing.T) {
	dir := t.TempDir()
	tgt := prepared(t, dir) // preparation is then only opening: a start 3s ahead is not overrun
	at := time.Now().Add(3 * time.Second).UTC().Truncate(time.Millisecond)
	o := ioprobe(t, dir, "run", "--target", tgt, "--size", "16MiB", "--qd", "2", "--duration", "500ms", "--ramp", "200ms",
		"--start-at", at.Format(time.RFC3339Nano), "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)
	r := decodeResult(t, o.stdout)
	require.Equal(t, result.StatusOK, r.Status)
	require.True(t, r.StartAt.Equal(at), "start_at %s, asked %s", r.StartAt, at)
	require.False(t, r.StartedAt.Before(at), "the ramp began at %s, before the requested %s", r.StartedAt, at)
	// It measured its window after the ramp. (Not that I/O completed in
	// it: 500 ms beside load can complete none, and the run says so.)
	require.GreaterOrEqual(t, r.Summary.ElapsedSeconds, 0.5)
	if r.Summary.Ops == 0 {
		require.Contains(t, r.Message, "no I/O completed in the measured window")
	}

	// Without --start-at the field is absent.
	o = ioprobe(t, dir, "run", "--target", tgt, "--size", "16MiB", "--duration", "100ms", "--ramp", "0s", "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)
	require.NotContains(t, o.stdout, `"start_at"`)
}

// TestStartAtPreparesFirstThenSIGINTWhileWaiting: a new file is created and
// filled while ioprobe waits for a start an hour ahead, and nothing is
// read from it; SIGINT then stops it with exit 130 and no result.
func TestStartAtPreparesFirstThenSIGINTWhileWaiting(t *testing.T) {
	dir := t.TempDir()
	tgt := filepath.Join(dir, "new.dat")
	b := startBackground(t, "run", "--target", tgt, "--size", "16MiB", "--qd", "2", "--duration", "1s", "--ramp", "0s",
		"--start-at", "+1h", "--output", "json")
	// ioprobe marks a new file ready (xattr user.ioprobe, state=ready)
	// only once it is completely filled: that is preparation over, an
	// hour before the start.
	filled := func() bool {
		buf := make([]byte, 512)
		n, err := unix.Getxattr(tgt, "user.ioprobe", buf)
		return err == nil && strings.Contains(string(buf[:n]), " state=ready ")
	}
	var exited bool
	var exitErr error
	if !assert.Eventually(t, func() bool {
		if done, err := b.done(); done {
			exited, exitErr = true, err
			return true
		}
		return filled()
	}, time.Minute, 20*time.Millisecond) {
		t.Fatalf("the target was never prepared: %s", b.errb.String())
	}
	if exited {
		t.Fatalf("ioprobe exited before the start: %v: %s", exitErr, b.errb.String())
	}
	st, err := os.Stat(tgt)
	require.NoError(t, err)
	require.EqualValues(t, 16<<20, st.Size())
	// Checking the target reads a page or so of metadata; the workload
	// (16MiB of 4k random reads) has not begun.
	require.Less(t, procIO(t, b.cmd.Process.Pid, "read_bytes"), uint64(1<<20), "ioprobe read from storage before the start")

	require.NoError(t, b.cmd.Process.Signal(syscall.SIGINT))
	require.Equal(t, 130, b.exitCode(t), b.errb.String())
	require.Empty(t, b.out.String(), "nothing was measured, nothing is printed")
	require.Contains(t, b.errb.String(), "nothing was measured")
}

// TestStartAtBadInput: a past instant or a bad value is one line on
// stderr, exit 2, and no target created.
func TestStartAtBadInput(t *testing.T) {
	for _, v := range []string{
		"2020-01-01T00:00:00Z",                                   // past
		time.Now().UTC().Format(time.RFC3339),                    // now: past by the time it is parsed
		"tomorrow", "2026-12-01 10:00:00", "2026-12-01T10:00:00", // no zone
		"+0s", "+-5s", "+30", "+",
	} {
		t.Run(v, func(t *testing.T) {
			dir := t.TempDir()
			tgt := filepath.Join(dir, "p.dat")
			o := ioprobe(t, dir, "run", "--target", tgt, "--size", "16MiB", "--duration", "1s", "--start-at", v)
			require.Equal(t, 2, o.code, o.stderr)
			require.Empty(t, o.stdout)
			require.Equal(t, 1, strings.Count(strings.TrimRight(o.stderr, "\n"), "\n")+1, "one line: %q", o.stderr)
			require.Contains(t, o.stderr, "--start-at")
			require.NoFileExists(t, tgt)
		})
	}
	// A start that preparation overruns: exit 2 naming how late, nothing
	// measured (the file it prepared stays, like any prepared target).
	dir := t.TempDir()
	o := ioprobe(t, dir, "run", "--target", filepath.Join(dir, "p.dat"), "--size", "64MiB", "--duration", "1s", "--start-at", "+1ns", "--output", "json")
	require.Equal(t, 2, o.code, o.stderr)
	require.Empty(t, o.stdout)
	require.Contains(t, o.stderr, "after it")
}
