package test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testdeps"
	"github.com/ioprobe/ioprobe/internal/testloop"
	"github.com/ioprobe/ioprobe/internal/testwait"
	"github.com/ioprobe/ioprobe/pkg/result"
)

func TestReadEIOStopsAtFirstError(t *testing.T) {
	dir := t.TempDir()
	tgt := prepared(t, dir)
	// An hour's run: that it ends at all (with errors, within the
	// helper's two minutes) is the first error stopping it.
	o := underStrace(t, dir, []string{"pread64:error=EIO:when=40+"},
		"run", "--engine", "sync", "--target", tgt, "--qd", "4", "--duration", "1h", "--ramp", "0s", "--output", "json")
	require.Equal(t, 1, o.code, "I/O errors exit 1: %s", o.stderr)
	r := decodeResult(t, o.stdout)
	require.Equal(t, result.StatusErrors, r.Status)
	require.GreaterOrEqual(t, r.Summary.ErrorsByClass["eio"], uint64(1))
	require.LessOrEqual(t, r.Summary.Errors, uint64(4), "at most the I/Os in flight fail after the first")
	require.Contains(t, r.Message, "input/output error")
	require.Contains(t, r.Message, tgt)
	require.Contains(t, o.stderr, "input/output error")
}

func TestReadEIOCountedWhenToldToGoOn(t *testing.T) {
	dir := t.TempDir()
	tgt := prepared(t, dir)
	// 200 reads, not a window (which beside load, and under strace, may
	// not reach the 40th read): the run goes on past every error to the
	// end of its count, each read a success or an error.
	o := underStrace(t, dir, []string{"pread64:error=EIO:when=40+2"}, append([]string{
		"run", "--engine", "sync", "--target", tgt, "--qd", "2", "--max-errors", "0", "--output", "json"}, countedIOs(200)...)...)
	require.Equal(t, 1, o.code, o.stderr)
	r := decodeResult(t, o.stdout)
	require.Equal(t, result.StatusErrors, r.Status)
	require.Equal(t, result.EndedBudget, r.Summary.Ended, "the run went on to the end of its count")
	require.EqualValues(t, 200, r.Summary.ReadOps+r.Summary.Errors, "every read a success or an error")
	require.Positive(t, r.Summary.Errors)
	require.Equal(t, r.Summary.Errors, r.Summary.ErrorsByClass["eio"])
	// Every other read succeeds: both are counted, neither is lost.
	require.Positive(t, r.Summary.ReadOps)
	var ivErrs uint64
	for _, iv := range r.Intervals {
		ivErrs += iv.Errors
	}
	require.Equal(t, r.Summary.Errors, ivErrs, "interval error counts add up to the total")
}

func TestWriteEIO(t *testing.T) {
	dir := t.TempDir()
	tgt := prepared(t, dir)
	o := underStrace(t, dir, []string{"pwrite64:error=EIO:when=20+"},
		"run", "--engine", "sync", "--target", tgt, "--read-pct", "0", "--qd", "2", "--duration", "10s", "--ramp", "0s", "--output", "json")
	require.Equal(t, 1, o.code, o.stderr)
	r := decodeResult(t, o.stdout)
	require.Equal(t, result.StatusErrors, r.Status)
	require.GreaterOrEqual(t, r.Summary.ErrorsByClass["eio"], uint64(1))
	require.Contains(t, r.Message, "write of 4096 bytes")
}

func TestENOSPCWhilePreparingRemovesThePartialFile(t *testing.T) {
	for _, inject := range []string{"fallocate:error=ENOSPC", "pwrite64:error=ENOSPC:when=3"} {
		t.Run(strings.Split(inject, ":")[0], func(t *testing.T) {
			dir := t.TempDir()
			tgt := filepath.Join(dir, "new.dat")
			o := underStrace(t, dir, []string{inject}, "run", "--engine", "sync", "--target", tgt, "--size", "64MiB", "--duration", "1s", "--ramp", "0s")
			require.NotEqual(t, 0, o.code)
			require.Contains(t, o.stderr, "no space left on device")
			require.Empty(t, o.stdout)
			_, err := os.Stat(tgt)
			require.True(t, os.IsNotExist(err), "the partial file was left behind")
		})
	}
}

func TestLoopDeviceVanishesMidRun(t *testing.T) {
	testdeps.Need(t, testdeps.LoopDevices)
	dir := t.TempDir()
	backing := filepath.Join(dir, "backing.img")
	require.NoError(t, os.WriteFile(backing, bytes.Repeat([]byte{0x5a}, 64<<20), 0o600))
	out, err := exec.Command("losetup", "-f", "--show", "--direct-io=on", backing).CombinedOutput()
	if err != nil {
		testdeps.Missing(t, testdeps.LoopDevices, "losetup: %v: %s", err, out)
	}
	dev := strings.TrimSpace(string(out))
	// Detached below; by the time the test ends the name may be another
	// process's loop device: detached only if still over backing.
	t.Cleanup(func() { _ = testloop.Detach(dev, backing) })

	cmd := exec.Command(binary, "run", "--engine", "sync", "--target", dev, "--qd", "4", "--duration", "30s", "--ramp", "0s", "--max-errors", "0", "--output", "json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	// Reading (events, not sleeps): the kernel has served it reads.
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.True(c, measuring(c, pid)) }, time.Minute, 20*time.Millisecond, "the run never measured")
	// Detach (deferred by the kernel while ioprobe holds it open, so not
	// waited for) and take the storage away: every further read fails.
	require.NoError(t, testloop.Detach(dev, backing))
	require.NoError(t, os.Truncate(backing, 0))
	// More read calls than the 4 in flight when the storage went away:
	// some were made after it, and failed.
	calls := procIO(t, pid, "syscr")
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Greater(c, procIO(c, pid, "syscr"), calls+8) }, time.Minute, 20*time.Millisecond, "no read calls after the storage went away")
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(time.Minute): // liveness only
		_ = cmd.Process.Kill()
		<-done
		t.Fatal("ioprobe hung on a vanished device")
	}
	require.Equal(t, 130, cmd.ProcessState.ExitCode(), stderr.String())
	r := decodeResult(t, stdout.String())
	require.Greater(t, r.Summary.ReadOps, uint64(0), "reads before the device went away were counted")
	require.Greater(t, r.Summary.Errors, uint64(0), "reads after it went away failed")
	// ioprobe closed the device: the deferred detach has happened.
	require.Eventually(t, func() bool {
		out, _ := exec.Command("losetup", "-a").CombinedOutput()
		return !strings.Contains(string(out), backing)
	}, testwait.Patience, 100*time.Millisecond, "the loop device is still attached: ioprobe leaked its descriptor")
}
