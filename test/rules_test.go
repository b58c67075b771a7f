package test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPrometheusRules checks configs/prometheus with promtool: the rule
// files and the scrape config are valid, and the unit tests of
// configs/prometheus/tests (recording rules' values, each alert firing
// when it should and only then) pass.
func TestPrometheusRules(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed (make test-deps installs Debian's prometheus package)")
	}
	dir := filepath.Join("..", "configs", "prometheus")
	tests, err := filepath.Glob(filepath.Join(dir, "tests", "*.yml"))
	require.NoError(t, err)
	require.NotEmpty(t, tests)
	for _, args := range [][]string{
		{"check", "rules", "rules.yml", "alerts.yml"},
		{"check", "config", "prometheus.yml"},
		append([]string{"test", "rules"}, rel(t, dir, tests)...),
	} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "promtool %v:\n%s", args, out)
	}
}

func rel(t *testing.T, base string, paths []string) []string {
	t.Helper()
	out := make([]string, len(paths))
	for i, p := range paths {
		r, err := filepath.Rel(base, p)
		require.NoError(t, err)
		out[i] = r
	}
	return out
}
