package test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testdeps"
)

// TestMakeInstall: make install DESTDIR=… PREFIX=/usr lays out the binary
// in usr/bin and the service's starting points in usr/share/ioprobe (the
// systemd unit naming the installed binary, the example config), and
// nothing else; the installed binary runs and checks the installed
// config; make uninstall removes those files and leaves what it did not
// install. The staging root has a space in its name (the recipes quote).
// BIN is the binary TestMain built: nothing is built in the checkout.
func TestMakeInstall(t *testing.T) {
	testdeps.Need(t, testdeps.Tool("make"))
	dest := filepath.Join(t.TempDir(), "stage root")
	mk := func(target string) {
		t.Helper()
		cmd := exec.Command("make", "--no-print-directory", "-C", "..", target, "DESTDIR="+dest, "PREFIX=/usr", "BIN="+binary)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "make %s:\n%s", target, out)
	}
	mk("install")

	files := map[string]fs.FileMode{}
	require.NoError(t, filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dest, p)
		files[rel] = fi.Mode()
		return err
	}))
	require.Equal(t, map[string]fs.FileMode{
		"usr/bin/ioprobe":                   0o755,
		"usr/share/ioprobe/ioprobe.yaml":    0o644,
		"usr/share/ioprobe/ioprobe.service": 0o644,
	}, files)

	bin := filepath.Join(dest, "usr", "bin", "ioprobe")
	out, err := exec.Command(bin, "version").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.True(t, strings.HasPrefix(string(out), "ioprobe "), "%s", out)

	cfg, err := os.ReadFile(filepath.Join(dest, "usr", "share", "ioprobe", "ioprobe.yaml"))
	require.NoError(t, err)
	shipped, err := os.ReadFile(filepath.Join("..", "configs", "ioprobe.yaml"))
	require.NoError(t, err)
	require.Equal(t, string(shipped), string(cfg))
	// /var/lib/ioprobe is the unit's state directory, not the test's.
	dir := t.TempDir()
	checked := filepath.Join(dir, "ioprobe.yaml")
	require.NoError(t, os.WriteFile(checked, []byte(strings.ReplaceAll(string(cfg), "/var/lib/ioprobe/", dir+"/")), 0o644))
	o := runCmd(t, exec.Command(bin, "serve", "--config.check", checked))
	require.Equal(t, 0, o.code, o.stderr)

	unit, err := os.ReadFile(filepath.Join(dest, "usr", "share", "ioprobe", "ioprobe.service"))
	require.NoError(t, err)
	shipped, err = os.ReadFile(filepath.Join("..", "configs", "systemd", "ioprobe.service"))
	require.NoError(t, err)
	require.Contains(t, string(shipped), "\nExecStart=/usr/local/bin/ioprobe serve ")
	require.Equal(t, strings.Replace(string(shipped), "\nExecStart=/usr/local/bin/ioprobe ", "\nExecStart=/usr/bin/ioprobe ", 1), string(unit),
		"the unit as shipped, starting the installed binary")

	// Someone else's files beside ioprobe's stay, and so does their directory.
	other := filepath.Join(dest, "usr", "share", "ioprobe", "local.yaml")
	require.NoError(t, os.WriteFile(other, nil, 0o644))
	mk("uninstall")
	require.NoFileExists(t, bin)
	require.FileExists(t, other)
	require.NoError(t, os.Remove(other))
	mk("uninstall") // again: nothing left to remove is no error; the empty directory goes
	left := []string{}
	require.NoError(t, filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dest, p)
		left = append(left, rel)
		return err
	}))
	require.Equal(t, []string{".", "usr", "usr/bin", "usr/share"}, left, "the directories a system has anyway stay")
}
