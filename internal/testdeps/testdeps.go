package testdeps

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// EnvVar, set to 1, says that make test installed the test dependencies:
// what a test then finds missing is a failure, not a skip. scripts/test.sh
// sets it; set it by hand to check a machine the way CI does.
const EnvVar = "IOPROBE_TEST_DEPS_INSTALLED"

// Installed reports whether EnvVar says the dependencies were installed.
func Installed() bool { return os.Getenv(EnvVar) == "1" }

// Dep is one thing a test needs that make test provides.
type Dep string

// What make test provides besides the programs of scripts/test-deps.sh
// (Tool) and the Python modules it installs (PythonModule).
const (
	// Root: CI runs make test as root.
	Root Dep = "root"
	// LoopDevices: root, losetup and the kernel's /dev/loop-control.
	LoopDevices Dep = "loop devices"
	// DebianPython: /usr/bin/python3, the interpreter Debian's python3-*
	// packages install into (python3 on PATH may be another one).
	DebianPython Dep = "Debian's python3 (/usr/bin/python3)"
	// Prometheus3 is .tools/prometheus3, built by scripts/prometheus3.sh;
	// the tests that run it check it themselves and call Missing.
	Prometheus3 Dep = "Prometheus 3 (.tools/prometheus3)"
	// PromtoolLTS is .tools/prometheus-lts, promtool of Prometheus 3.5 LTS,
	// built by the same script.
	PromtoolLTS Dep = "promtool 3.5 LTS (.tools/prometheus-lts)"
	// GrafanaSchema is @grafana/schema and typescript in
	// test/grafana-schema/node_modules (npm ci, by scripts/test-deps.sh).
	GrafanaSchema Dep = "@grafana/schema (test/grafana-schema/node_modules)"
)

const (
	toolPrefix   = "program "
	modulePrefix = "Python module "
)

// Tool is a program scripts/test-deps.sh installs (a `have NAME` line
// there), looked up on PATH. A name that script does not install is a
// mistake in the test: Need fails it, run by hand or not.
func Tool(name string) Dep { return Dep(toolPrefix + name) }

// PythonModule is a module scripts/test-deps.sh installs a Debian package
// for (a `python3 -c 'import NAME'` line there), imported by Debian's
// python3.
func PythonModule(name string) Dep { return Dep(modulePrefix + name) }

// Need checks each dependency and, for the first one missing, skips the
// test (run by hand) or fails it (under make test).
func Need(t testing.TB, deps ...Dep) {
	t.Helper()
	for _, d := range deps {
		known(t, d)
		if err := check(d); err != nil {
			Missing(t, d, "%v", err)
		}
	}
}

// LookPath is Need(t, Tool(name)) that returns the program's path.
func LookPath(t testing.TB, name string) string {
	t.Helper()
	Need(t, Tool(name))
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatal(err) // Need found it a moment ago
	}
	return p
}

// Missing is for a dependency the test found missing or unusable itself
// (Prometheus 3 not built, losetup failing): it skips the test when run
// by hand, and fails it when make test installed the dependencies.
func Missing(t testing.TB, d Dep, format string, args ...any) {
	t.Helper()
	known(t, d)
	msg := fmt.Sprintf(format, args...)
	if Installed() {
		t.Fatalf("needs %s, which make test provides, but %s (%s=1: a failure, not a skip)", d, msg, EnvVar)
	}
	t.Skipf("needs %s: %s (%s)", d, msg, provider(d))
}

// Without is for a dependency a test can do without, testing less: run
// by hand it says so in the log and the test goes on; under make test
// the test goes on and fails.
func Without(t testing.TB, d Dep, format string, args ...any) {
	t.Helper()
	known(t, d)
	msg := fmt.Sprintf(format, args...)
	if Installed() {
		t.Errorf("goes on without %s, which make test provides: %s (%s=1: a failure)", d, msg, EnvVar)
		return
	}
	t.Logf("goes on without %s: %s (%s)", d, msg, provider(d))
}

// Provides reports whether make test provides d: one of the constants, or
// a program or module scripts/test-deps.sh installs.
func Provides(d Dep) (bool, error) {
	switch d {
	case Root, LoopDevices, DebianPython, Prometheus3, PromtoolLTS, GrafanaSchema:
		return true, nil
	}
	s, err := installs()
	if err != nil {
		return false, err
	}
	_, ok := s.pkg[d]
	return ok, nil
}

