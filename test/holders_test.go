package test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testdeps"
	"github.com/ioprobe/ioprobe/internal/testloop"
)

// The holders /proc/PID/fd does not show (issue 32, item 3), files in use
// (item 4): each made by testdata/holders/holder.c, a small C program
// built here with gcc, holding a loop device or a file; the write with
// --allow-destructive is refused naming the pid and how it holds it, and
// the bytes stay.

// holderProgram builds testdata/holders/holder.c into the test's
// temporary directory (mode 0755, in a directory anyone may enter, so
// that another user may run it too).
func holderProgram(t *testing.T) string {
	t.Helper()
	cc := testdeps.LookPath(t, "gcc")
	dir, err := os.MkdirTemp("", "ioprobe-holder-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	prog := filepath.Join(dir, "holder")
	out, err := exec.Command(cc, "-Wall", "-Werror", "-O2", "-pthread", "-o", prog, "testdata/holders/holder.c").CombinedOutput()
	require.NoError(t, err, "gcc: %s", out)
	return prog
}

// hold starts `holder MODE PATH` and returns its pid once it holds PATH;
// it is killed when the test ends.
func hold(t *testing.T, prog, mode, path string) int {
	t.Helper()
	cmd := exec.Command(prog, mode, path)
	cmd.Stderr = os.Stderr
	return testloop.Hold(t, cmd)
}

// fdShows says whether /proc/PID/fd has a descriptor on path.
func fdShows(t *testing.T, pid int, path string) bool {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, f := range fds {
		if l, err := os.Readlink(filepath.Join(dir, f.Name())); err == nil && l == path {
			return true
		}
	}
	return false
}

// holdWays are the holder.c modes /proc/PID/fd does not show, and how
// ioprobe says each (%s: who, %d: the pid).
var holdWays = []struct{ mode, want string }{
	{"mmap", "%s is mapped shared and writable by pid %d (holder"},
	{"thread", "%s is open for writing by thread %%d of pid %d (holder"},
	{"uring", "%s is registered in an io_uring of pid %d (holder"},
}

// wantFor is a holdWays message for who and pid (a thread's id is any).
func wantFor(format, who string, pid int) string {
	if !strings.Contains(format, "%s") {
		return format
	}
	s := fmt.Sprintf(format, who, pid)
	return s[:strings.Index(s+"%d", "%d")]
}

// TestHoldersProcFdDoesNotShow: a loop device mapped shared and writable
// by a process that closed its descriptor, open in a thread's own table
// after unshare(CLONE_FILES), or registered in an io_uring and closed, is
// refused naming the process and how it holds the device; the bytes stay.
func TestHoldersProcFdDoesNotShow(t *testing.T) {
	needTools(t, "losetup")
	prog := holderProgram(t)
	for _, w := range holdWays {
		t.Run(w.mode, func(t *testing.T) {
			dev := holderLoop(t, 16<<20)
			pid := hold(t, prog, w.mode, dev)
			require.False(t, fdShows(t, pid, dev), "/proc/%d/fd shows %s: the case is not the one meant", pid, dev)
			before := sha256Dev(t, dev)
			o := writeRun(t, dev)
			noFlagOffered(t, o, "refusing to write to "+dev+": ")
			require.Contains(t, o.stderr, wantFor(w.want, "it", pid))
			require.Contains(t, o.stderr, "/holder "+w.mode+" "+dev, "the command line")
			require.Equal(t, before, sha256Dev(t, dev), "the device's bytes changed")
		})
	}
}

// TestFilesInUseRefused: a file ioprobe did not create, held for writing
// by a live process (open O_RDWR, mapped shared writable, in a thread's
// own table, registered in an io_uring) or locked (POSIX, OFD), is
// refused with --allow-destructive, the bytes unchanged; a reader is no
// reason. ioprobe's own file held by a program other than ioprobe is
// refused too.
func TestFilesInUseRefused(t *testing.T) {
	prog := holderProgram(t)
	ways := append([]struct{ mode, want string }{
		{"rdwr", "%s is open for writing by pid %d (holder"},
		{"posix", "%s is locked by pid %d (holder"},
		{"ofd", "(an OFD read lock)"},
	}, holdWays...)
	// Each case holds its own file and waits on a holder and a refusal;
	// none measures: they run beside each other (after this function
	// returns; the test ends after them).
	for _, w := range ways {
		t.Run(w.mode, func(t *testing.T) {
			t.Parallel()
			img := randomFile(t, 16<<20) // a VM's raw image, a database's file
			pid := hold(t, prog, w.mode, img)
			before := sha256Of(t, img, 0)
			o := writeRun(t, img)
			noFlagOffered(t, o, "refusing to write to "+img+": ")
			require.Contains(t, o.stderr, wantFor(w.want, "it", pid))
			require.Equal(t, before, sha256Of(t, img, 0), "the file's bytes changed")
		})
	}
	t.Run("a reader", func(t *testing.T) {
		t.Parallel()
		img := randomFile(t, 16<<20)
		cmd := exec.Command("/bin/sh", "-c", `exec 3<"$1"; echo ready; exec sleep 600`, "sh", img)
		testloop.Hold(t, cmd)
		o := writeRun(t, img, "--output", "json")
		require.Equal(t, 0, o.code, o.stderr)
		require.Positive(t, decodeResult(t, o.stdout).Summary.WriteOps)
	})
	t.Run("ioprobe's own file", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		own := filepath.Join(dir, "own.dat")
		o := ioprobe(t, dir, "run", "--target", own, "--size", "16MiB", "--duration", "100ms", "--ramp", "0s")
		require.Equal(t, 0, o.code, o.stderr)
		pid := hold(t, prog, "mmap", own)
		before := sha256Of(t, own, 0)
		o = ioprobe(t, dir, "run", "--target", own, "--read-pct", "0", "--duration", "300ms", "--ramp", "0s")
		noFlagOffered(t, o, fmt.Sprintf("it is mapped shared and writable by pid %d (holder", pid))
		require.Equal(t, before, sha256Of(t, own, 0))
	})
}

