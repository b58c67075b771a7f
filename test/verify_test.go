package test

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

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
	o, r := run("--bs", "64k", "--random-pct", "0", "--qd", "4", "--duration", "1s")
	require.Equal(t, 0, o.code, o.stderr)
	require.NotNil(t, r.Summary.Verify)
	require.Equal(t, r.Summary.ReadOps, r.Summary.Verify.ReadsVerified)
	require.Zero(t, r.Summary.Verify.ReadsUnverified)
	require.Zero(t, r.Summary.Verify.Failures)
	require.Greater(t, r.Summary.ReadOps, uint64(256), "the whole file was read at least once")

	// Reads and writes together: writes keep the format, nothing is flagged.
	o, r = run("--bs", "4k:50,16k:50", "--read-pct", "50", "--qd", "8", "--workers", "2", "--duration", "1s")
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

	o, r = run("--bs", "64k", "--random-pct", "0", "--qd", "4", "--duration", "1s", "--max-errors", "0")
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
	require.GreaterOrEqual(t, v.Failures, uint64(len(bad)))

	// Stopping at the first failure is the default.
	o, r = run("--bs", "64k", "--random-pct", "0", "--qd", "1", "--duration", "5s")
	require.Equal(t, 1, o.code)
	require.EqualValues(t, 1, r.Summary.Verify.Failures)
	require.Less(t, r.Summary.ElapsedSeconds, 4.0)
}
