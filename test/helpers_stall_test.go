package test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/testdeps"
	"github.com/ioprobe/ioprobe/internal/testloop"
)

// stallFS is a filesystem that stops answering on command, as a hung NFS
// server or a stuck FUSE daemon does (issue 31): testdata/stallfs.py, a
// FUSE passthrough, with a loop device over a file in it.
//
// While it hangs, every program on the machine that asks the kernel what
// backs that loop device waits (a tree without the fix of issue 31: every
// write run of every helper on this machine). So a test keeps it hung as
// briefly as it can, and its cleanup, registered before anything is
// made, takes everything down in the one order that cannot leave a loop
// device over a dead file: release the hang, detach the loop device, stop
// the passthrough by its pid, unmount. A process that waits in the kernel
// for the passthrough cannot be killed before the release, so whatever
// waits for such a process releases first (runWithin, terminate, start);
// and should the test binary itself die (a go test timeout), the
// passthrough releases, detaches and unmounts on its own.
type stallFS struct {
	mnt     string // the FUSE mount
	control string // what the passthrough does before each operation
	img     string // the file the loop device shows
	dev     string // /dev/loopN
	pid     int    // the passthrough
}

// order tells the passthrough what to do: "" answer, "hang" (all
// operations), "hang read", "300 write" (sleep 300 ms first), ...
func (s *stallFS) order(t *testing.T, what string) {
	t.Helper()
	require.NoError(t, os.WriteFile(s.control, []byte(what), 0o600))
}

// release ends every hang (from any goroutine: it fails no test).
func (s *stallFS) release() { _ = os.WriteFile(s.control, nil, 0o600) }

// start starts the binary in the background, as startBackground, and
// releases s before that cleanup kills and reaps it: a process waiting
// in the kernel for s cannot end before.
func (s *stallFS) start(t *testing.T, args ...string) *background {
	t.Helper()
	b := startBackground(t, args...)
	t.Cleanup(s.release)
	return b
}

// waits lists the operations the passthrough holds now ("getattr /img pid
// 812"), from its log.
func (s *stallFS) waits() []string {
	f, err := os.Open(s.control + ".log")
	if err != nil {
		return nil
	}
	defer f.Close()
	held := map[string]int{}
	var order []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		word, rest, _ := strings.Cut(sc.Text(), " ")
		switch word {
		case "hang":
			if held[rest] == 0 {
				order = append(order, rest)
			}
			held[rest]++
		case "release":
			held[rest]--
		}
	}
	var out []string
	for _, w := range order {
		if held[w] > 0 {
			out = append(out, w)
		}
	}
	return out
}

// holds says whether the passthrough holds an operation of process pid
// or of a child of it. The kernel tells the passthrough the thread that
// asks (a thread id), whose process is its Tgid.
func (s *stallFS) holds(pid int) bool {
	for _, w := range s.waits() {
		_, p, ok := strings.Cut(w, " pid ")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil {
			continue
		}
		tgid, ppid := procIDs(n)
		if tgid == pid || ppid == pid {
			return true
		}
	}
	return false
}

// procIDs are the process (Tgid) and parent (PPid) of thread tid, from
// /proc/TID/status (0, 0 when it is gone).
func procIDs(tid int) (tgid, ppid int) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		switch k {
		case "Tgid":
			tgid, _ = strconv.Atoi(strings.TrimSpace(v))
		case "PPid":
			ppid, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return tgid, ppid
}

// hangAndProve makes every operation hang and waits until a stat of the
// loop device's file from a process of the test's own (bash's test -f) is held:
// the filesystem does not answer. That process ends when the hang is
// released.
func (s *stallFS) hangAndProve(t *testing.T) {
	t.Helper()
	s.hangOpsAndProve(t, "hang")
}

// hangOpsAndProve is hangAndProve with an order of the caller's, which
// must hold a stat ("hang", "hang getattr").
func (s *stallFS) hangOpsAndProve(t *testing.T, order string) {
	t.Helper()
	s.order(t, order)
	probe := exec.Command("bash", "-c", `test -f "$1"`, "stat", s.img)
	require.NoError(t, probe.Start())
	t.Cleanup(func() {
		s.release() // then reap it
		_ = probe.Wait()
	})
	want := fmt.Sprintf("getattr /%s pid %d", filepath.Base(s.img), probe.Process.Pid)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Contains(c, s.waits(), want)
	}, 30*time.Second, 10*time.Millisecond, "the passthrough never held a stat (its log: %s)", s.control+".log")
}