// TestRunsShareTheirFile: an ioprobe run that holds its file for writing
// (open O_RDWR under the writers' shared flock, registered in its uring
// engine's rings), prepared and waiting for --start-at, is no holder that
// refuses a second run on the file: the second writes, as it did before
// the holder rules applied to files. A waiting --verify writer still
// refuses it, for the reason it always did.
func TestRunsShareTheirFile(t *testing.T) {
	dir := t.TempDir()
	own := filepath.Join(dir, "own.dat")
	o := ioprobe(t, dir, "run", "--target", own, "--size", "16MiB", "--duration", "100ms", "--ramp", "0s")
	require.Equal(t, 0, o.code, o.stderr)
	for _, verify := range []bool{false, true} {
		args := []string{"run", "--target", own, "--read-pct", "50", "--duration", "1s", "--ramp", "0s", "--start-at", "+1h"}
		if verify {
			args = append(args, "--verify")
		}
		b := startBackground(t, args...)
		whileAlive(t, b, "the first run is prepared", func(c *assert.CollectT) {
			assert.Contains(c, b.stderr(), "ioprobe: prepared;")
		})
		require.True(t, fdShows(t, b.cmd.Process.Pid, own), "the first run holds the file")
		o := ioprobe(t, dir, append([]string{"run", "--target", own, "--read-pct", "0", "--output", "json"}, countedIOs(64)...)...)
		if verify {
			require.Equal(t, 2, o.code, o.stderr)
			require.Contains(t, o.stderr, "a run with --verify is writing to it")
			require.NotContains(t, o.stderr, "open for writing by")
			require.NotContains(t, o.stderr, "io_uring")
		} else {
			require.Equal(t, 0, o.code, "a second writer beside a prepared one: %s", o.stderr)
			require.Positive(t, decodeResult(t, o.stdout).Summary.WriteOps)
		}
		require.NoError(t, b.cmd.Process.Signal(syscall.SIGTERM))
		require.Equal(t, 130, b.exitCode(t), "interrupted while waiting: %s", b.stderr())
	}
}

// asUnit is how ioprobe runs under the shipped systemd unit with these
// drop-ins (configs/systemd): the command prefix that mounts /proc as the
// unit's ProtectProc= has it (hidepid=invisible for "invisible") in a
// mount namespace of its own, and the ambient capabilities, for setpriv.
func asUnit(t *testing.T, dropIns ...string) (prefix []string, caps string) {
	t.Helper()
	files := []string{"../configs/systemd/ioprobe.service"}
	for _, d := range dropIns {
		files = append(files, "../configs/systemd/ioprobe.service.d/"+d)
	}
	u := unitSettings(t, files...)
	switch u.protectProc {
	case "", "default":
	case "invisible", "noaccess", "ptraceable":
		prefix = []string{"unshare", "-m", "--propagation", "private", "sh", "-c", `mount -t proc -o hidepid=` + u.protectProc + ` proc /proc && exec "$@"`, "sh"}
	default:
		t.Fatalf("ProtectProc=%s: the test does not know it", u.protectProc)
	}
	return prefix, u.setprivCaps()
}

