package test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/testdeps"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// outcome is what one invocation of the binary did.
type outcome struct {
	code           int
	stdout, stderr string
}

// besideOthers runs a test after the package's sequential tests, beside
// the other tests that call it (at most go test's -parallel at once;
// scripts/test.sh sets it). Only for a test whose time goes to waiting on
// the processes it starts, and which measures nothing: a test that
// compares timings or I/O counts (with fio, bpftrace, the kernel's
// diskstats) stays sequential, where no test of this package runs beside
// it. A parallel test only ever runs beside other parallel tests.
func besideOthers(t *testing.T) {
	t.Helper()
	t.Parallel()
}

// ioprobe runs the binary with args in dir and waits for it.
func ioprobe(t *testing.T, dir string, args ...string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = dir
	return runCmd(t, cmd)
}

// runCmd runs cmd to its end and returns what it did; only a command
// that could not run at all fails the test.
func runCmd(t *testing.T, cmd *exec.Cmd) outcome {
	t.Helper()
	o, err := tryCmd(cmd)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// tryCmd is runCmd for a goroutine other than the test's, where a test
// must not be failed: a command that could not run is an error.
func tryCmd(cmd *exec.Cmd) (outcome, error) {
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		return outcome{}, fmt.Errorf("running %s: %v", strings.Join(cmd.Args, " "), err)
	}
	return outcome{code: code, stdout: out.String(), stderr: errb.String()}, nil
}

// decodeStrict decodes data as exactly one JSON document of v's type, with
// no field the type does not know.
func decodeStrict(t *testing.T, data []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(v), "want exactly one %T document:\n%.2000s", v, data)
	require.False(t, dec.More(), "more than the JSON document")
}

func decodeResult(t *testing.T, s string) *result.Result {
	t.Helper()
	var r result.Result
	decodeStrict(t, []byte(s), &r)
	require.Equal(t, result.Schema, r.Schema)
	return &r
}

// procIO is one field of /proc/PID/io (read_bytes: what the kernel read
// from storage for it, O_DIRECT included; syscr: its read system calls).
func procIO(t require.TestingT, pid int, field string) uint64 {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0 // not started yet, or gone (then Eventually fails with stderr)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+": "); ok {
			n, err := strconv.ParseUint(v, 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	require.FailNowf(t, "no field in /proc/PID/io", "no %s in /proc/%d/io", field, pid)
	return 0
}

func fetch(t require.TestingT, u string) string {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	resp, err := http.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	return string(b)
}

// needStrace skips when strace is missing or may not trace here.
func needStrace(t *testing.T) {
	t.Helper()
	testdeps.Need(t, testdeps.Tool("strace"))
	if err := exec.Command("strace", "-o", "/dev/null", "true").Run(); err != nil {
		t.Skipf("strace cannot trace here: %v", err) //hygiene:skip ptrace refused by the machine (a container's seccomp)
	}
}

// childOf returns the only child of process pid (t may be an
// EventuallyWithT's collector: a tracer that has not started its child
// yet fails that tick).
func childOf(t require.TestingT, pid int) int {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children")
	require.NoError(t, err)
	f := strings.Fields(string(b))
	require.Len(t, f, 1, "children of strace: %q", b)
	child, err := strconv.Atoi(f[0])
	require.NoError(t, err)
	return child
}

// underStrace runs ioprobe under strace with syscall fault injection. It
// skips when strace is missing or may not trace here.
func underStrace(t *testing.T, dir string, inject []string, args ...string) outcome {
	t.Helper()
	needStrace(t)
	sargs := []string{"-f", "-o", "/dev/null"}
	for _, in := range inject {
		sys, _, _ := strings.Cut(in, ":")
		sargs = append(sargs, "-e", "trace="+sys, "-e", "inject="+in)
	}
	sargs = append(sargs, binary)
	sargs = append(sargs, args...)
	cmd := exec.Command("strace", sargs...)
	cmd.Dir = dir
	return runCmd(t, cmd)
}

// prepared makes a target file with a clean run, so that fault injection
// hits the measurement, not the preparation.
func prepared(t *testing.T, dir string) string {
	tgt := filepath.Join(dir, "probe.dat")
	o := ioprobe(t, dir, "run", "--target", tgt, "--size", "16MiB", "--duration", "100ms", "--ramp", "0s", "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)
	return tgt
}

// background is the binary started without waiting for it; killed at
// cleanup (by its pid) if it is still running.
type background struct {
	cmd       *exec.Cmd
	out, errb lockedBuffer
	waited    chan error
	exited    bool
}

// lockedBuffer is a bytes.Buffer that a command writes to while a test
// reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Bytes is a copy of what was written so far.
func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.b.Bytes()...)
}

// stderr is what it wrote on stderr so far.
func (b *background) stderr() string { return b.errb.String() }

func startBackground(t *testing.T, args ...string) *background {
	t.Helper()
	return startBackgroundCmd(t, exec.Command(binary, args...))
}

// startBackgroundCmd starts cmd (the binary under a tracer, say) as
// startBackground does.
func startBackgroundCmd(t *testing.T, cmd *exec.Cmd) *background {
	t.Helper()
	b := &background{cmd: cmd, waited: make(chan error, 1)}
	b.cmd.Stdout, b.cmd.Stderr = &b.out, &b.errb
	require.NoError(t, b.cmd.Start())
	go func() { b.waited <- b.cmd.Wait() }()
	t.Cleanup(func() {
		if !b.exited {
			_ = b.cmd.Process.Kill()
			<-b.waited
		}
	})
	return b
}

