package test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/target"
	"github.com/ioprobe/ioprobe/internal/verify"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// TestVerifyNeverBlamesStorage runs a history of runs on one file, as a
// user would over weeks: runs with and without --verify, both engines,
// random and sequential, transfers from 512 B to 1 MiB (some not a
// multiple of 4 KiB), runs killed with SIGINT and SIGKILL mid-write, the
// file grown by a larger --size and written through a smaller one, and
// daemon jobs between CLI runs. After every step every read of a --verify
// run is judged and none fails, and every sector of the file is a sound
// ioprobe sector for its place. Then one sector changed behind ioprobe's
// back is reported, exactly.
func TestVerifyNeverBlamesStorage(t *testing.T) {
	// Its own file; it waits on runs and a daemon, and judges sectors, not speed.
	besideOthers(t)
	dir := t.TempDir()
	tgt := filepath.Join(dir, "v.dat")
	run := func(args ...string) (outcome, *result.Result) {
		t.Helper()
		// 64 I/Os a worker, not a window: a window beside load can
		// complete none, and every step needs reads judged or writes done.
		base := append([]string{"run", "--target", tgt, "--output", "json", "--max-errors", "0"}, countedIOs(64)...)
		o := ioprobe(t, dir, append(base, args...)...)
		require.Equal(t, 0, o.code, "%v: %s", args, o.stderr)
		return o, decodeResult(t, o.stdout)
	}
	// verified checks a --verify run: every read judged, none failed.
	verified := func(step string, r *result.Result) {
		t.Helper()
		v := r.Summary.Verify
		require.NotNil(t, v, step)
		require.Zero(t, v.Failures, "%s: a false report: %+v", step, v.FailedSectors)
		require.Zero(t, v.ReadsUnverified, "%s: reads of an ioprobe file that could not be judged", step)
		require.Equal(t, r.Summary.ReadOps, v.ReadsVerified, step)
	}
	check := func(step string, engine string) {
		t.Helper()
		_, r := run("--verify", "--read-pct", "100", "--bs", "4k:50,64k:50", "--qd", "8", "--engine", engine)
		verified(step, r)
		require.EqualValues(t, 64, r.Summary.ReadOps, step)
		requireSound(t, tgt, step)
	}

	// The sequence, then variations.
	_, r := run("--size", "64MiB", "--verify", "--read-pct", "50")
	require.True(t, r.Targets[0].Created)
	verified("first --verify run", r)
	_, r = run("--read-pct", "0", "--bs", "4k")
	require.Positive(t, r.Summary.WriteOps)
	require.Nil(t, r.Summary.Verify)
	check("after plain 4 KiB random writes", "sync")

	for _, engine := range []string{"sync", "uring"} {
		for _, w := range [][]string{
			{"--bs", "512", "--random-pct", "100"},
			{"--bs", "1536", "--random-pct", "0"},
			{"--bs", "12k:60,1m:40", "--random-pct", "50", "--workers", "2"},
		} {
			step := fmt.Sprintf("plain %s writes with %s", strings.Join(w, " "), engine)
			_, r = run(append([]string{"--read-pct", "30", "--engine", engine, "--qd", "4"}, w...)...)
			require.Positive(t, r.Summary.WriteOps, step)
			check(step, engine)
			_, r = run(append([]string{"--verify", "--read-pct", "50", "--engine", engine, "--qd", "4"}, w...)...)
			verified(step+", then the same with --verify", r)
		}
	}

	// Killed mid-write, politely and not.
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		interrupted(t, dir, sig, "run", "--target", tgt, "--read-pct", "0", "--bs", "64k:50,4k:50", "--qd", "16", "--duration", "1m", "--ramp", "0s")
		check("after a write run stopped by "+sig.String(), "uring")
	}

	// A larger --size grows the file: the new part is in the format. A
	// smaller one writes only its part.
	_, r = run("--size", "80MiB", "--read-pct", "0")
	require.False(t, r.Targets[0].Created, "grown, not created")
	require.True(t, r.Targets[0].Extended)
	require.EqualValues(t, 80<<20, r.Targets[0].SizeBytes)
	check("after growing the file", "sync")
	_, r = run("--size", "96MiB", "--verify", "--read-pct", "50")
	require.True(t, r.Targets[0].Extended)
	verified("a --verify run that grows the file", r)
	_, r = run("--size", "16MiB", "--read-pct", "0", "--bs", "8k")
	require.False(t, r.Targets[0].Extended)
	check("after writing a smaller region", "uring")

	// Daemon jobs on the same file, between CLI runs.
	daemonJobs(t, dir, tgt)
	check("after daemon jobs", "sync")

	// Real corruption is still found, exactly: one sector in the first
	// 64 KiB (the first read of a sequential run covers it).
	bad := int64(4096 + 512)
	f, err := os.OpenFile(tgt, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte(strings.Repeat("x", 512)), bad)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	o := ioprobe(t, dir, append([]string{"run", "--target", tgt, "--verify", "--read-pct", "100", "--random-pct", "0", "--bs", "64k", "--qd", "1",
		"--output", "json", "--max-errors", "0"}, countedIOs(16)...)...)
	r = decodeResult(t, o.stdout)
	require.Equal(t, 1, o.code, "%s %+v", o.stderr, r.Summary)
	require.Len(t, r.Summary.Verify.FailedSectors, 1)
	require.Equal(t, result.VerifyFailure{Target: tgt, Offset: bad, Problem: verify.NoMagic.String()}, r.Summary.Verify.FailedSectors[0])
}

