package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/blkid/handmade"
	"github.com/ioprobe/ioprobe/internal/testdeps"
	"github.com/ioprobe/ioprobe/internal/testloop"
	"github.com/ioprobe/ioprobe/internal/testwait"
)

// Issue 20's device-side classes, end to end through the binary: the
// types libblkid learned after 2.38 on every entry point, files on a
// 4096-byte-sector filesystem, loop views into data, holders, a blank
// partition beside a mounted one, the second opinion's fixed paths, and
// refusals that no flag lifts. Each makes its data with the real tools
// where Debian has them (mkfs.ext4, sgdisk, losetup --offset and
// --sector-size, a process holding the device) or from the published
// format (internal/blkid/handmade, citing libblkid's prober), and checks
// the bytes of the whole device or file unchanged.

// headerNamed is the hand-built header called name.
func headerNamed(t *testing.T, name string) handmade.Header {
	t.Helper()
	for _, h := range handmade.Headers() {
		if h.Name == name {
			return h
		}
	}
	t.Fatalf("no hand-built header %q", name)
	return handmade.Header{}
}

// TestRecentTypesRefusedEverywhere: a bcachefs superblock (the type
// stands for those libblkid learned after 2.38: util-linux
// libblkid/src/superblocks/bcache.c), its only copy 1 MiB before the end,
// is refused through run, a fio job, an Iometer ICF, a daemon job and the
// daemon's run API, with the device's bytes unchanged; and every recent
// hand-built type is refused as a regular file too.
func TestRecentTypesRefusedEverywhere(t *testing.T) {
	besideOthers(t)
	needTools(t, "losetup")
	h := headerNamed(t, "bcachefs-end-copy-only")
	dev := randomLoop(t, h.Size)
	for _, p := range h.Build(h.Size) {
		writeAt(t, dev, p.Off, p.Data)
	}
	const want = "it holds a bcachefs filesystem (TYPE=bcachefs, signature at byte 66060312)"
	before := sha256Dev(t, dev)
	dir := t.TempDir()

	noFlagOffered(t, writeRun(t, dev), want)

	job := filepath.Join(dir, "w.fio")
	require.NoError(t, os.WriteFile(job, []byte("[w]\nfilename="+dev+"\nrw=randwrite\nbs=4k\ndirect=1\nruntime=1\ntime_based\n"), 0o600))
	o := ioprobe(t, dir, "run", "--fio-job", job, "--allow-destructive")
	require.Equal(t, 2, o.code, o.stderr)
	require.Contains(t, o.stderr, want)
	require.NotContains(t, o.stderr, "overrides this")

	icf, err := os.ReadFile("../pkg/icf/testdata/v2003.05.10-cycle-workers.icf")
	require.NoError(t, err)
	text := strings.Replace(string(icf), "\t8192,100,100,100,0,1,0,0", "\t8192,100,0,100,0,1,0,0", 1) // the spec writes
	text = strings.Replace(text, "'Test Type\n\tCYCLE_WORKERS", "'Test Type\n\tNORMAL", 1)
	writes := filepath.Join(dir, "writes.icf")
	require.NoError(t, os.WriteFile(writes, []byte(text), 0o600))
	o = ioprobe(t, dir, "run", "--icf", writes, "--target", dev, "--allow-destructive")
	require.Equal(t, 2, o.code, o.stderr)
	require.Contains(t, o.stderr, want)

	cfg := filepath.Join(dir, "ioprobe.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("targets:\n  disk: {path: "+dev+", allow_destructive: true}\njobs:\n  cw: {target: disk, profile: canary-write, continuous: true}\n"), 0o644))
	o = ioprobe(t, dir, "serve", "--config.check", cfg)
	require.Equal(t, 2, o.code, o.stderr)
	require.Contains(t, o.stderr, "job cw cannot start: refusing to write to "+dev+": "+want)

	api := filepath.Join(dir, "api.yaml")
	require.NoError(t, os.WriteFile(api, []byte("api: {runs: {max_duration: 1m}}\ntargets:\n  disk: {path: "+dev+", allow_destructive: true}\n"), 0o644))
	d := startDaemon(t, "--config", api, "--web.enable-admin-api")
	body, err := json.Marshal(map[string]any{"target": "disk", "duration": "1s", "ramp": "0s",
		"specs": []any{map[string]any{"block_sizes": []map[string]any{{"bytes": 4096, "weight": 1}}, "read_pct": 0, "random_pct": 100, "queue_depth": 1}}})
	require.NoError(t, err)
	resp, err := http.Post("http://"+d.addr+"/api/v1/runs", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	out, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	apiErr := string(out)
	if resp.StatusCode == http.StatusAccepted {
		var a struct{ ID string }
		require.NoError(t, json.Unmarshal(out, &a))
		var st struct{ State, Error string }
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			require.NoError(c, json.Unmarshal([]byte(fetch(c, "http://"+d.addr+"/api/v1/runs/"+a.ID)), &st))
			assert.Contains(c, []string{"done", "failed", "stopped"}, st.State, "the run has ended")
		}, time.Minute, 50*time.Millisecond)
		require.Equal(t, "failed", st.State)
		apiErr = st.Error
	}
	require.Contains(t, apiErr, want)
	require.Equal(t, before, sha256Dev(t, dev), "the device's bytes changed")

	// As files: each recent type in a regular file (sparse, random at
	// both ends), written with --allow-destructive.
	for _, h := range handmade.Headers() {
		if h.Since == "" {
			continue
		}
		t.Run(h.Name+" as a file", func(t *testing.T) {
			img := randomFile(t, h.Size)
			f, err := os.OpenFile(img, os.O_WRONLY, 0)
			require.NoError(t, err)
			for _, p := range h.Build(h.Size) {
				_, err := f.WriteAt(p.Data, p.Off)
				require.NoError(t, err)
			}
			require.NoError(t, f.Close())
			before := sha256Of(t, img, 0)
			o := writeRun(t, img)
			noFlagOffered(t, o, "TYPE="+h.Type)
			require.Equal(t, before, sha256Of(t, img, 0))
		})
	}
}