// check says what is wrong with d here, nil when nothing is.
func check(d Dep) error {
	switch {
	case d == Root:
		if os.Geteuid() != 0 {
			return fmt.Errorf("runs as uid %d", os.Geteuid())
		}
	case d == LoopDevices:
		if os.Geteuid() != 0 {
			return fmt.Errorf("runs as uid %d", os.Geteuid())
		}
		if _, err := exec.LookPath("losetup"); err != nil {
			return err
		}
		if _, err := os.Stat("/dev/loop-control"); err != nil {
			return err
		}
	case d == DebianPython:
		if _, err := os.Stat("/usr/bin/python3"); err != nil {
			return err
		}
	case strings.HasPrefix(string(d), toolPrefix):
		if _, err := exec.LookPath(strings.TrimPrefix(string(d), toolPrefix)); err != nil {
			return err
		}
	case strings.HasPrefix(string(d), modulePrefix):
		m := strings.TrimPrefix(string(d), modulePrefix)
		if out, err := exec.Command("/usr/bin/python3", "-c", "import "+m).CombinedOutput(); err != nil {
			return fmt.Errorf("/usr/bin/python3 cannot import %s: %v: %s", m, err, strings.TrimSpace(string(out)))
		}
	default:
		return fmt.Errorf("testdeps cannot check %s: its tests check it and call Missing", d)
	}
	return nil
}

// known fails the test when d is not something make test provides: a
// program or a module scripts/test-deps.sh does not install is for the
// test's author to add there, not a reason to skip.
func known(t testing.TB, d Dep) {
	t.Helper()
	ok, err := Provides(d)
	if err != nil {
		t.Fatalf("testdeps: %v", err)
	}
	if !ok {
		s, _ := installs()
		t.Fatalf("testdeps: scripts/test-deps.sh does not install %s: add it there (a `have NAME || need+=(PACKAGE)` line) "+
			"so that make test provides it; it installs: %s", d, strings.Join(s.names(), ", "))
	}
}

// provider says how to get d, for the skip message.
func provider(d Dep) string {
	switch d {
	case Root:
		return "make test runs as root in CI"
	case LoopDevices:
		return "root, losetup from util-linux, a kernel with loop devices"
	case Prometheus3, PromtoolLTS:
		return "make test-deps builds it with scripts/prometheus3.sh; after make test see .tools/logs/prometheus3.log"
	case GrafanaSchema:
		return "make test-deps runs npm ci in test/grafana-schema"
	case DebianPython:
		return "scripts/test-deps.sh installs Debian's python3"
	}
	if s, err := installs(); err == nil && s.pkg[d] != "" {
		return "scripts/test-deps.sh installs it from Debian's " + s.pkg[d]
	}
	return "scripts/test-deps.sh installs it"
}

// installed is what scripts/test-deps.sh installs: each program or
// module with its Debian package.
type installed struct{ pkg map[Dep]string }

func (s installed) names() []string {
	var out []string
	for d := range s.pkg {
		out = append(out, strings.TrimPrefix(string(d), toolPrefix))
	}
	sort.Strings(out)
	return out
}

var (
	haveRE   = regexp.MustCompile(`(?m)^\s*have\s+(\S+)\s*\|\|\s*need\+=\(([^)\s]+)\)`)
	importRE = regexp.MustCompile(`(?m)import\s+(\w+)'[^|\n]*\|\|\s*need\+=\(([^)\s]+)\)`)

	scriptOnce sync.Once
	script     installed
	scriptErr  error
)

// make and go run make test: always there when the dependencies are.
var makeTestRunsWith = []string{"make", "go"}

// installs reads scripts/test-deps.sh, found from the working directory
// up (go test runs a package's tests in its directory).
func installs() (installed, error) {
	scriptOnce.Do(func() {
		path, err := scriptPath()
		if err != nil {
			scriptErr = err
			return
		}
		b, err := os.ReadFile(path)
		if err != nil {
			scriptErr = err
			return
		}
		script = parse(string(b))
		for _, p := range makeTestRunsWith {
			script.pkg[Tool(p)] = p
		}
	})
	return script, scriptErr
}

// parse reads what a scripts/test-deps.sh installs: its `have NAME ||
// need+=(PACKAGE)` programs and its `python3 -c 'import NAME' ... ||
// need+=(PACKAGE)` modules.
func parse(text string) installed {
	s := installed{pkg: map[Dep]string{}}
	for _, m := range haveRE.FindAllStringSubmatch(text, -1) {
		s.pkg[Tool(m[1])] = m[2]
	}
	for _, m := range importRE.FindAllStringSubmatch(text, -1) {
		s.pkg[PythonModule(m[1])] = m[2]
	}
	return s
}

// scriptPath is scripts/test-deps.sh of the checkout the test runs in.
func scriptPath() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "scripts", "test-deps.sh")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no scripts/test-deps.sh in the working directory or above it")
		}
		dir = up
	}
}
