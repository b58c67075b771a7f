package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testdeps"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// --out is a regular file: never a symlink followed, never a device, a
// FIFO or a directory; checked before anything runs (exit 2, nothing
// touched), then written to a new file renamed over the name.

// TestOutNeverOntoADevice: --out onto a symlink to a loop device and
// onto the device's own path, for run, report, compare, suite, fleet and
// check, is refused before anything runs (no host asked, no file made),
// and the device's bytes are unchanged.
func TestOutNeverOntoADevice(t *testing.T) {
	testdeps.Need(t, testdeps.LoopDevices)
	dev := randomLoop(t, 64<<20)
	before := sha256Dev(t, dev)
	dir := t.TempDir()
	link := filepath.Join(dir, "run.json")
	require.NoError(t, os.Symlink(dev, link))
	tgt := filepath.Join(dir, "t.dat")
	res := shortRead(t, dir) // a.json
	require.NotEmpty(t, res)
	for _, out := range []string{link, dev} {
		for _, args := range [][]string{
			{"run", "--target", tgt, "--size", "4MiB", "--duration", "1s", "--ramp", "0s", "--output", "json"},
			{"report", "a.json"},
			{"compare", "a.json", "a.json"},
			{"suite", "business", "--target", tgt, "--duration", "1s", "--ramp", "0s"},
			{"fleet", "run", "--hosts", "127.0.0.1:1", "--target", "data"},
			{"check", "etcd", "--target", dir},
		} {
			o := ioprobe(t, dir, append(args, "--out", out)...)
			require.Equal(t, 2, o.code, "%v: %s", args, o.stderr)
			want := "is a block device: ioprobe writes its output only to a regular file, never to a device (the device to measure is --target)"
			if out == link {
				want = "is a symbolic link (to " + dev + "): ioprobe writes its output only to a regular file and never follows a link; name the file itself"
			}
			require.Equal(t, "ioprobe: --out "+out+" "+want+"\n", o.stderr, args)
			require.Empty(t, o.stdout)
		}
	}
	require.Equal(t, before, sha256Dev(t, dev), "the device's bytes are unchanged")
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	require.Equal(t, os.ModeSymlink, fi.Mode()&os.ModeType, "the link is left as it was")
}

// TestOutReplacesARegularFile: --out onto an existing regular file
// replaces it whole, keeping its permissions; no temporary file is left;
// a FIFO, a directory and a directory others can write are refused.
func TestOutReplacesARegularFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "run.json")
	require.NoError(t, os.WriteFile(out, []byte(strings.Repeat("old result\n", 100000)), 0o600))
	tgt := filepath.Join(dir, "t.dat")
	args := []string{"run", "--target", tgt, "--size", "4MiB", "--duration", "1s", "--ramp", "0s", "--output", "json"}
	o := ioprobe(t, dir, append(args, "--out", out)...)
	require.Equal(t, 0, o.code, o.stderr)
	require.Equal(t, "ioprobe: wrote "+out+"\n", o.stderr[strings.LastIndex(o.stderr[:len(o.stderr)-1], "\n")+1:])
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	require.NotContains(t, string(data), "old result")
	var r result.Result
	decodeStrict(t, data, &r)
	fi, err := os.Stat(out)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the file it replaced kept its permissions")
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	require.ElementsMatch(t, []string{"run.json", "t.dat"}, names, "no temporary file left")

	ff := fifo(t, dir)
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	shared := filepath.Join(dir, "shared")
	require.NoError(t, os.Mkdir(shared, 0o755))
	require.NoError(t, os.Chmod(shared, 0o777))
	for out, want := range map[string]string{
		ff:                                "--out " + ff + " is a FIFO: ioprobe writes its output only to a regular file",
		sub:                               "--out " + sub + " is a directory: ioprobe writes its output only to a regular file",
		filepath.Join(shared, "run.json"): "the directory is writable by every user (mode 0777, not sticky)",
		filepath.Join(dir, "no/run.json"): "its directory " + filepath.Join(dir, "no") + " does not exist",
	} {
		o := bounded(t, dir, append(args, "--out", out)...)
		require.Equal(t, 2, o.code, o.stderr)
		require.Contains(t, o.stderr, want)
		require.Equal(t, 1, strings.Count(o.stderr, "\n"), o.stderr)
	}
	ents, err = os.ReadDir(shared)
	require.NoError(t, err)
	require.Empty(t, ents)
}