// TestFilesOn4KSectorFilesystem: on ext4 over a loop device with 4096-byte
// logical sectors (so files there have a 4096-byte direct-I/O alignment),
// an Intel Matrix Storage image and an Atari one, as files, are found as
// libblkid finds them in files (512-byte sectors) and refused.
func TestFilesOn4KSectorFilesystem(t *testing.T) {
	needTools(t, "losetup", "mkfs.ext4", "mount")
	img := imageFile(t, 160<<20)
	dev := attach(t, img, "--sector-size", "4096")
	runTool(t, "mkfs.ext4", "-q", "-F", dev)
	dir := t.TempDir()
	runTool(t, "mount", dev, dir)
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	for _, name := range []string{"isw", "atari"} {
		h := headerNamed(t, name)
		t.Run(name, func(t *testing.T) {
			size := int64(32<<20 + 1536) // not a multiple of 4096: 512-byte sectors and 4096-byte ones end apart
			p := filepath.Join(dir, name+".img")
			f, err := os.Create(p)
			require.NoError(t, err)
			require.NoError(t, f.Truncate(size))
			for _, q := range h.Build(size) {
				_, err := f.WriteAt(q.Data, q.Off)
				require.NoError(t, err)
			}
			require.NoError(t, f.Close())
			ref := libblkidSignatures(t, referees(t)[0], p)
			require.Contains(t, typesOf(ref), h.Type, "util-linux does not see the %s image as a file: the case is broken", name)
			before := sha256Of(t, p, 0)
			noFlagOffered(t, writeRun(t, p), "TYPE="+h.Type)
			require.Equal(t, before, sha256Of(t, p, 0))
		})
	}
}

