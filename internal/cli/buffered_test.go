package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// TestBufferedOddSizesLeaveTheFileIoprobes: a buffered run of 2300-byte
// transfers, half of them reads, over part of an ioprobe file leaves the
// file ioprobe's. Its writes start inside sectors that the fill
// checksummed and that the read before them left alone; a plain header
// over part of such a sector tore it (issue 35: the next write run was
// refused, "its content is no longer ioprobe's", and a --verify read of
// the file reported checksum mismatches). The next write run reads every
// sector here (the file's change time moved: chmod), so that no torn
// sector escapes the check's random sample; the seed and the count of
// I/Os make the run the same every time. Both engines.
func TestBufferedOddSizesLeaveTheFileIoprobes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs I/O") //hygiene:skip -short leaves out the tests that run I/O
	}
	for _, engine := range []string{"sync", "uring"} {
		t.Run(engine, func(t *testing.T) { bufferedOddSizes(t, engine) })
	}
}

func bufferedOddSizes(t *testing.T, engine string) {
	tgt := filepath.Join(t.TempDir(), "b.dat")
	run := func(args ...string) (int, string, string) {
		t.Helper()
		return runCLI(t, append([]string{"run", "--target", tgt, "--duration", "60s", "--ramp", "0s", "--engine", engine}, args...)...)
	}
	code, _, errs := run("--size", "8MiB", "--bs", "4k", "--number-ios", "1") // made and filled
	require.Equal(t, ExitOK, code, errs)

	code, out, errs := run("--size", "8280000", "--bs", "2300", "--read-pct", "50", "--random-pct", "0", "--qd", "1",
		"--number-ios", "2000", "--seed", "35", "--buffered", "--output", "json")
	require.Equal(t, ExitOK, code, errs)
	var r result.Result
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.NotZero(t, r.Summary.WriteOps)
	require.NotZero(t, r.Summary.ReadOps)
	require.EqualValues(t, engine, r.Workload.Engine)

	require.NoError(t, os.Chmod(tgt, 0o640))
	code, _, errs = run("--size", "8MiB", "--bs", "4k", "--read-pct", "0", "--number-ios", "1", "--dry-run")
	require.Equal(t, ExitOK, code, "the next write run is refused: %s", errs)

	code, out, errs = run("--size", "8MiB", "--bs", "4k", "--read-pct", "100", "--random-pct", "0", "--qd", "4",
		"--number-ios", "2048", "--verify", "--output", "json")
	require.Equal(t, ExitOK, code, errs)
	r = result.Result{}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.NotNil(t, r.Summary.Verify)
	require.EqualValues(t, 2048, r.Summary.Verify.ReadsVerified, "every sector of the file read and judged")
	require.Zero(t, r.Summary.Verify.Failures, "%+v", r.Summary.Verify.FailedSectors)
}
