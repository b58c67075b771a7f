package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// TestRunFioJob runs a job file for real: fio's buffered default is run
// with O_DIRECT and says so on stderr and in the result; --target replaces
// the file's filename.
func TestRunFioJob(t *testing.T) {
	job, tgt := ioJobFile(t, "[global]\ntime_based\nruntime=200ms\nsize=8m\nfilename=/nonexistent/x\n[rr]\nrw=randrw\nrwmixread=60\nbs=8k\n")
	code, out, errs := dryRunCmd(t, "run", "--fio-job", job, "--target", tgt, "--output", "json")
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, errs, "ioprobe: "+job+" [rr]: fio's default is buffered I/O (direct=0): ioprobe runs this job with O_DIRECT")
	var r result.Result
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, result.Schema, r.Schema)
	require.Equal(t, []string{"[rr] fio's default is buffered I/O (direct=0): ioprobe runs this job with O_DIRECT"}, r.Notes)
	require.Equal(t, tgt, r.Targets[0].Path)
	require.Equal(t, 60, r.Workload.ReadPct)
	require.EqualValues(t, 8<<20, r.Workload.RegionBytes)
	require.Equal(t, workload.EngineSync, r.Workload.Engine, "fio's default ioengine is psync")
	require.Equal(t, 1, r.Workload.QueueDepth)
	require.NotZero(t, r.Summary.ReadOps)
	require.NotZero(t, r.Summary.WriteOps)
}

// TestRunFioJobRefusals: a refused job file, a flag the job file sets, and
// --section without --fio-job are exit 2 and touch nothing.
func TestRunFioJobRefusals(t *testing.T) {
	dir := t.TempDir()
	tgt := filepath.Join(dir, "t.dat")
	job := filepath.Join(dir, "j.fio")
	require.NoError(t, os.WriteFile(job, []byte("[global]\ntime_based\nruntime=1\n[a]\nrw=randread\n[b]\nstonewall\nrw=trimwrite\n"), 0o600))
	code, _, errs := dryRunCmd(t, "run", "--fio-job", job, "--target", tgt)
	require.Equal(t, ExitBadInput, code)
	require.Equal(t, "ioprobe: "+job+`:8: [b] rw: "trimwrite": ioprobe runs read, write, randread, randwrite, rw/readwrite and randrw`+"\n", errs)

	code, _, errs = dryRunCmd(t, "run", "--fio-job", job, "--section", "a", "--target", tgt, "--bs", "8k")
	require.Equal(t, ExitBadInput, code)
	require.Contains(t, errs, "--bs cannot be used with --fio-job: the job file sets it")

	code, _, errs = dryRunCmd(t, "run", "--fio-job", job, "--section", "a", "--target", tgt, "--line", "8k,share=100,read=100,random=0")
	require.Equal(t, ExitBadInput, code)
	require.Equal(t, "ioprobe: --line cannot be used with --fio-job: the job file sets it\n", errs)

	code, out, errs := dryRunCmd(t, "run", "--fio-job", job, "--section", "a", "--target", tgt, "--dry-run")
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, out, "a: bs 4KiB, 100% read, 100% random, qd 1, workers 1, ramp 0s, run 1s, engine sync")

	code, _, errs = dryRunCmd(t, "run", "--section", "a")
	require.Equal(t, ExitBadInput, code)
	require.Contains(t, errs, "--section needs --fio-job")
	require.NoFileExists(t, tgt)
	require.NoFileExists(t, DefaultTarget)
}

// TestRunFioJobDurable: a job file's fdatasync= and sync= are the run's
// flush and open mode — shown by --dry-run, carried in the result, and
// measured (flushes counted, never more than the writes they follow);
// --fdatasync beside --fio-job is refused, the job file sets it.
func TestRunFioJobDurable(t *testing.T) {
	job, tgt := ioJobFile(t, "[global]\ntime_based\nruntime=200ms\nsize=8m\ndirect=1\n[wal]\nrw=write\nbs=4k\nfdatasync=1\nsync=dsync\n")
	code, out, errs := dryRunCmd(t, "run", "--fio-job", job, "--target", tgt, "--dry-run")
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, out, "wal: bs 4KiB, 0% read, 0% random, qd 1, workers 1, ramp 0s, run 200ms, engine sync, region 8MiB, fdatasync every 1 writes, sync dsync")
	_, err := os.Stat(tgt)
	require.ErrorIs(t, err, os.ErrNotExist, "--dry-run touches nothing")

	code, _, errs = dryRunCmd(t, "run", "--fio-job", job, "--target", tgt, "--fdatasync", "2")
	require.Equal(t, ExitBadInput, code)
	require.Contains(t, errs, "--fdatasync cannot be used with --fio-job: the job file sets it")

	code, out, errs = dryRunCmd(t, "run", "--fio-job", job, "--target", tgt, "--output", "json")
	require.Equal(t, ExitOK, code, errs)
	var r result.Result
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, 1, r.Workload.Fdatasync)
	require.Zero(t, r.Workload.Fsync)
	require.Equal(t, "dsync", r.Workload.Sync)
	require.NotNil(t, r.Summary.Sync)
	require.NotZero(t, r.Summary.Sync.Ops)
	require.LessOrEqual(t, r.Summary.Sync.Ops, r.Summary.WriteOps+1, "a flush follows a write (one may straddle the window's start)")
}

// ioJobFile is a job file with text for a test that runs I/O (skipped with
// -short), and a target path in the same temporary directory.
func ioJobFile(t *testing.T, text string) (job, tgt string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs I/O")
	}
	dir := t.TempDir()
	job = filepath.Join(dir, "j.fio")
	require.NoError(t, os.WriteFile(job, []byte(text), 0o600))
	return job, filepath.Join(dir, "t.dat")
}
