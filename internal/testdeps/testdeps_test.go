package testdeps

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The programs and modules read from scripts/test-deps.sh are the ones it
// installs, with their Debian packages.
func TestParseReadsTestDeps(t *testing.T) {
	s, err := installs()
	require.NoError(t, err)
	for d, pkg := range map[Dep]string{
		Tool("fio"):         "fio",
		Tool("losetup"):     "util-linux",
		Tool("mkfs.ext4"):   "e2fsprogs",
		Tool("strace"):      "strace",
		PythonModule("six"): "python3-six",
		Tool("make"):        "make",
	} {
		require.Equal(t, pkg, s.pkg[d], "%s", d)
	}
	require.NotContains(t, s.pkg, Tool("need"), "only `have NAME || need+=(...)` lines")

	p := parse("have foo || need+=(foo-utils)   # why\n  have bar||need+=(bar)\nhave baz\npython3 -c 'import yaml' 2>/dev/null || need+=(python3-yaml)\n")
	require.Equal(t, map[Dep]string{Tool("foo"): "foo-utils", Tool("bar"): "bar", PythonModule("yaml"): "python3-yaml"}, p.pkg)
}

// helperEnv names what TestHelperNeed needs when it runs as a child.
const helperEnv = "IOPROBE_TESTDEPS_HELPER"

// TestHelperNeed is not a test: run as a child by TestNeedSkipsByHandFailsUnderMakeTest,
// it needs what helperEnv names.
func TestHelperNeed(t *testing.T) {
	switch os.Getenv(helperEnv) {
	case "":
		return
	case "fio":
		Need(t, Tool("fio"))
	case "unknown":
		Need(t, Tool("no-such-program-anywhere"))
	case "prometheus3":
		Missing(t, Prometheus3, "it is not built")
	case "without":
		Without(t, PromtoolLTS, "it is not built")
	}
	t.Log("went on")
}

// A missing dependency skips the test run by hand and fails it under
// make test; a program scripts/test-deps.sh does not install fails it
// either way; Without goes on, failing only under make test.
func TestNeedSkipsByHandFailsUnderMakeTest(t *testing.T) {
	for _, c := range []struct {
		need      string
		installed bool
		want      string // the line go test -v prints for the child's test
		wantLog   string
		goesOn    bool
	}{
		{"fio", false, "--- SKIP", "needs program fio: exec: \"fio\": executable file not found in $PATH (scripts/test-deps.sh installs it from Debian's fio)", false},
		{"fio", true, "--- FAIL", "needs program fio, which make test provides, but exec: \"fio\"", false},
		{"unknown", false, "--- FAIL", "scripts/test-deps.sh does not install program no-such-program-anywhere: add it there", false},
		{"unknown", true, "--- FAIL", "scripts/test-deps.sh does not install", false},
		{"prometheus3", false, "--- SKIP", "needs Prometheus 3 (.tools/prometheus3): it is not built", false},
		{"prometheus3", true, "--- FAIL", "needs Prometheus 3 (.tools/prometheus3), which make test provides, but it is not built", false},
		{"without", false, "--- PASS", "goes on without promtool 3.5 LTS", true},
		{"without", true, "--- FAIL", "goes on without promtool 3.5 LTS (.tools/prometheus-lts), which make test provides", true},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperNeed$", "-test.v", "-test.count=1")
		installed := "0"
		if c.installed {
			installed = "1"
		}
		// No PATH: no program is found.
		cmd.Env = []string{helperEnv + "=" + c.need, EnvVar + "=" + installed}
		out, err := cmd.CombinedOutput()
		require.Contains(t, string(out), c.want+": TestHelperNeed", "%+v:\n%s", c, out)
		require.Contains(t, string(out), c.wantLog, "%+v:\n%s", c, out)
		if c.want == "--- FAIL" {
			require.Error(t, err, "%+v", c)
		} else {
			require.NoError(t, err, "%+v:\n%s", c, out)
		}
		require.Equal(t, c.goesOn, strings.Contains(string(out), "went on"), "%+v:\n%s", c, out)
	}
}
