package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// realLinter returns the path of an ecosystem linter the Go module proxy
// refuses (mixtool, Grafana's dashboard-linter), from $env. They are built
// from their sources by hand (docs/dashboards.md says which commits and
// how); no registry make test reaches serves them, so without one the test
// skips, saying so. test/upstream's re-encoded rules run everywhere.
func realLinter(t *testing.T, env, name string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		t.Skipf("%s is not set: point it at a %s binary built from its source (docs/dashboards.md) to lint the shipped files with it", env, name) //hygiene:skip the Go module proxy refuses the module: no make test can install it
	}
	st, err := os.Stat(p)
	require.NoError(t, err, "%s=%s", env, p)
	require.False(t, st.IsDir(), "%s=%s is a directory, not %s", env, p, name)
	return p
}

// TestRealMixtoolLintsTheMixin: the real `mixtool lint` (which runs
// dashboard-linter's rules on the mixin's dashboards and checks its
// alerts and rules) exits 0 with nothing to say on the shipped mixin.
func TestRealMixtoolLintsTheMixin(t *testing.T) {
	mixtool := realLinter(t, "IOPROBE_MIXTOOL", "mixtool")
	cmd := exec.Command(mixtool, "lint", "mixin.libsonnet")
	cmd.Dir = filepath.Join("..", "mixin")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "mixtool lint mixin.libsonnet: %s", out)
	require.Empty(t, string(out), "mixtool lint found something")
}

// TestRealDashboardLinterLintsTheDashboards: Grafana's dashboard-linter,
// --strict (warnings are errors), exits 0 on every shipped dashboard.
func TestRealDashboardLinterLintsTheDashboards(t *testing.T) {
	linter := realLinter(t, "IOPROBE_DASHBOARD_LINTER", "dashboard-linter")
	files, err := filepath.Glob(filepath.Join("..", "grafana", "dashboards", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		out, err := exec.Command(linter, "lint", "--strict", f).CombinedOutput()
		require.NoError(t, err, "dashboard-linter lint --strict %s: %s", filepath.Base(f), out)
	}
}