// requireSound reads every sector of the ioprobe file at path and checks
// that it is a sound ioprobe sector for its place, under the file's key.
func requireSound(t *testing.T, path, step string) {
	t.Helper()
	tg, err := target.Open(path, target.Options{})
	require.NoError(t, err)
	defer tg.Close()
	require.True(t, tg.Formatted, "%s: the file is no longer ioprobe's", step)
	const chunk = 1 << 20
	mem, err := unix.Mmap(-1, 0, chunk, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	require.NoError(t, err)
	defer unix.Munmap(mem)
	for off := int64(0); off < tg.Size; off += chunk {
		n := min(chunk, tg.Size-off)
		got, err := unix.Pread(tg.FD, mem[:n], off)
		require.NoError(t, err)
		require.EqualValues(t, n, got)
		f := verify.Check(mem[:n], off, tg.SectorKey)
		require.Equal(t, verify.OK, f.Problem, "%s: %v", step, f)
	}
}

// interrupted starts ioprobe with args, waits until it has written at
// least 8 MiB (the kernel's count of the bytes it sent to storage), and
// stops it with sig.
func interrupted(t *testing.T, dir string, sig syscall.Signal, args ...string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	require.Eventually(t, func() bool {
		return writtenBytes(cmd.Process.Pid) >= 8<<20
	}, time.Minute, 10*time.Millisecond, "the run never wrote: %s", stderr.String())
	require.NoError(t, cmd.Process.Signal(sig))
	select {
	case <-done:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("ioprobe did not stop on %v", sig)
	}
}

// writtenBytes is write_bytes from /proc/PID/io (0 when unreadable).
func writtenBytes(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "write_bytes: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// daemonJobs runs a plain write job and a --verify job of ioprobe serve
// on the file, one after the other, through the admin API.
func daemonJobs(t *testing.T, dir, tgt string) {
	t.Helper()
	cfg := filepath.Join(dir, "ioprobe.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`
targets:
  data: {path: %s}
jobs:
  writer: {target: data, block_size: 8k, read_pct: 0, random_pct: 100, queue_depth: 8, number_ios: 64, duration: 50s, ramp: 0s}
  checker: {target: data, block_size: 4k, read_pct: 50, random_pct: 100, queue_depth: 8, number_ios: 64, duration: 50s, ramp: 0s, verify: true, max_errors: 0}
  long: {target: data, block_size: 4k, read_pct: 50, random_pct: 100, queue_depth: 4, duration: 10m, ramp: 0s, verify: true, max_errors: 0}
`, tgt)), 0o644))
	d := startDaemon(t, "--config", cfg, "--web.enable-admin-api")
	base := "http://" + d.addr
	for _, job := range []string{"writer", "checker"} {
		resp, err := http.Post(base+"/api/v1/jobs/"+job+"/run", "", nil)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusAccepted, resp.StatusCode, job)
		var runs struct {
			Runs []struct {
				Status string
				Result *result.Result
			}
		}
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			runs.Runs = nil
			require.NoError(c, json.Unmarshal([]byte(fetch(c, base+"/api/v1/runs?job="+job+"&limit=1")), &runs))
			assert.Len(c, runs.Runs, 1, "the %s job has not finished: %s", job, d.log())
		}, time.Minute, 50*time.Millisecond, "the %s job never finished", job)
		run := runs.Runs[0]
		require.Equal(t, "ok", run.Status, "%s: %s", job, d.log())
		require.NotNil(t, run.Result)
		if job == "writer" {
			require.Positive(t, run.Result.Summary.WriteOps)
			continue
		}
		v := run.Result.Summary.Verify
		require.NotNil(t, v)
		require.Zero(t, v.Failures, "the daemon's --verify job reported %+v", v.FailedSectors)
		require.Equal(t, run.Result.Summary.ReadOps, v.ReadsVerified)
	}

	// While a --verify job writes, a CLI write run is refused (the job
	// would take its writes for lost ones), and a CLI --verify read run
	// judges every read of the file being written, and fails none.
	resp, err := http.Post(base+"/api/v1/jobs/long/run", "", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	// Active is not enough: the job opens (and locks) its target after it
	// is marked active. Its I/O counted means the target is open.
	doing := regexp.MustCompile(`(?m)^ioprobe_io_operations_total\{[^}]*ioprobe_job="long"[^}]*\} [1-9]`)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		m := fetch(c, base+"/metrics")
		assert.Contains(c, m, `ioprobe_run_active{ioprobe_job="long",target="data"} 1`)
		assert.Regexp(c, doing, m)
	}, time.Minute, 50*time.Millisecond)
	o := ioprobe(t, dir, "run", "--target", tgt, "--read-pct", "0", "--duration", "200ms", "--ramp", "0s")
	require.Equal(t, 2, o.code, o.stderr)
	require.Contains(t, o.stderr, "a run with --verify is writing to it")
	o = ioprobe(t, dir, "run", "--target", tgt, "--verify", "--read-pct", "100", "--duration", "300ms", "--ramp", "0s", "--output", "json", "--max-errors", "0")
	require.Equal(t, 0, o.code, o.stderr)
	r := decodeResult(t, o.stdout)
	require.Zero(t, r.Summary.Verify.Failures, "%+v", r.Summary.Verify.FailedSectors)
	require.Equal(t, r.Summary.ReadOps, r.Summary.Verify.ReadsVerified)
	require.NoError(t, d.cmd.Process.Signal(syscall.SIGTERM)) // mid-run
	<-d.exited
}