// asUser is `setpriv --reuid=nobody --regid=nobody` with groups (none:
// --clear-groups) and, when caps is set, those capabilities inherited and
// ambient, running bin ARGS; prefix (unshare, a shell) goes first.
func asUser(groups []uint32, caps string, prefix []string, bin string, args ...string) *exec.Cmd {
	sp := []string{"setpriv", fmt.Sprintf("--reuid=%d", nobody), fmt.Sprintf("--regid=%d", nobody)}
	if len(groups) == 0 {
		sp = append(sp, "--clear-groups")
	} else {
		var gs []string
		for _, g := range groups {
			gs = append(gs, fmt.Sprint(g))
		}
		sp = append(sp, "--groups="+strings.Join(gs, ","))
	}
	if caps != "" {
		sp = append(sp, "--inh-caps="+caps, "--ambient-caps="+caps)
	}
	all := append(append(append(append([]string{}, prefix...), sp...), bin), args...)
	cmd := exec.Command(all[0], all[1:]...)
	cmd.Dir = "/"
	return cmd
}

// TestHoldersNeedAViewOfEveryProcess: an ioprobe that cannot see every
// process refuses to write a device (hidden-processes), naming why and
// what gives the view, with or without a holder it cannot see, and the
// bytes stay: as a user in the device's group (other users' descriptors
// denied), as the shipped systemd unit runs it (ProtectProc=invisible, no
// capabilities), and in a PID namespace of its own (unshare -p
// --mount-proc). As the unit with its drop-in write-devices.conf runs it
// (the capabilities that give the view, /proc as the host has it), the
// same user writes the blank device and is refused for the holder; root in
// the host's namespace is refused for the holder, as before.
func TestHoldersNeedAViewOfEveryProcess(t *testing.T) {
	needTools(t, "losetup", "setpriv", "unshare", "mount")
	bin, _ := unprivileged(t)
	prog := holderProgram(t)
	dev := holderLoop(t, 16<<20)
	require.NoError(t, os.Chmod(dev, 0o660))
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(dev, &st))
	group := []uint32{st.Gid}
	write := []string{"run", "--target", dev, "--allow-destructive", "--read-pct", "0", "--duration", "300ms", "--ramp", "0s", "--output", "json"}
	unit, unitCaps := asUnit(t)
	require.NotEmpty(t, unit, "the shipped unit hides other users' processes")
	require.Empty(t, unitCaps, "the shipped unit grants no capability")
	viewed, viewCaps := asUnit(t, "write-devices.conf")
	pidns := []string{"unshare", "-p", "-f", "--mount-proc"}
	before := sha256Dev(t, dev)
	blind := func(t *testing.T, cmd *exec.Cmd, why string) {
		t.Helper()
		o := runCmd(t, cmd)
		noFlagOffered(t, o, "refusing to write to "+dev+": ioprobe cannot see every process, so another program may be using it unseen: "+why)
		require.Contains(t, o.stderr, "run ioprobe as root, or with CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH, in the host's PID namespace")
		require.Empty(t, o.stdout)
		require.Equal(t, before, sha256Dev(t, dev), "the device's bytes changed")
	}
	cases := []struct {
		name   string
		prefix []string
		user   bool // as nobody in the device's group (else root)
		why    string
	}{
		{"a user in the device's group", nil, true, "it may not read what "},
		{"as the shipped unit runs it (ProtectProc=invisible)", unit, true, "/proc is mounted hidepid=invisible (systemd's ProtectProc=invisible does that)"},
		{"a PID namespace of its own", pidns, false, "it runs in a PID namespace of its own (pid:["},
	}
	for _, holder := range []bool{false, true} {
		for _, c := range cases {
			name := c.name
			if holder {
				name += ", a holder it cannot see"
			}
			t.Run(name, func(t *testing.T) {
				if holder {
					hold(t, prog, "rdwr", dev)
				}
				var cmd *exec.Cmd
				if c.user {
					cmd = asUser(group, "", c.prefix, bin, write...)
				} else {
					cmd = exec.Command(c.prefix[0], append(append(c.prefix[1:], bin), write...)...)
				}
				blind(t, cmd, c.why)
			})
		}
	}
	t.Run("as the unit with write-devices.conf runs it", func(t *testing.T) {
		o := runCmd(t, asUser(group, viewCaps, viewed, bin, write...))
		require.Equal(t, 0, o.code, o.stderr)
		require.Positive(t, decodeResult(t, o.stdout).Summary.WriteOps, "a blank device, seen whole")
		pid := hold(t, prog, "mmap", dev)
		before := sha256Dev(t, dev)
		o = runCmd(t, asUser(group, viewCaps, viewed, bin, write...))
		noFlagOffered(t, o, fmt.Sprintf("it is mapped shared and writable by pid %d (holder", pid))
		require.Equal(t, before, sha256Dev(t, dev))
	})
	t.Run("root in the host's namespace", func(t *testing.T) {
		pid := hold(t, prog, "rdwr", dev)
		before := sha256Dev(t, dev)
		o := ioprobe(t, t.TempDir(), write...)
		noFlagOffered(t, o, fmt.Sprintf("it is open for writing by pid %d (holder", pid))
		require.NotContains(t, o.stderr, "cannot see every process")
		require.Equal(t, before, sha256Dev(t, dev))
	})
}

