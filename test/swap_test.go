package test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/testdeps"
)

// Files by descriptor, never by name (issue 20, item 9): an unprivileged
// user (nobody, through setpriv) who may rename files in the target's
// directory swaps ioprobe's file for a symlink to a root-owned 0600 file
// while ioprobe fills a 512 MiB target, or grows an ioprobe file to it.
// Whatever the run's read share, the victim's bytes, size and xattrs stay
// as they were, and the run either refuses the directory or fails naming
// the swap.

// victimFile is a root-owned 0600 file with an xattr, in a directory only
// root may enter.
type victimFile struct {
	path  string
	data  []byte
	attrs string
}

func newVictimFile(t *testing.T, root string) victimFile {
	t.Helper()
	dir := filepath.Join(root, "private")
	require.NoError(t, os.Mkdir(dir, 0o700))
	v := victimFile{path: filepath.Join(dir, "shadow"), data: bytes.Repeat([]byte("root:$6$secret:19000:0:99999:7:::\n"), 3000)}
	require.NoError(t, os.WriteFile(v.path, v.data, 0o600))
	require.NoError(t, unix.Setxattr(v.path, "user.victim", []byte("keep me"), 0))
	v.attrs = listXattrs(t, v.path)
	return v
}

func listXattrs(t *testing.T, path string) string {
	t.Helper()
	buf := make([]byte, 4096)
	n, err := unix.Llistxattr(path, buf)
	require.NoError(t, err)
	names := strings.Split(strings.TrimRight(string(buf[:n]), "\x00"), "\x00")
	var out []string
	for _, name := range names {
		v := make([]byte, 4096)
		m, err := unix.Lgetxattr(path, name, v)
		require.NoError(t, err)
		out = append(out, name+"="+string(v[:m]))
	}
	return strings.Join(out, ",")
}

func (v victimFile) requireIntact(t *testing.T) {
	t.Helper()
	got, err := os.ReadFile(v.path)
	require.NoError(t, err)
	require.Len(t, got, len(v.data), "the victim's size changed")
	require.True(t, bytes.Equal(v.data, got), "the victim's bytes changed")
	require.Equal(t, v.attrs, listXattrs(t, v.path), "the victim's xattrs changed")
	st, err := os.Stat(v.path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
}

// swapper runs, as nobody, a loop that swaps the regular file at path
// for a symlink to the victim as soon as it is a regular file larger than
// minSize (0: as soon as it appears), and again whenever it is one (the
// loop never sleeps: it polls). It stops at cleanup, by its pid.
func swapper(t *testing.T, path string, minSize int64, v victimFile) {
	t.Helper()
	script := fmt.Sprintf(`i=0
while :; do
  if [ -f %[1]q ] && [ ! -L %[1]q ] && [ "$(stat -c %%s %[1]q 2>/dev/null || echo 0)" -gt %[2]d ]; then
    i=$((i+1))
    mv -f %[1]q %[1]q.moved$i 2>/dev/null && ln -s %[3]q %[1]q && echo swapped
  fi
done`, path, minSize, v.path)
	cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c", script)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Logf("swapper: %q", out.String())
	})
}

// swapDirs makes the test's directories: root (0755) holding the victim
// and the directories the cases use.
func swapRoot(t *testing.T) string {
	t.Helper()
	// Root: ioprobe as root, the swapper as nobody.
	testdeps.Need(t, testdeps.Root, testdeps.Tool("setpriv"))
	root, err := os.MkdirTemp("", "ioprobe-swap-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(root) })
	require.NoError(t, os.Chmod(root, 0o755))
	if out, err := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "true").CombinedOutput(); err != nil {
		t.Skipf("cannot run a program as nobody here: %v: %s", err, out) //hygiene:skip the machine's users and mounts
	}
	return root
}

// ioprobeAs runs the binary as root with supplementary groups.
func ioprobeAs(t *testing.T, groups []uint32, args ...string) outcome {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 0, Gid: 0, Groups: groups}}
	return runCmd(t, cmd)
}

func mkdirMode(t *testing.T, path string, mode uint32, gid int) {
	t.Helper()
	require.NoError(t, os.Mkdir(path, 0o700))
	require.NoError(t, os.Chown(path, 0, gid))
	require.NoError(t, unix.Chmod(path, mode)) // os.Chmod drops the sticky bit given as 01000
}

var readShares = []string{"100", "0", "50"}

