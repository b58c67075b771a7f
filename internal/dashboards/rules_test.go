package dashboards

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The committed rule files and mixin are what this package generates.
func TestRulesAndMixinAreUpToDate(t *testing.T) {
	for name, want := range RuleFiles() {
		got, err := os.ReadFile(filepath.Join("..", "..", "configs", "prometheus", name))
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "configs/prometheus/%s is stale: run `make dashboards` and commit the result", name)
	}
	mixin, err := MixinFiles()
	require.NoError(t, err)
	for name, want := range mixin {
		got, err := os.ReadFile(filepath.Join("..", "..", "mixin", filepath.FromSlash(name)))
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "mixin/%s is stale: run `make dashboards` and commit the result", name)
	}
}

// Every alert has a section in docs/runbooks.md, the target of its
// runbook_url, and a static summary.
func TestAlertsHaveRunbooks(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "runbooks.md"))
	require.NoError(t, err)
	headings := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if h, ok := strings.CutPrefix(l, "## "); ok {
			headings[runbookAnchor(h)] = true
		}
	}
	n := 0
	for _, g := range alertingRules {
		for _, r := range g.rules {
			n++
			require.True(t, headings[runbookAnchor(r.alert)], "docs/runbooks.md has no section ## %s", r.alert)
			require.NotContains(t, r.summary, "{{", "%s: the summary is static, details go in the description", r.alert)
			require.NotEmpty(t, r.description, r.alert)
		}
	}
	require.Len(t, headings, n, "docs/runbooks.md has a section per alert and no other")
}

func TestFill(t *testing.T) {
	require.Equal(t, `up{job="ioprobe"} == 0 % instance`, fill(`up{%(ioprobeSelector)s} == 0 %% %(hostLabels)s`))
	require.Panics(t, func() { fill("%(nope)s") })
}