// TestServeJobsMeetTheHolders: the daemon's jobs with allow_destructive
// go through the same checks (issue 32, item 8): a job on a loop device
// registered in another process's io_uring, and one on a file that
// another process maps shared and writable, fail their runs with the
// refusal, counted as failed, the bytes unchanged; once the holder is
// gone, the device's job runs.
func TestServeJobsMeetTheHolders(t *testing.T) {
	needTools(t, "losetup")
	prog := holderProgram(t)
	dev := holderLoop(t, 16<<20)
	img := randomFile(t, 16<<20)
	devHolder := hold(t, prog, "uring", dev)
	imgHolder := hold(t, prog, "mmap", img)
	devBefore, imgBefore := sha256Dev(t, dev), sha256Of(t, img, 0)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ioprobe.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`
global: {snapshot_interval: 200ms}
targets:
  disk: {path: `+dev+`, allow_destructive: true}
  image: {path: `+img+`, allow_destructive: true}
jobs:
  disk-writer: {target: disk, read_pct: 0, duration: 300ms, ramp: 0s, every: 2s}
  image-writer: {target: image, read_pct: 0, duration: 300ms, ramp: 0s, every: 2s}
`), 0o644))
	d := startDaemon(t, "--config", cfg)
	base := "http://" + d.addr
	lastRun := func(c require.TestingT, job string) (status, errText string) {
		var runs struct {
			Runs []struct{ Status, Error string }
		}
		require.NoError(c, json.Unmarshal([]byte(fetch(c, base+"/api/v1/runs?job="+job+"&limit=1")), &runs))
		if len(runs.Runs) == 0 {
			return "", ""
		}
		return runs.Runs[0].Status, runs.Runs[0].Error
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		m := scrape(c, base)
		for _, job := range []string{"disk-writer", "image-writer"} {
			assert.GreaterOrEqual(c, metric(m, `ioprobe_job_runs_total{ioprobe_job="`+job+`",status="failed"}`), 1.0, "%s has not failed yet:\n%s", job, d.log())
		}
	}, time.Minute, 100*time.Millisecond)
	status, why := lastRun(t, "disk-writer")
	require.Equal(t, "failed", status)
	require.Contains(t, why, fmt.Sprintf("refusing to write to %s: it is registered in an io_uring of pid %d (holder", dev, devHolder))
	status, why = lastRun(t, "image-writer")
	require.Equal(t, "failed", status)
	require.Contains(t, why, fmt.Sprintf("refusing to write to %s: it is mapped shared and writable by pid %d (holder", img, imgHolder))
	require.Equal(t, devBefore, sha256Dev(t, dev), "the device's bytes changed")
	require.Equal(t, imgBefore, sha256Of(t, img, 0), "the file's bytes changed")

	// The holder gone, the job's next attempt runs and writes.
	require.NoError(t, syscall.Kill(-devHolder, syscall.SIGKILL))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.GreaterOrEqual(c, metric(scrape(c, base), `ioprobe_job_runs_total{ioprobe_job="disk-writer",status="ok"}`), 1.0, "no run since the holder went:\n%s", d.log())
	}, time.Minute, 100*time.Millisecond)
	require.NotEqual(t, devBefore, sha256Dev(t, dev), "the job wrote the device once nobody held it")
	status, _ = lastRun(t, "image-writer")
	require.Equal(t, "failed", status, "the file is still held")
	require.Equal(t, imgBefore, sha256Of(t, img, 0))
}

