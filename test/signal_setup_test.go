package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/testloop"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// TestSignalDuringBPFLoadEndsTheRun: a run signalled in its setup, while
// the device-latency programs load (a load cannot be cancelled; it took
// 1–3.5 s on a loaded machine), ends by itself with its interrupted
// result and exit 130, not by the backstop 1.5 s later: the run does not
// wait for a load it will not use. strace holds every bpf() call after
// the first (cilium/ebpf's probe as the process starts) for 5 s, so the
// load is in progress when the signal comes and after the run has ended;
// the result is written before that call returns, which it never does.
func TestSignalDuringBPFLoadEndsTheRun(t *testing.T) {
	needStrace(t)
	dev := testloop.Device(t, 16<<20)
	log := filepath.Join(t.TempDir(), "strace.log")
	b := startBackgroundCmd(t, exec.Command("strace", "-f", "--seccomp-bpf", "-o", log,
		"-e", "trace=bpf,write", "-e", "inject=bpf:delay_enter=5000000:when=2+",
		binary, "run", "--target", dev, "--read-pct", "100", "--duration", "60s", "--ramp", "0", "--output", "json"))
	pid := 0
	whileAlive(t, b, "the run set up (its ring made) and loading its BPF programs", func(c *assert.CollectT) {
		pid = 0 // strace's own short-lived child comes first
		pid = childOf(c, b.cmd.Process.Pid)
		assert.True(c, holdsRing(pid), "an io_uring of the run")
		assert.True(c, inSyscall(pid, unix.SYS_BPF), "a thread in bpf()")
	})
	require.NoError(t, syscall.Kill(pid, syscall.SIGTERM))
	require.Equal(t, 130, b.exitCode(t), b.stderr())
	require.NotContains(t, b.stderr(), "ioprobe: interrupted: exiting on", "the run ended by itself, not by the backstop")
	var r result.Result
	decodeStrict(t, b.out.Bytes(), &r)
	require.Equal(t, result.StatusInterrupted, r.Status)
	require.Zero(t, r.Summary.Ops, "no I/O after the signal: it came before the first")
	trace, err := os.ReadFile(log)
	require.NoError(t, err)
	wrote := strings.Index(string(trace), `\"schema\": \"ioprobe.result`)
	unfinished := regexp.MustCompile(`<\.\.\. bpf resumed>\)\s+= \?`).FindIndex(trace)
	require.True(t, wrote >= 0 && unfinished != nil && unfinished[0] > wrote, "the result written while the load was still held in bpf(), which never returned: %s", trace)
}

// holdsRing says whether pid has an io_uring open.
func holdsRing(pid int) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && strings.Contains(l, "io_uring") {
			return true
		}
	}
	return false
}

// inSyscall says whether a thread of pid is in system call nr.
func inSyscall(pid int, nr uintptr) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "syscall"))
		if err == nil && strings.HasPrefix(string(b), strconv.FormatUint(uint64(nr), 10)+" ") {
			return true
		}
	}
	return false
}
