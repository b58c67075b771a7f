package test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/blkid/handmade"
	"github.com/ioprobe/ioprobe/internal/testdeps"
	"github.com/ioprobe/ioprobe/internal/testloop"
)

// referees lists the util-linux builds that judge the cases.
func referees(t *testing.T) []referee {
	t.Helper()
	refereesOnce.Do(func() {
		dirs := []string{"/usr/sbin"}
		if d := os.Getenv("IOPROBE_BLKID_REFEREE"); d != "" {
			dirs = append(dirs, d)
		}
		for _, d := range dirs {
			r := referee{blkid: filepath.Join(d, "blkid"), wipefs: filepath.Join(d, "wipefs")}
			out, err := exec.Command(r.blkid, "--version").Output()
			if err != nil {
				refereeErr = fmt.Errorf("%s --version: %v", r.blkid, err)
				return
			}
			m := regexp.MustCompile(`libblkid (\d+\.\d+(?:\.\d+)?)`).FindSubmatch(out)
			if m == nil {
				refereeErr = fmt.Errorf("%s --version says no libblkid release: %q", r.blkid, out)
				return
			}
			r.version = string(m[1])
			refereeList = append(refereeList, r)
		}
	})
	require.NoError(t, refereeErr)
	return refereeList
}

// randomLoop attaches a sparse file of size bytes whose first and last
// 4 MiB are random, as a loop device with direct I/O, detached when the
// test ends (testloop: only if still over that file).
func randomLoop(t *testing.T, size int64) string {
	t.Helper()
	return testloop.File(t, randomFile(t, size))
}

// randomFile is a sparse file of size bytes whose first and last 4 MiB
// are random.
func randomFile(t *testing.T, size int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "image")
	f, err := os.Create(p)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(size))
	fill := min(int64(4<<20), size)
	for _, off := range []int64{0, size - fill} {
		_, err := f.WriteAt(randomBytes(t, int(fill)), off)
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())
	return p
}

// run runs a command a case needs and fails the test when it fails.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	require.NoError(t, err, "%s %s: %s", name, strings.Join(args, " "), out)
	return string(out)
}

// runIn is run with stdin.
func runIn(t *testing.T, stdin, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s: %s", name, strings.Join(args, " "), out)
	return string(out)
}

// writeAt writes p at off of the device (hand-built headers).
func writeAt(t *testing.T, dev string, off int64, p []byte) {
	t.Helper()
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(p, off)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
}

// writeImage copies an image file onto the device from its start.
func writeImage(t *testing.T, dev, image string) {
	t.Helper()
	p, err := os.ReadFile(image)
	require.NoError(t, err)
	writeAt(t, dev, 0, p)
}

// libblkidSignatures asks the referee's wipefs (every signature, with its
// offset) and blkid -p (the low-level probe's verdict) what is on dev.
func libblkidSignatures(t *testing.T, rf referee, dev string) []refSig {
	t.Helper()
	byKey := map[string]*refSig{}
	var order []string
	add := func(typ string, off int64, by string) {
		k := sigKey(typ, off)
		if r, ok := byKey[k]; ok {
			if !strings.Contains(r.by, by) {
				r.by += "+" + by
			}
			return
		}
		byKey[k] = &refSig{typ: typ, off: off, by: by}
		order = append(order, k)
	}

	out, err := exec.Command(rf.wipefs, "--no-act", "--json", dev).Output()
	require.NoError(t, err, "wipefs --no-act --json %s", dev)
	if len(strings.TrimSpace(string(out))) > 0 {
		var w struct {
			Signatures []struct {
				Offset string `json:"offset"`
				Type   string `json:"type"`
			} `json:"signatures"`
		}
		require.NoError(t, json.Unmarshal(out, &w), "wipefs output: %s", out)
		for _, s := range w.Signatures {
			off, err := strconv.ParseInt(s.Offset, 0, 64)
			require.NoError(t, err, "wipefs offset %q", s.Offset)
			add(s.Type, off, "wipefs")
		}
	}

	cmd := exec.Command(rf.blkid, "-p", "-o", "export", dev)
	out, err = cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok && (ee.ExitCode() == 2 || ee.ExitCode() == 8) {
		err = nil // 2: nothing found; 8: ambivalent (wipefs lists them)
	}
	require.NoError(t, err, "blkid -p %s", dev)
	kv := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			kv[k] = v
		}
	}
	for _, p := range [][2]string{{"TYPE", "SBMAGIC_OFFSET"}, {"PTTYPE", "PTMAGIC_OFFSET"}} {
		typ, offs := kv[p[0]], kv[p[1]]
		if typ == "" || offs == "" {
			continue
		}
		off, err := strconv.ParseInt(offs, 0, 64)
		require.NoError(t, err, "blkid %s=%q", p[1], offs)
		add(typ, off, "blkid -p")
	}
	refs := make([]refSig, 0, len(order))
	for _, k := range order {
		refs = append(refs, *byKey[k])
	}
	return refs
}