// TestLoopViewsRefused: a loop device at an offset into an ext4 image, a
// loop device over a loop device that holds unmounted ext4, and a loop
// device over the last MiB of a GPT image are refused like what backs
// them, the backing's bytes unchanged.
func TestLoopViewsRefused(t *testing.T) {
	needTools(t, "losetup", "mkfs.ext4", "sgdisk")
	const size, mib = 64 << 20, 1 << 20
	cases := []struct {
		name  string
		setup func(t *testing.T, img string) string
		want  func(img, dev string) string
	}{
		{"losetup --offset into an ext4 image", func(t *testing.T, img string) string {
			runTool(t, "mkfs.ext4", "-q", "-F", img)
			return attach(t, img, "--offset", strconv.Itoa(mib))
		}, func(img, dev string) string {
			return "its backing file " + img + " (" + filepath.Base(dev) + " shows from byte 1048576 of it) holds an ext4 filesystem (TYPE=ext4"
		}},
		{"a loop device over a loop device holding unmounted ext4", func(t *testing.T, img string) string {
			lower := attach(t, img)
			runTool(t, "mkfs.ext4", "-q", "-F", lower)
			return attach(t, lower, "--offset", strconv.Itoa(mib))
		}, func(img, dev string) string { return "holds an ext4 filesystem (TYPE=ext4" }},
		{"a loop device over the last MiB of a GPT image", func(t *testing.T, img string) string {
			runTool(t, "sgdisk", "-o", "-n", "1:2048:+16M", img)
			return attach(t, img, "--offset", strconv.Itoa(size-mib), "--sizelimit", strconv.Itoa(mib))
		}, func(img, dev string) string {
			return fmt.Sprintf("its backing file %s (%s shows bytes %d to %d of it) holds a protective MBR (a GPT disk) (PTTYPE=PMBR, signature at byte 510), and a GPT partition table (PTTYPE=gpt, signatures at bytes 512, %d)", img, filepath.Base(dev), size-mib, size, size-512)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img := imageFile(t, size)
			dev := c.setup(t, img)
			before := sha256Of(t, img, 0)
			noFlagOffered(t, writeRun(t, dev), c.want(img, dev))
			require.Equal(t, before, sha256Of(t, img, 0), "the backing's bytes changed")
		})
	}
}

// holdWith starts a process that holds dev as script (a Python program
// given the device as sys.argv[1]) does, and returns its pid once it says
// "ready"; it is killed when the test ends.
func holdWith(t *testing.T, dev, script string) int {
	t.Helper()
	py := "/usr/bin/python3" // Debian's: a pyenv shim on PATH may not have fcntl's OFD constants
	testdeps.Need(t, testdeps.DebianPython)
	cmd := exec.Command(py, "-c", script+"\nprint('ready', flush=True)\nimport time\ntime.sleep(600)\n", dev)
	cmd.Stderr = os.Stderr
	return testloop.Hold(t, cmd)
}

// TestHoldersRefusedEndToEnd: a blank device another process holds open
// for writing (a database on a raw device), under a POSIX lock or under an
// OFD lock, is refused naming the process (pid and comm); the bytes stay.
func TestHoldersRefusedEndToEnd(t *testing.T) {
	needTools(t, "losetup")
	cases := []struct{ name, script, want string }{
		{"open(O_RDWR)", "import os, sys\nfd = os.open(sys.argv[1], os.O_RDWR)", "it is open for writing by pid %d (python3"},
		{"POSIX lock", "import os, sys, fcntl\nfd = os.open(sys.argv[1], os.O_RDONLY)\nfcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)", "it is locked by pid %d (python3"},
		{"OFD lock", "import os, sys, fcntl, struct\nfd = os.open(sys.argv[1], os.O_RDONLY)\nfcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack('hhqqi', fcntl.F_RDLCK, 0, 0, 0, 0))", "(an OFD read lock)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dev := randomLoop(t, 16<<20)
			pid := holdWith(t, dev, c.script)
			want := c.want
			if strings.Contains(want, "%d") {
				want = fmt.Sprintf(want, pid)
			}
			before := sha256Dev(t, dev)
			o := writeRun(t, dev)
			noFlagOffered(t, o, want)
			require.Contains(t, o.stderr, "pid "+strconv.Itoa(pid)+" (python3")
			require.Equal(t, before, sha256Dev(t, dev))
		})
	}
}

