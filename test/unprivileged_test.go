package test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testloop"
	"github.com/ioprobe/ioprobe/internal/testwait"
)

// ioprobe needs no privilege for a file target: O_DIRECT, fallocate, the
// user.ioprobe xattr, /proc and /sys are a user's. These tests run the
// real binary as nobody (uid and gid 65534, no supplementary groups: what
// setpriv --reuid=65534 --regid=65534 --clear-groups does), the way the
// systemd unit runs it as a user of its own.

const nobody = 65534

func TestUnprivilegedRunOnFile(t *testing.T) {
	bin, dir := unprivileged(t)
	tgt := filepath.Join(dir, "probe.dat")
	// Counts of I/Os, not windows: the runs that are not refused must
	// have read or written (a window beside load may complete nothing).
	o := runAs(t, bin, nil, append([]string{"run", "--target", tgt, "--size", "16MiB", "--output", "json"}, countedIOs(64)...)...)
	require.Equal(t, 0, o.code, o.stderr)
	r := decodeResult(t, o.stdout)
	require.True(t, r.Targets[0].Created)
	require.Positive(t, r.Summary.ReadOps)
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(tgt, &st))
	require.EqualValues(t, nobody, st.Uid, "the file belongs to the user that made it")

	// Its own file: writes need no --allow-destructive.
	o = runAs(t, bin, nil, append([]string{"run", "--target", tgt, "--read-pct", "0", "--output", "json"}, countedIOs(64)...)...)
	require.Equal(t, 0, o.code, o.stderr)
	require.Positive(t, decodeResult(t, o.stdout).Summary.WriteOps)

	// A file it may not read: a clear refusal, exit status 2.
	secret := filepath.Join(filepath.Dir(dir), "root-only.dat")
	require.NoError(t, os.WriteFile(secret, make([]byte, 1<<20), 0o600))
	o = runAs(t, bin, nil, "run", "--target", secret, "--duration", "300ms", "--ramp", "0s")
	require.Equal(t, 2, o.code, o.stderr)
	require.Equal(t, "ioprobe: target "+secret+": cannot open: permission denied\n", o.stderr)
	require.Empty(t, o.stdout)
}

// A block device is opened like any file: its group (disk on most
// distributions, mode 0660) is what the service needs to read it; to
// write it, a view of every process too.
func TestUnprivilegedBlockDevice(t *testing.T) {
	bin, _ := unprivileged(t)
	dev := testloop.Device(t, 32<<20)
	require.NoError(t, os.Chmod(dev, 0o660))
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(dev, &st))
	require.NotEqual(t, uint32(nobody), st.Gid)

	o := runAs(t, bin, nil, "run", "--target", dev, "--duration", "300ms", "--ramp", "0s")
	require.Equal(t, 2, o.code, o.stderr)
	require.Equal(t, "ioprobe: target "+dev+": cannot open: permission denied\n", o.stderr)

	// In the device's group (SupplementaryGroups=disk in the unit).
	o = runAs(t, bin, []uint32{st.Gid}, append([]string{"run", "--target", dev, "--output", "json"}, countedIOs(64)...)...)
	require.Equal(t, 0, o.code, o.stderr)
	r := decodeResult(t, o.stdout)
	require.Equal(t, "block", r.Targets[0].Kind)
	require.Positive(t, r.Summary.ReadOps)
	// Writing needs a view of every process, which the device's group
	// does not give (hidden-processes; TestHoldersNeedAViewOfEveryProcess
	// has what does).
	o = runAs(t, bin, []uint32{st.Gid}, "run", "--target", dev, "--read-pct", "0", "--allow-destructive", "--duration", "300ms", "--ramp", "0s", "--output", "json")
	require.Equal(t, 2, o.code, o.stderr)
	require.Contains(t, o.stderr, "ioprobe cannot see every process")
	require.Empty(t, o.stdout)
}

// The daemon as nobody: the canary on its own file runs; a job on a
// target it may not open fails, is counted as failed and says why, and
// the daemon goes on and stops cleanly.
func TestUnprivilegedServe(t *testing.T) {
	bin, dir := unprivileged(t)
	secret := filepath.Join(filepath.Dir(dir), "root-only.dat")
	require.NoError(t, os.WriteFile(secret, make([]byte, 1<<20), 0o600))
	cfg := filepath.Join(filepath.Dir(dir), "ioprobe.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`
global: {snapshot_interval: 200ms}
targets:
  data: {path: `+dir+`/probe.dat, size: 16MiB}
  secret: {path: `+secret+`}
jobs:
  canary: {target: data, profile: canary, rate_iops: 100, continuous: true, duration: 2s}
  forbidden: {target: secret, profile: random-read, duration: 200ms, ramp: 0s, every: 2s}
`), 0o644))
	d := startDaemonAs(t, bin, &syscall.Credential{Uid: nobody, Gid: nobody}, "--config", cfg)
	base := "http://" + d.addr
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		m := scrape(c, base)
		assert.Positive(c, metric(m, `ioprobe_io_operations_total{ioprobe_job="canary",op="read",target="data"}`), "the canary runs:\n%s", d.log())
		assert.GreaterOrEqual(c, metric(m, `ioprobe_job_runs_total{ioprobe_job="forbidden",status="failed"}`), 1.0, "the forbidden job fails:\n%s", d.log())
	}, testwait.Patience, 100*time.Millisecond, "the canary runs and the forbidden job fails")

	var runs struct {
		Runs []struct{ Status, Error string }
	}
	require.NoError(t, json.Unmarshal([]byte(fetch(t, base+"/api/v1/runs?job=forbidden&limit=1")), &runs))
	require.Len(t, runs.Runs, 1)
	require.Equal(t, "failed", runs.Runs[0].Status)
	require.Equal(t, "target "+secret+": cannot open: permission denied", runs.Runs[0].Error)
	require.Regexp(t, `level=ERROR .*msg="job cannot start[^"]*" job=forbidden .*permission denied`, d.log())

	require.NoError(t, d.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-d.exited:
	case <-time.After(testwait.Patience):
		t.Fatal("ioprobe serve did not stop on SIGTERM")
	}
	require.NoError(t, d.cmd.Wait(), "exit status 0 on SIGTERM")
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(filepath.Join(dir, "probe.dat"), &st))
	require.EqualValues(t, nobody, st.Uid)
}