func typesOf(refs []refSig) []string {
	seen := map[string]bool{}
	var ts []string
	for _, r := range refs {
		if !seen[r.typ] {
			seen[r.typ] = true
			ts = append(ts, r.typ)
		}
	}
	return ts
}

// sha256Dev fingerprints the whole device's (or regular file's) bytes: the
// SHA-256 of every 64 KiB block that is not all zeros, with its offset.
// When the device is a loop device, its backing file is read, and only its
// data extents (the holes are zeros): the cost is the data, not the
// device's size. The extents themselves are not hashed, since the
// filesystem under the file merges and splits them at will; any byte
// written anywhere changes a block.
func sha256Dev(t *testing.T, dev string) string {
	t.Helper()
	if fi, err := os.Stat(dev); err == nil && fi.Mode()&os.ModeDevice != 0 {
		run(t, "blockdev", "--flushbufs", dev)
	}
	path := dev
	if b, err := os.ReadFile("/sys/block/" + filepath.Base(dev) + "/loop/backing_file"); err == nil {
		path = strings.TrimSpace(string(b))
	}
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	require.NoError(t, err)
	const block = 64 << 10
	h := sha256.New()
	buf := make([]byte, block)
	zero := make([]byte, block)
	next := int64(0) // the first block not hashed yet
	hashFrom := func(from, to int64) {
		for b := max(next, from/block*block); b < to; b += block {
			n, err := f.ReadAt(buf, b)
			if err != io.EOF {
				require.NoError(t, err)
			}
			if !bytes.Equal(buf[:n], zero[:n]) {
				fmt.Fprintf(h, "@%d:", b)
				h.Write(buf[:n])
			}
			next = b + block
		}
	}
	st, err := f.Stat()
	require.NoError(t, err)
	if !st.Mode().IsRegular() {
		hashFrom(0, size)
		return hex.EncodeToString(h.Sum(nil))
	}
	fd := int(f.Fd())
	for off := int64(0); off < size; {
		data, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if err == unix.ENXIO {
			break
		}
		require.NoError(t, err)
		hole, err := unix.Seek(fd, data, unix.SEEK_HOLE)
		require.NoError(t, err)
		hashFrom(data, hole)
		off = hole
	}
	fmt.Fprintf(h, "size %d", size)
	return hex.EncodeToString(h.Sum(nil))
}

func handmadeCase(h handmade.Header) sigCase {
	return sigCase{name: h.Name, want: h.Type, size: h.Size, source: h.Source, since: h.Since, until: h.Until, make: func(t *testing.T, dev string) {
		for _, p := range h.Build(h.Size) {
			writeAt(t, dev, p.Off, p.Data)
		}
	}}
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	f, err := os.Open("/dev/urandom")
	require.NoError(t, err)
	defer f.Close()
	p := make([]byte, n)
	_, err = f.Read(p)
	require.NoError(t, err)
	return p
}

func runTool(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	require.NoError(t, err, "%s %s: %s", name, strings.Join(args, " "), out)
	return strings.TrimSpace(string(out))
}

// needTools needs root (loop devices, mount) and the programs names:
// a skip run by hand, a failure under make test (testdeps).
func needTools(t *testing.T, names ...string) {
	t.Helper()
	testdeps.Need(t, testdeps.Root)
	for _, n := range names {
		testdeps.Need(t, testdeps.Tool(n))
	}
}