// TestBlankPartitionBesideAMountedOne: the second partition of a disk whose
// first partition is mounted may be written (util-linux's blkid -p
// describes its table entry, PART_ENTRY_*, with exit status 0, and finds
// nothing on it); the first partition's bytes do not change.
func TestBlankPartitionBesideAMountedOne(t *testing.T) {
	needTools(t, "losetup", "sfdisk", "partx", "mkfs.ext4", "mount")
	img := imageFile(t, 64<<20)
	runIn(t, "label: dos\n,24MiB,L\n,24MiB,L\n", "sfdisk", "-q", img)
	disk := attach(t, img, "--partscan")
	if _, err := os.Stat(disk + "p2"); err != nil {
		runTool(t, "partx", "-a", disk) // no udev here to make the nodes
	}
	require.Eventually(t, func() bool { _, err := os.Stat(disk + "p2"); return err == nil }, testwait.Patience, 10*time.Millisecond)
	p1, p2 := disk+"p1", disk+"p2"
	runTool(t, "mkfs.ext4", "-q", "-F", p1)
	dir := mountRO(t, p1)
	before := sha256Of(t, p1, 0)

	o := ioprobe(t, t.TempDir(), append([]string{"run", "--target", p2, "--allow-destructive", "--read-pct", "0", "--output", "json"}, countedIOs(64)...)...)
	require.Equal(t, 0, o.code, o.stderr)
	require.Positive(t, decodeResult(t, o.stdout).Summary.WriteOps)
	require.Equal(t, before, sha256Of(t, p1, 0), "the mounted partition's bytes changed")
	o = ioprobe(t, t.TempDir(), "run", "--target", p1, "--allow-destructive", "--read-pct", "0", "--duration", "1s", "--ramp", "0s")
	noFlagOffered(t, o, "it is mounted at "+dir+" (ext4)")
}

// TestSecondOpinionIgnoresPATH: a wipefs and a blkid first on the caller's
// PATH that fail (or would call anything blank) are not the ones asked:
// a blank device is written, a device with data refused.
func TestSecondOpinionIgnoresPATH(t *testing.T) {
	needTools(t, "losetup")
	fake := t.TempDir()
	for _, tool := range []string{"wipefs", "blkid"} {
		require.NoError(t, os.WriteFile(filepath.Join(fake, tool), []byte("#!/bin/sh\necho 'impostor' >&2\nexit 1\n"), 0o755))
	}
	dev := randomLoop(t, 16<<20)
	cmd := exec.Command(binary, "run", "--target", dev, "--allow-destructive", "--read-pct", "0", "--duration", "300ms", "--ramp", "0s")
	cmd.Env = append(os.Environ(), "PATH="+fake+":"+os.Getenv("PATH"))
	o := runCmd(t, cmd)
	require.Equal(t, 0, o.code, o.stderr)
	require.NotContains(t, o.stderr, "impostor")
}

// TestRefusalsNoFlagLifts: an active swap file and an ioprobe file a
// filesystem was made on are refused without --allow-destructive for what
// no flag lifts, the flag not offered; the bytes stay.
func TestRefusalsNoFlagLifts(t *testing.T) {
	needTools(t, "mkswap", "swapon", "swapoff", "mkfs.ext4")
	dir := t.TempDir()

	swap := filepath.Join(dir, "swapfile")
	require.NoError(t, os.WriteFile(swap, make([]byte, 16<<20), 0o600))
	runTool(t, "mkswap", swap)
	if out, err := exec.Command("swapon", swap).CombinedOutput(); err != nil {
		t.Skipf("swapon: %v: %s", err, out) //hygiene:skip swap refused by the machine (a container)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("swapoff", swap).CombinedOutput(); err != nil {
			t.Errorf("swapoff %s: %v: %s", swap, err, out)
		}
	})
	before := sha256Of(t, swap, 0)
	for _, extra := range [][]string{nil, {"--allow-destructive"}} {
		args := append([]string{"run", "--target", swap, "--read-pct", "0", "--duration", "300ms", "--ramp", "0s"}, extra...)
		noFlagOffered(t, ioprobe(t, dir, args...), "it is an active swap file ("+swap)
	}
	require.Equal(t, before, sha256Of(t, swap, 0))

	own := filepath.Join(dir, "own.dat")
	o := ioprobe(t, dir, "run", "--target", own, "--size", "32M", "--read-pct", "0", "--duration", "300ms", "--ramp", "0s")
	require.Equal(t, 0, o.code, o.stderr)
	runTool(t, "mkfs.ext4", "-q", "-F", own)
	before = sha256Of(t, own, 0)
	for _, extra := range [][]string{nil, {"--allow-destructive"}} {
		args := append([]string{"run", "--target", own, "--read-pct", "0", "--duration", "300ms", "--ramp", "0s"}, extra...)
		noFlagOffered(t, ioprobe(t, dir, args...), "it holds an ext4 filesystem (TYPE=ext4")
	}
	require.Equal(t, before, sha256Of(t, own, 0))
}
