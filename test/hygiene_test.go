package test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Nothing in the test path stops a process by its name: a test or a
// script stops only what it started, by process id. (scripts/test-deps.sh
// once stopped every process named prometheus, whatever Prometheus the machine
// ran, someone else's included.) Nor does a test rely on a fixed well-known
// port that a service installed by test-deps.sh may hold: each picks a
// free one.
func TestNothingKillsByName(t *testing.T) {
	// Built from parts so that this file does not match itself.
	byName := regexp.MustCompile(`\b(` + strings.Join([]string{"p" + "kill", "kill" + "all", "pid" + "of", "p" + "grep", "systemctl\\s+(stop|kill|restart)"}, "|") + `)\b`)
	fixedPort := regexp.MustCompile(`(localhost|127\.0\.0\.1|0\.0\.0\.0)?:` + "90" + `90\b`)
	self, err := filepath.Abs("hygiene_test.go")
	require.NoError(t, err)
	var files []string
	for _, root := range []string{"../scripts", "../test", "../internal", "../cmd", "../pkg"} {
		require.NoError(t, filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			name := d.Name()
			testPath := strings.HasSuffix(name, "_test.go") || strings.HasSuffix(name, ".sh") || strings.HasPrefix(path, "../scripts/")
			if testPath && !strings.HasSuffix(path, ".png") {
				files = append(files, path)
			}
			return nil
		}))
	}
	files = append(files, "../Makefile")
	require.Contains(t, files, "../scripts/test-deps.sh")
	for _, f := range files {
		if abs, _ := filepath.Abs(f); abs == self {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for i, line := range strings.Split(string(b), "\n") {
			require.False(t, byName.MatchString(line), "%s:%d kills by name: %s", f, i+1, strings.TrimSpace(line))
			if strings.HasSuffix(f, "_test.go") {
				require.False(t, fixedPort.MatchString(line), "%s:%d depends on a fixed port: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}

// The documentation cites only what is in this repository: no file of the
// project's design notes kept outside it and no path to the reference reports
// outside it — those are named by title and publisher (docs/suites.md).
func TestDocsCiteOnlyWhatTheRepositoryHolds(t *testing.T) {
	outside := regexp.MustCompile(`DESIGN` + `\.md|shared/` + `reports`)
	var files []string
	for _, root := range []string{"../docs", "../internal", "../pkg", "../cmd", "../configs", "../scripts", "../test"} {
		require.NoError(t, filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".md") || strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".sh")) {
				files = append(files, path)
			}
			return err
		}))
	}
	files = append(files, "../README.md", "../Makefile")
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for i, line := range strings.Split(string(b), "\n") {
			require.False(t, outside.MatchString(line), "%s:%d cites a file that is not in the repository: %s", f, i+1, strings.TrimSpace(line))
		}
	}
	// The reports are named where the docs first use their short names.
	b, err := os.ReadFile("../docs/suites.md")
	require.NoError(t, err)
	for _, title := range []string{"BusLogic Versus LSI Logic", "Comparison of Storage Protocol Performance", "Million I/O Operations per Second", "Enterprise Strategy Group"} {
		require.Contains(t, string(b), title)
	}
}

// docs/reliability.md says what make test does with the fuzz targets
// (replays their seeds and saved failures with the plain tests; no
// fuzzing), and that is what scripts/test.sh, make test's recipe, does.
func TestReliabilityDocSaysWhenFuzzingRuns(t *testing.T) {
	mk, err := os.ReadFile("../Makefile")
	require.NoError(t, err)
	require.Regexp(t, `(?m)^test:\n\t@GO=\$\(GO\) \./scripts/test\.sh$`, string(mk))
	b, err := os.ReadFile("../scripts/test.sh")
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if code, _, _ := strings.Cut(line, "#"); strings.Contains(code, "fuzz") {
			t.Errorf("scripts/test.sh runs the fuzzer: %s", line)
		}
	}
	require.Regexp(t, `(?m)^\s*"\$GO" test -count=1 [^\n]*\./\.\.\.`, string(b), "every package's tests, the fuzz seeds among them")
	doc, err := os.ReadFile("../docs/reliability.md")
	require.NoError(t, err)
	require.Contains(t, string(doc), "`make test` replays them")
	require.Contains(t, string(doc), "it does not explore with the fuzzer itself")
}