// newStallFS mounts the passthrough in a directory of the test's and
// attaches a loop device (buffered: the loop driver's direct I/O through
// FUSE fails) over a 64 MiB file in it.
func newStallFS(t *testing.T) *stallFS {
	t.Helper()
	testdeps.Need(t, testdeps.Root, testdeps.LoopDevices, testdeps.DebianPython, testdeps.PythonModule("fusepy"),
		testdeps.Tool("losetup"), testdeps.Tool("umount"), testdeps.Tool("bash"))
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("no /dev/fuse: %v", err) //hygiene:skip a kernel without FUSE; no package gives it
	}
	base := t.TempDir()
	root := filepath.Join(base, "root")
	s := &stallFS{mnt: filepath.Join(base, "fuse"), control: filepath.Join(base, "control")}
	s.img = filepath.Join(s.mnt, "img")
	require.NoError(t, os.Mkdir(root, 0o700))
	require.NoError(t, os.Mkdir(s.mnt, 0o700))
	require.NoError(t, os.WriteFile(s.control, nil, 0o600))
	script, err := filepath.Abs(filepath.Join("testdata", "stallfs.py"))
	require.NoError(t, err)
	logPath := filepath.Join(base, "stallfs.log")
	logf, err := os.Create(logPath)
	require.NoError(t, err)
	defer logf.Close() // the passthrough has its own descriptor
	// Its own process group (a Ctrl-C for go test is not one for it) and
	// a log file rather than a pipe of this process (which, killed, would
	// kill it with SIGPIPE under its mount and the loop device).
	fuse := exec.Command("/usr/bin/python3", script, root, s.mnt, s.control)
	fuse.Stdout, fuse.Stderr = logf, logf
	fuse.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	exited := make(chan struct{})
	t.Cleanup(func() {
		s.release() // whatever hangs, first
		if s.dev != "" {
			// Once released, the loop device lets go (autoclear while a
			// process still holds it open): detached for good before the
			// passthrough is stopped under it.
			if err := testloop.DetachAndWait(s.dev, s.img); err != nil {
				t.Errorf("detach %s: %v; the passthrough (pid %d) and its mount are left as they are", s.dev, err, s.pid)
				return
			}
		}
		if s.pid != 0 {
			_ = syscall.Kill(s.pid, syscall.SIGTERM) // ours, by its pid
			// Not ended 10 s after SIGTERM: SIGKILL.
			kill := time.AfterFunc(10*time.Second, func() { _ = syscall.Kill(s.pid, syscall.SIGKILL) })
			<-exited
			kill.Stop()
		}
		if mounted(s.mnt, base) {
			if out, err := exec.Command("umount", s.mnt).CombinedOutput(); err != nil {
				t.Errorf("umount %s: %v: %s", s.mnt, err, out)
			}
		}
		if b, err := os.ReadFile(logPath); err == nil && len(b) > 0 && t.Failed() {
			t.Logf("the passthrough said: %s", b)
		}
	})
	require.NoError(t, fuse.Start())
	s.pid = fuse.Process.Pid
	go func() { _ = fuse.Wait(); close(exited) }()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		select {
		case <-exited:
			require.Fail(c, "the passthrough exited")
		default:
		}
		assert.True(c, mounted(s.mnt, base), "mounted")
	}, 30*time.Second, 20*time.Millisecond, "the passthrough never mounted (log in %s)", logPath)
	require.NoError(t, os.WriteFile(s.img, nil, 0o600))
	require.NoError(t, os.Truncate(s.img, 64<<20))
	out, err := exec.Command("losetup", "-f", "--show", s.img).CombinedOutput()
	require.NoError(t, err, "%s", out)
	s.dev = strings.TrimSpace(string(out))
	return s
}

// runWithin runs the binary in dir; if it has not ended after limit (its
// context's deadline), it releases s (a process waiting in the kernel for
// s cannot be killed until then) and kills the binary (by its pid, as a
// test's own): hung says it had to.
func runWithin(t *testing.T, s *stallFS, limit time.Duration, dir string, args ...string) (o outcome, hung bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = dir
	var detected atomic.Bool
	cmd.Cancel = func() error {
		detected.Store(true)
		s.release()
		return cmd.Process.Kill()
	}
	o = runCmd(t, cmd)
	return o, detected.Load()
}

// mounted reports whether dir is a mount point: on another device than
// parent, the directory it was made in.
func mounted(dir, parent string) bool {
	var a, b unix.Stat_t
	return unix.Stat(dir, &a) == nil && unix.Stat(parent, &b) == nil && a.Dev != b.Dev
}
