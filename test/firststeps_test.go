package test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// A new user's mistakes, through the real binary: each is exit 2 with one
// line that says what is wrong in the command line's own terms (no Go
// parser's wording, no flag the command lacks, no raw bytes), and nothing
// is created.
func TestFirstStepMessages(t *testing.T) {
	dir := t.TempDir()
	binJob := filepath.Join(dir, "bin.fio")
	junk := []byte("[job]\nbs=4k\n")
	for i := range 300 {
		junk = append(junk, byte(i*37+11))
	}
	require.NoError(t, os.WriteFile(binJob, junk, 0o644))
	foreign := filepath.Join(dir, "foreign.dat")
	require.NoError(t, os.WriteFile(foreign, make([]byte, 8<<20), 0o644))
	job := filepath.Join(dir, "w.fio")
	require.NoError(t, os.WriteFile(job, []byte("[w]\nrw=randwrite\nbs=4k\nfilename="+foreign+"\nsize=4m\nruntime=1\ntime_based\ndirect=1\n"), 0o644))

	for _, tc := range []struct {
		name string
		args []string
		want string // the whole line after "ioprobe: "
	}{
		{"unknown check with a flag", []string{"check", "foo", "--target", "X"}, `unknown check "foo" (known: etcd)`},
		{"negative size", []string{"run", "--size", "-1", "--dry-run"}, `--size -1: size "-1": must not be negative`},
		{"size 0", []string{"run", "--size", "0", "--dry-run"}, `--size 0: must be more than 0 (leave --size out to use the whole target)`},
		{"suite size 0", []string{"suite", "characterize", "--size", "0", "--dry-run"}, `--size 0: must be more than 0 (leave --size out to use the whole target)`},
		{"negative max-errors", []string{"run", "--max-errors", "-1", "--dry-run"}, `--max-errors "-1": must not be negative (see 'ioprobe run --help')`},
		{"seed not a number", []string{"run", "--seed", "abc", "--dry-run"}, `--seed "abc": want a whole number, 0 or more (see 'ioprobe run --help')`},
		{"duration without unit", []string{"run", "--duration", "5", "--dry-run"}, `--duration "5": want a duration such as 500ms, 10s, 2m or 1h30m (see 'ioprobe run --help')`},
		{"region in units", []string{"run", "--target", foreign, "--size", "16MiB", "--dry-run"}, "target " + foreign + ": region 16MiB is larger than the target's size 8MiB"},
		{"missing directory with a slash", []string{"run", "--target", filepath.Join(dir, "missing") + "/", "--duration", "1s"},
			"target " + filepath.Join(dir, "missing") + "/: directory " + filepath.Join(dir, "missing") + " does not exist (a path ending in / names a directory; ioprobe creates files, not directories)"},
		{"a run's refusal offers no --read-only", []string{"run", "--fio-job", job, "--dry-run"},
			"fio job " + job + ", job w: refusing to write to " + foreign + ": it is an existing file that ioprobe did not create, and writes would overwrite its contents (--allow-destructive overrides this); nothing was run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := ioprobe(t, dir, tc.args...)
			require.Equal(t, 2, o.code, "stdout %s\nstderr %s", o.stdout, o.stderr)
			require.Equal(t, "ioprobe: "+tc.want+"\n", o.stderr)
		})
	}
	require.NoFileExists(t, filepath.Join(dir, "missing"))
	require.NoFileExists(t, filepath.Join(dir, "ioprobe.dat"))

	// A binary job file: its bytes are escaped, the line bounded.
	o := ioprobe(t, dir, "run", "--fio-job", binJob, "--dry-run")
	require.Equal(t, 2, o.code)
	require.Equal(t, 1, strings.Count(o.stderr, "\n"), o.stderr)
	require.True(t, utf8.ValidString(o.stderr))
	require.LessOrEqual(t, utf8.RuneCountInString(o.stderr), 420)
	for _, r := range strings.TrimSuffix(o.stderr, "\n") {
		require.True(t, unicode.IsPrint(r), "%q in %q", r, o.stderr)
		require.NotEqual(t, utf8.RuneError, r)
	}
}

// --icf without --target: --dry-run lists the file's disk targets, in the
// order --target replaces them, as the refusal says it does.
func TestICFDryRunListsTargets(t *testing.T) {
	file, err := filepath.Abs("../pkg/icf/testdata/v2004.07.30-cycle-targets.icf")
	require.NoError(t, err)
	o := ioprobe(t, t.TempDir(), "run", "--icf", file)
	require.Equal(t, 2, o.code)
	require.Contains(t, o.stderr, "(--dry-run lists them)")
	o = ioprobe(t, t.TempDir(), "run", "--icf", file, "--dry-run")
	require.Equal(t, 2, o.code)
	require.Equal(t, file+": 3 disk target(s), in the order --target replaces them:\n"+
		"  --target 1  replaces  PHYSICALDRIVE:1\n  --target 2  replaces  PHYSICALDRIVE:2\n  --target 3  replaces  PHYSICALDRIVE:3\n", o.stdout)
	require.Contains(t, o.stderr, "(listed above)")
}

// serve binds every listener before it starts a job: a bad address is bad
// input (exit 2), a port another process holds is exit 1, and in neither
// case has a job begun (the canary's file is never created).
func TestServeListensBeforeJobs(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "probe.dat")
	cfg := filepath.Join(dir, "ioprobe.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("targets:\n  data: {path: "+data+", size: 64MiB}\njobs:\n  canary: {target: data, profile: canary, continuous: true}\n"), 0o644))

	o := ioprobe(t, dir, "serve", "--config", cfg, "--web.listen-address", "127.0.0.1:80000")
	require.Equal(t, 2, o.code, o.stderr)
	require.Equal(t, `ioprobe: --web.listen-address 127.0.0.1:80000: port "80000": want 0 to 65535 or a service name`+"\n", o.stderr)

	held, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer held.Close()
	o = ioprobe(t, dir, "serve", "--config", cfg, "--web.listen-address", held.Addr().String())
	require.Equal(t, 1, o.code, o.stderr)
	require.Contains(t, o.stderr, "address already in use")
	require.NotContains(t, o.stderr, "canary", "no job was started or logged as starting")
	require.NoFileExists(t, data)
}