// In a directory everyone may write (0777, no sticky bit) ioprobe refuses
// to create, grow or write a file: the swapper never finds one to swap.
func TestSwapInWorldWritableDirectoryRefused(t *testing.T) {
	root := swapRoot(t)
	v := newVictimFile(t, root)
	dir := filepath.Join(root, "shared")
	mkdirMode(t, dir, 0o777, 0)
	grown := filepath.Join(dir, "grown.dat")
	mkdirMode(t, filepath.Join(root, "own"), 0o755, 0)
	made := filepath.Join(root, "own", "grown.dat")
	o := ioprobe(t, root, "run", "--target", made, "--size", "64MiB", "--duration", "100ms", "--ramp", "0s")
	require.Equal(t, 0, o.code, o.stderr)
	require.NoError(t, os.Rename(made, grown)) // an ioprobe file, in the shared directory now
	target := filepath.Join(dir, "bench.dat")
	swapper(t, target, 0, v)
	swapper(t, grown, 64<<20, v)
	for _, read := range readShares {
		for _, tgt := range []string{target, grown} {
			o := ioprobe(t, root, "run", "--target", tgt, "--size", "512MiB", "--read-pct", read, "--duration", "200ms", "--ramp", "0s")
			require.Equal(t, 2, o.code, "read %s%% %s: %s", read, tgt, o.stderr)
			require.Equal(t, "ioprobe: refusing to write to "+tgt+": its directory "+dir+" is writable by every user (mode 0777, not sticky), who could swap the file ioprobe writes for a link to another; use a directory only you can write (or one with the sticky bit, chmod +t) (--allow-destructive does not lift this refusal)\n", o.stderr)
			require.Empty(t, o.stdout)
		}
	}
	requireNoEntry(t, target)
	st, err := os.Lstat(grown)
	require.NoError(t, err)
	require.True(t, st.Mode().IsRegular(), "never grown, never swapped")
	require.EqualValues(t, 64<<20, st.Size())
	v.requireIntact(t)
}

// In a directory nobody's group may write and ioprobe is in that group
// (a team's directory, a Kubernetes fsGroup volume) ioprobe creates and
// grows files, and the swapper does swap them: ioprobe writes only its
// own file, through its descriptor, and fails naming the swap.
func TestSwapWhileFillingFailsNamingIt(t *testing.T) {
	root := swapRoot(t)
	v := newVictimFile(t, root)
	groups := []uint32{65534}
	for _, read := range readShares {
		t.Run("new file, read "+read+"%", func(t *testing.T) {
			dir := filepath.Join(root, "team-new-"+read)
			mkdirMode(t, dir, 0o775, 65534)
			tgt := filepath.Join(dir, "bench.dat")
			swapper(t, tgt, 0, v)
			o := ioprobeAs(t, groups, "run", "--target", tgt, "--size", "512MiB", "--read-pct", read, "--duration", "200ms", "--ramp", "0s")
			require.Equal(t, 2, o.code, o.stderr)
			require.Regexp(t, `^ioprobe: refusing to write to `+tgt+`: `+tgt+` was renamed or replaced while ioprobe worked on it \((it is now a symbolic link \(inode \d+\)|nothing is there now)\); ioprobe wrote only to its own \(inode \d+\) file, never to what took its name \(--allow-destructive does not lift this refusal\)\n$`, o.stderr)
			v.requireIntact(t)
			requireOnlyEmptied(t, dir)
		})
		t.Run("grown file, read "+read+"%", func(t *testing.T) {
			dir := filepath.Join(root, "team-grow-"+read)
			mkdirMode(t, dir, 0o775, 65534)
			tgt := filepath.Join(dir, "bench.dat")
			o := ioprobeAs(t, groups, "run", "--target", tgt, "--size", "64MiB", "--duration", "100ms", "--ramp", "0s")
			require.Equal(t, 0, o.code, o.stderr)
			swapper(t, tgt, 64<<20, v)
			o = ioprobeAs(t, groups, "run", "--target", tgt, "--size", "512MiB", "--read-pct", read, "--duration", "200ms", "--ramp", "0s")
			require.Equal(t, 2, o.code, o.stderr)
			require.Contains(t, o.stderr, "ioprobe: refusing to write to "+tgt+": "+tgt+" was renamed or replaced while ioprobe worked on it")
			v.requireIntact(t)
		})
	}
}

// requireOnlyEmptied checks that every file the swapper moved away (each
// one ioprobe created) was emptied by ioprobe, and nothing else is there
// but the swapper's symlink.
func requireOnlyEmptied(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	moved := 0
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		st, err := os.Lstat(p)
		require.NoError(t, err)
		switch {
		case st.Mode()&os.ModeSymlink != 0:
		case strings.Contains(e.Name(), ".moved"):
			moved++
			require.Zero(t, st.Size(), "%s: ioprobe empties its own file once its name is taken", p)
		default:
			t.Errorf("unexpected %s", p)
		}
	}
	require.Positive(t, moved, "the swapper swapped nothing")
}

// With the sticky bit (/tmp's 1777) nobody else may rename root's file:
// the swapper fails, and the run goes on and succeeds.
func TestSwapInStickyDirectoryFails(t *testing.T) {
	root := swapRoot(t)
	v := newVictimFile(t, root)
	dir := filepath.Join(root, "tmp")
	mkdirMode(t, dir, 0o1777, 0)
	tgt := filepath.Join(dir, "bench.dat")
	swapper(t, tgt, 0, v)
	o := ioprobe(t, root, append([]string{"run", "--target", tgt, "--size", "512MiB", "--read-pct", "0", "--output", "json"}, countedIOs(64)...)...)
	require.Equal(t, 0, o.code, o.stderr)
	r := decodeResult(t, o.stdout)
	require.True(t, r.Targets[0].Created)
	require.Positive(t, r.Summary.WriteOps)
	st, err := os.Lstat(tgt)
	require.NoError(t, err)
	require.True(t, st.Mode().IsRegular(), "not swapped")
	require.EqualValues(t, 512<<20, st.Size())
	v.requireIntact(t)
}

func requireNoEntry(t *testing.T, path string) {
	t.Helper()
	_, err := os.Lstat(path)
	require.ErrorIs(t, err, os.ErrNotExist, "%s must not exist", path)
}