// done reports whether it has exited (and how), without waiting.
func (b *background) done() (bool, error) {
	select {
	case err := <-b.waited:
		b.exited = true
		return true, err
	default:
		return false, nil
	}
}

// exitCode waits for it and returns its exit status. The minute is a
// liveness guard (the callers' runs were to last an hour), not a speed
// test.
func (b *background) exitCode(t *testing.T) int {
	t.Helper()
	select {
	case err := <-b.waited:
		b.exited = true
		if err == nil {
			return 0
		}
		ee, ok := err.(*exec.ExitError)
		require.True(t, ok, "%v", err)
		return ee.ExitCode()
	case <-time.After(time.Minute):
		t.Fatal("it did not stop")
		return -1
	}
}

func decodeSuite(t *testing.T, data []byte) *result.Suite {
	t.Helper()
	var s result.Suite
	decodeStrict(t, data, &s)
	require.Equal(t, result.SuiteSchema, s.Schema)
	return &s
}

// measuring says that a run on an existing 16 MiB target (see prepared)
// is measuring: the kernel has served it 64 MiB of reads, four times the
// region. Opening and checking a target reads too, and more as ownership
// checks grew (a run ~0.8 MiB, a suite checking its 12 points ~5.4 MiB
// here): reads alone are no sign, and a bound tied to today's checks broke
// with the next change.
func measuring(t require.TestingT, pid int) bool {
	return procIO(t, pid, "read_bytes") > 64<<20
}

// scrape returns the daemon's exposition.
func scrape(t require.TestingT, base string) string {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// metric is the value of the series written exactly as in the
// exposition (name and labels in order), or -1.
func metric(exposition, series string) float64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(exposition)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return -1
	}
	return v
}

// blockStat reads /sys/block/NAME/stat: reads, read sectors, writes,
// written sectors (Documentation/block/stat.rst, fields 1, 3, 5, 7).
func blockStat(t *testing.T, dev string) (reads, readSectors, writes, writeSectors float64) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "stat"))
	require.NoError(t, err)
	f := strings.Fields(string(b))
	require.GreaterOrEqual(t, len(f), 7)
	n := func(i int) float64 {
		v, err := strconv.ParseFloat(f[i], 64)
		require.NoError(t, err)
		return v
	}
	return n(0), n(2), n(4), n(6)
}

func sha256Of(t *testing.T, p string, off int64) string {
	t.Helper()
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	h := sha256.New()
	_, err = io.Copy(h, io.NewSectionReader(f, off, 1<<62))
	require.NoError(t, err)
	return hex.EncodeToString(h.Sum(nil))
}

// withDirAndDevice fills a daemon config in: DIR is dir and BLOCKDEV the
// block device dir's filesystem is on (its name in sysfs).
func withDirAndDevice(t *testing.T, cfg, dir string) string {
	t.Helper()
	return strings.NewReplacer("DIR", dir, "BLOCKDEV", blockDevOf(t, dir)).Replace(cfg)
}

// blockDevOf is the kernel name of the block device under path.
func blockDevOf(t *testing.T, path string) string {
	t.Helper()
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(path, &st))
	link, err := os.Readlink(fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev)))
	require.NoError(t, err, "%s is on a block device", path)
	return filepath.Base(link)
}

// unprivileged returns a copy of the binary nobody may run and a
// directory nobody owns (on the same disk as the temporary directory:
// not tmpfs, or ioprobe refuses it). It skips where this process cannot
// become another user.
func unprivileged(t *testing.T) (bin, dir string) {
	t.Helper()
	testdeps.Need(t, testdeps.Root) // to run ioprobe as another user (nobody)
	root, err := os.MkdirTemp("", "ioprobe-nobody-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(root) })
	require.NoError(t, os.Chmod(root, 0o755))
	bin = filepath.Join(root, "ioprobe")
	data, err := os.ReadFile(binary)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	dir = filepath.Join(root, "data")
	require.NoError(t, os.Mkdir(dir, 0o700))
	require.NoError(t, os.Chown(dir, nobody, nobody))
	if out, err := asNobody(bin, nil, "version").CombinedOutput(); err != nil {
		t.Skipf("cannot run a program as uid %d here: %v: %s", nobody, err, out) //hygiene:skip the machine's users and mounts
	}
	return bin, dir
}

// runAs runs `ioprobe ARGS` as nobody and returns what it did.
func runAs(t *testing.T, bin string, groups []uint32, args ...string) outcome {
	t.Helper()
	return runCmd(t, asNobody(bin, groups, args...))
}

// asNobody is the command bin ARGS as nobody, with these supplementary
// groups (none: --clear-groups), in /.
func asNobody(bin string, groups []uint32, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody, Groups: groups}}
	cmd.Dir = "/"
	return cmd
}

// whileAlive waits until cond holds (what: what never happened), and
// fails the test at once when b exits first. cond runs on
// EventuallyWithT's goroutine: it fails its collect, not the test.
func whileAlive(t *testing.T, b *background, what string, cond func(c *assert.CollectT)) {
	t.Helper()
	exited := make(chan error, 1)
	ok := assert.EventuallyWithT(t, func(c *assert.CollectT) {
		if done, err := b.done(); done {
			exited <- err
			return
		}
		cond(c)
	}, time.Minute, 10*time.Millisecond, what)
	select {
	case err := <-exited:
		t.Fatalf("ioprobe exited early: %v: %s", err, b.errb.String())
	default:
	}
	if !ok {
		t.FailNow()
	}
}