// attach attaches file (or device) as a loop device with extra losetup
// arguments and detaches it when the test ends, if it is still over
// file then (testloop.Detach: by then the name may be another's).
func attach(t *testing.T, file string, extra ...string) string {
	t.Helper()
	dev := runTool(t, "losetup", append(append([]string{"-f", "--show", "--direct-io=on"}, extra...), file)...)
	t.Cleanup(func() {
		if err := testloop.Detach(dev, file); err != nil {
			t.Errorf("detach %s: %v", dev, err)
		}
	})
	if p, err := exec.LookPath("udevadm"); err == nil {
		_ = exec.Command(p, "settle").Run()
	}
	return dev
}

// mountRO mounts dev read-only and unmounts it when the test ends.
func mountRO(t *testing.T, dev string) string {
	t.Helper()
	dir := t.TempDir()
	runTool(t, "mount", "-o", "ro", dev, dir)
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

func imageFile(t *testing.T, size int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "image.img")
	require.NoError(t, os.WriteFile(p, nil, 0o600))
	require.NoError(t, os.Truncate(p, size))
	return p
}

func sigKey(typ string, off int64) string { return typ + "@" + strconv.FormatInt(off, 10) }

// settle waits for udev to finish with the device: a device closed after
// writing is probed (blkid reads it), which the next tool's counters
// would otherwise see.
func settle() {
	if p, err := exec.LookPath("udevadm"); err == nil {
		_ = exec.Command(p, "settle", "--timeout=10").Run()
	}
}

// sideBySide attaches a loop device over a file in the temp directory
// (direct I/O), skipping without root or fio.
func sideBySide(t *testing.T, size int64) (dev, dir string) {
	t.Helper()
	testdeps.Need(t, testdeps.Tool("fio"))
	dir = t.TempDir()
	return testloop.DeviceAt(t, filepath.Join(dir, "backing"), size), dir
}

// writeJob writes a job file with DEV replaced by the device.
func writeJob(t *testing.T, dir, name, job, dev string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(strings.ReplaceAll(job, "DEV", dev)), 0o600))
	return p
}

// schedulerOf reads the scheduler in use on a loop device: the bracketed
// name of /sys/block/DEV/queue/scheduler.
func schedulerOf(t require.TestingT, dev string) string {
	b, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "queue", "scheduler"))
	require.NoError(t, err)
	for _, f := range strings.Fields(string(b)) {
		if strings.HasPrefix(f, "[") {
			return strings.Trim(f, "[]")
		}
	}
	return strings.TrimSpace(string(b))
}

// setScheduler switches a loop device's scheduler (the test's own device).
func setScheduler(t *testing.T, dev, name string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join("/sys/block", filepath.Base(dev), "queue", "scheduler"), []byte(name), 0))
	require.Equal(t, name, schedulerOf(t, dev))
}

// lvm runs an LVM command that neither reads nor writes LVM's caches on
// the host, so the test leaves nothing behind.
func lvm(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command(args[0], append([]string{"--config", "devices { hints = \"none\" } backup { backup = 0 archive = 0 }"}, args[1:]...)...)
	cmd.Env = append(os.Environ(), "LVM_SUPPRESS_FD_WARNINGS=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s: %s", strings.Join(args, " "), out)
}

// noFlagOffered checks a refusal no flag lifts: one line, exit status 2,
// naming want, saying the flag would not help and not offering it.
func noFlagOffered(t *testing.T, o outcome, want string) {
	t.Helper()
	require.Equal(t, 2, o.code, "stdout %s stderr %s", o.stdout, o.stderr)
	require.Equal(t, 1, strings.Count(o.stderr, "\n"), "one line: %q", o.stderr)
	require.Contains(t, o.stderr, want)
	require.NotContains(t, o.stderr, "overrides this")
	require.Contains(t, o.stderr, "(--allow-destructive does not lift this refusal)")
}

// writeRun is a write run on target with --allow-destructive: refused,
// or 64 writes (not a window, which beside load may complete none).
func writeRun(t *testing.T, target string, extra ...string) outcome {
	t.Helper()
	args := append(append([]string{"run", "--target", target, "--allow-destructive", "--read-pct", "0"}, countedIOs(64)...), extra...)
	return ioprobe(t, t.TempDir(), args...)
}
