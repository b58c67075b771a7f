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

// TestRunFioJob runs a job file for real: fio's buffered default runs
// buffered, as fio runs it, and every output says so; --target replaces
// the file's filename; a note says what ioprobe leaves out.
func TestRunFioJob(t *testing.T) {
	job, tgt := ioJobFile(t, "[global]\ntime_based\nruntime=200ms\nsize=8m\nfilename=/nonexistent/x\n[rr]\nrw=randrw\nrwmixread=60\nbs=8k\nwrite_lat_log=lat\n")
	code, out, errs := dryRunCmd(t, "run", "--fio-job", job, "--target", tgt, "--output", "json")
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, errs, "ioprobe: "+job+" [rr]: write_lat_log (line 10): not written")
	var r result.Result
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, result.Schema, r.Schema)
	require.Len(t, inputNotes(&r), 1)
	require.Contains(t, inputNotes(&r)[0], "write_lat_log (line 10): not written")
	require.True(t, r.Workload.Buffered, "fio's direct=0")
	require.True(t, r.Workload.RandomMap, "fio's default for a random job")
	require.False(t, r.Targets[0].Direct)
	code, out, errs = dryRunCmd(t, "run", "--fio-job", job, "--target", tgt)
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, out, "buffered (page cache, not O_DIRECT)")
	require.Contains(t, out, "NOT O_DIRECT")
	code, out, errs = dryRunCmd(t, "run", "--fio-job", job, "--target", tgt, "--output", "csv")
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, out, ",buffered,random_map,")
	require.Contains(t, out, ",true,true,0,0,")
	code, out, errs = dryRunCmd(t, "run", "--fio-job", job, "--target", tgt, "--output", "fio-json")
	require.Equal(t, ExitOK, code, errs)
	// fio-json's options are the file's as written (fio 3.33 prints no
	// direct for a job that does not set it: its default, direct=0), and
	// nothing claims O_DIRECT.
	require.NotContains(t, out, `"direct"`)
	require.Contains(t, out, `"write_lat_log": "lat"`)
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
	require.NoError(t, os.WriteFile(job, []byte("[global]\ntime_based\nruntime=1\n[a]\nrw=randread\nsize=1m\n[b]\nrw=trimwrite\n"), 0o600))
	code, _, errs := dryRunCmd(t, "run", "--fio-job", job, "--target", tgt)
	require.Equal(t, ExitBadInput, code)
	require.Equal(t, "ioprobe: "+job+`:8: [b] rw: "trimwrite": ioprobe runs read, write, randread, randwrite, rw/readwrite and randrw (fio's names, lower case)`+"\n", errs)

	code, _, errs = dryRunCmd(t, "run", "--fio-job", job, "--section", "a", "--target", tgt, "--bs", "8k")
	require.Equal(t, ExitBadInput, code)
	require.Contains(t, errs, "--bs cannot be used with --fio-job: the job file sets it")

	code, _, errs = dryRunCmd(t, "run", "--fio-job", job, "--section", "a", "--target", tgt, "--line", "8k,share=100,read=100,random=0")
	require.Equal(t, ExitBadInput, code)
	require.Equal(t, "ioprobe: --line cannot be used with --fio-job: the job file sets it\n", errs)

	code, out, errs := dryRunCmd(t, "run", "--fio-job", job, "--section", "a", "--target", tgt, "--dry-run")
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, out, "a: bs 4KiB, 100% read, 100% random, qd 1, workers 1, ramp 0s, run 1s, engine sync, region 1MiB, random map, buffered")

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
		t.Skip("runs I/O") //hygiene:skip -short leaves out the tests that run I/O
	}
	dir := t.TempDir()
	job = filepath.Join(dir, "j.fio")
	require.NoError(t, os.WriteFile(job, []byte(text), 0o600))
	return job, filepath.Join(dir, "t.dat")
}

// TestRunBuffered: run --buffered goes through the page cache (any
// transfer size, as fio's direct=0), and every output says "buffered";
// without it 2300 bytes is refused, O_DIRECT needing whole sectors.
func TestRunBuffered(t *testing.T) {
	if testing.Short() {
		t.Skip("runs I/O") //hygiene:skip -short leaves out the tests that run I/O
	}
	tgt := filepath.Join(t.TempDir(), "b.dat")
	args := []string{"run", "--target", tgt, "--size", "2300000", "--bs", "2300", "--read-pct", "50", "--random-pct", "0",
		"--qd", "1", "--duration", "200ms", "--ramp", "0s"}
	code, _, errs := dryRunCmd(t, args...)
	require.Equal(t, ExitBadInput, code)
	require.Contains(t, errs, "--bs 2300B: must be a multiple of 512 bytes (direct I/O needs whole sectors; --buffered runs any size)")
	require.NoFileExists(t, tgt)

	code, out, errs := dryRunCmd(t, append(args, "--buffered", "--output", "json")...)
	require.Equal(t, ExitOK, code, errs)
	var r result.Result
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.True(t, r.Workload.Buffered)
	require.False(t, r.Targets[0].Direct)
	require.NotZero(t, r.Summary.ReadOps+r.Summary.WriteOps)
	require.Zero(t, r.Summary.Errors)
	require.Zero(t, (r.Summary.ReadBytes+r.Summary.WriteBytes)%2300, "whole 2300-byte transfers")
	code, out, errs = dryRunCmd(t, append(args, "--buffered", "--dry-run")...)
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, out, ", buffered")
}
