package config

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/engine/syncio"
	"github.com/ioprobe/ioprobe/internal/runner"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// runCheck is the daemon's check: runner.Check of a plan of specs on t.
func runCheck(t *Target, specs []workload.Spec) error {
	p := runner.Plan{AllowDestructive: t.AllowDestructive, Engines: engine.NewRegistry(syncio.New()), Interval: time.Second}
	for _, s := range specs {
		s.RegionBytes = t.Size
		p.Groups = append(p.Groups, runner.Group{Spec: s, Targets: []string{t.Path}})
	}
	return runner.Check(p)
}

// Every file in testdata/check is valid, and CheckRuns finds exactly these
// problems on this machine (all of them, one per line, in file order). The
// reference is the kernel: the paths are real (/dev/shm is tmpfs, /dev/null
// a character device, /etc a directory); a machine where they are not
// skips that file.
var checkConfigs = map[string]string{
	"missing-dir":      `:2: targets.data.path: jobs canary and oltp, and module quick cannot start: target /nonexistent-ioprobe-dir/probe.dat: cannot create it: directory /nonexistent-ioprobe-dir does not exist`,
	"tmpfs":            `:2: targets.ram.path: job canary cannot start: refusing to use /dev/shm/ioprobe-check-test.dat: /dev/shm is on tmpfs, which serves direct I/O from memory, so a benchmark would measure RAM, not storage`,
	"char-device":      `:3: targets.nothing.path: job read cannot start: target /dev/null: is a character device; a target is a regular file or a block device`,
	"directory":        `:2: targets.etc.path: modules quick and seq cannot start: target /etc: is a directory; a target is a regular file or a block device`,
	"parent-is-a-file": `:2: targets.data.path: jobs a and b cannot start: target /etc/passwd/probe.dat: cannot create it: /etc/passwd is not a directory`,
	"several": `:5: targets.gone.path: job missing cannot start: target /nonexistent-ioprobe-dir/probe.dat: cannot create it: directory /nonexistent-ioprobe-dir does not exist
testdata/check/several.yaml:6: targets.dev.path: job zero cannot start: target /dev/zero: is a character device; a target is a regular file or a block device`,
	"ok":       ``,
	"api-only": `:3: targets.data.path: runs of the run API cannot start: target /nonexistent-ioprobe-dir/probe.dat: cannot create it: directory /nonexistent-ioprobe-dir does not exist`,
}

func TestCheckRuns(t *testing.T) {
	needs := map[string]func() bool{
		"tmpfs":            func() bool { return fsType("/dev/shm") == unix.TMPFS_MAGIC },
		"char-device":      func() bool { return isChar("/dev/null") },
		"several":          func() bool { return isChar("/dev/zero") && fsType("/var/tmp") != unix.TMPFS_MAGIC },
		"ok":               func() bool { return fsType("/var/tmp") != unix.TMPFS_MAGIC },
		"api-only":         func() bool { return fsType("/var/tmp") != unix.TMPFS_MAGIC },
		"parent-is-a-file": func() bool { st, err := os.Stat("/etc/passwd"); return err == nil && st.Mode().IsRegular() },
	}
	eachFile(t, "testdata/check", checkConfigs, func(t *testing.T, f, name, want string) {
		if need := needs[name]; need != nil && !need() {
			t.Skipf("this machine's paths are not what %s assumes", f) //hygiene:skip the machine's mounts and device nodes
		}
		cfg, err := Load(f, Options{})
		require.NoError(t, err)
		var got []string
		for _, u := range cfg.CheckRuns(runCheck) {
			got = append(got, u.Problem.String())
		}
		if want == "" {
			require.Empty(t, got)
			return
		}
		require.Equal(t, f+want, strings.Join(got, "\n"))
	})
	_, err := os.Stat("/var/tmp/ioprobe-check-test.dat")
	require.ErrorIs(t, err, os.ErrNotExist, "checking created nothing")
}

// CheckRuns says which jobs and modules each problem stops.
func TestCheckRunsUsers(t *testing.T) {
	cfg, err := Load("testdata/check/missing-dir.yaml", Options{})
	require.NoError(t, err)
	got := cfg.CheckRuns(runCheck)
	require.Len(t, got, 1)
	require.Equal(t, "data", got[0].Target)
	require.Equal(t, []string{"canary", "oltp"}, got[0].Jobs)
	require.Equal(t, []string{"quick"}, got[0].Modules)
	require.Equal(t, 2, got[0].Line)
}

func fsType(path string) int64 {
	var st unix.Statfs_t
	if unix.Statfs(path, &st) != nil {
		return -1
	}
	return int64(st.Type)
}

func isChar(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