// holderLoop is randomLoop on a loop device that has no partitions left
// over from another test's table (a partition scan can outlive the
// detach of the device it was made on, and losetup -f hands that device
// out again): such a device stays attached, and skipped, until the test
// ends.
func holderLoop(t *testing.T, size int64) string {
	t.Helper()
	for i := 0; i < 16; i++ {
		dev := randomLoop(t, size)
		name := filepath.Base(dev)
		if parts, _ := filepath.Glob(filepath.Join("/sys/block", name, name+"p*")); len(parts) == 0 {
			return dev
		}
		t.Logf("%s has partitions left from an earlier test; trying another", dev)
	}
	t.Fatal("16 loop devices in a row had partitions left over")
	return ""
}

// TestHolderLookNeverAsksAHungFilesystem: processes hold a file on a FUSE
// filesystem whose daemon is stopped (SIGSTOP: it answers nothing), open
// for writing and mapped shared; once the kernel's cached attributes ran
// out, a stat of their descriptors would wait for that daemon for as
// long as it is stopped (the look of round 3 did). The look never asks
// that filesystem anything: a device write and a foreign file's write
// elsewhere run, each within a minute (a liveness bound, not a speed).
func TestHolderLookNeverAsksAHungFilesystem(t *testing.T) {
	testdeps.Need(t, testdeps.Root, testdeps.LoopDevices, testdeps.DebianPython, testdeps.PythonModule("fusepy"),
		testdeps.Tool("losetup"), testdeps.Tool("umount"))
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("no /dev/fuse: %v", err) //hygiene:skip a kernel without FUSE; no package gives it
	}
	prog := holderProgram(t)
	base := t.TempDir()
	root, fuseMnt := filepath.Join(base, "root"), filepath.Join(base, "fuse")
	require.NoError(t, os.Mkdir(root, 0o700))
	require.NoError(t, os.Mkdir(fuseMnt, 0o700))
	script, err := filepath.Abs(filepath.Join("testdata", "slowflush.py"))
	require.NoError(t, err)
	fuse := exec.Command("/usr/bin/python3", script, root, fuseMnt, filepath.Join(base, "delay"))
	fuse.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, fuse.Start())
	exited := make(chan struct{})
	go func() { _ = fuse.Wait(); close(exited) }()
	// Torn down last (cleanups run last first): the holders are gone by
	// then, the daemon goes on and is stopped by its pid, then the mount.
	t.Cleanup(func() {
		_ = fuse.Process.Signal(syscall.SIGCONT)
		_ = fuse.Process.Kill()
		<-exited
		if out, err := exec.Command("umount", fuseMnt).CombinedOutput(); err != nil && mounted(fuseMnt, base) {
			t.Errorf("umount %s: %v: %s", fuseMnt, err, out)
		}
	})
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		select {
		case <-exited:
			require.Fail(c, "the FUSE passthrough exited")
		default:
		}
		assert.True(c, mounted(fuseMnt, base), "mounted")
	}, 30*time.Second, 20*time.Millisecond, "the FUSE passthrough never mounted")
	onFuse := filepath.Join(fuseMnt, "held.img")
	require.NoError(t, os.WriteFile(onFuse, make([]byte, 1<<20), 0o600))
	hold(t, prog, "rdwr", onFuse)
	hold(t, prog, "mmap", onFuse)
	// First among the cleanups: the daemon answers again before the
	// holders are killed, so that their last close is answered.
	t.Cleanup(func() { _ = fuse.Process.Signal(syscall.SIGCONT) })

	require.NoError(t, fuse.Process.Signal(syscall.SIGSTOP))
	time.Sleep(2 * time.Second) //hygiene:sleep FUSE's attribute cache (1 s) must run out, so that a stat would ask the stopped daemon

	dev := holderLoop(t, 16<<20)
	img := randomFile(t, 16<<20)
	for _, tgt := range []string{dev, img} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		// 64 writes (capped under the minute that tells a hang), not a
		// window, which beside load may complete none.
		cmd := exec.CommandContext(ctx, binary, append([]string{"run", "--target", tgt, "--allow-destructive", "--read-pct", "0", "--output", "json"},
			countedIOsWithin(64, "40s")...)...)
		o, err := tryCmd(cmd)
		late := ctx.Err()
		cancel()
		require.NoError(t, late, "the write to %s did not finish: its checks waited on the stopped FUSE daemon", tgt)
		require.NoError(t, err)
		require.Equal(t, 0, o.code, o.stderr)
		require.Positive(t, decodeResult(t, o.stdout).Summary.WriteOps, tgt)
	}
}
