package dashboards

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-jsonnet/formatter"
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

// The rules of `mixtool lint` for alerts (monitoring-mixins/mixtool,
// pkg/mixer/lint.go, after https://monitoring.mixins.dev/#guidelines-for-alert-names-labels-and-annotations),
// every one of them, with no exclusions: a group has at most 20 rules and
// a name of at most 40 characters; an alert's name is in camel case (each
// capital run followed by lower case or digits: IoprobeCanaryLatencySlo,
// not …SLO) and at most 40 characters; its severity is warning, critical
// or info; its description uses templates; its summary does not, starts
// with a capital letter and ends with a period.
func TestAlertsPassMixtoolLint(t *testing.T) {
	camelCase := regexp.MustCompile(`^([A-Z]+[a-z0-9]+)+$`)
	template := regexp.MustCompile(`\{\{.+}\}`)
	sentence := regexp.MustCompile(`^[A-Z].+\.$`)
	for _, g := range alertingRules {
		require.LessOrEqual(t, len(g.rules), 20, "[alert-group-rule-count] group %s", g.name)
		require.LessOrEqual(t, len(g.name), 40, "[alert-group-name-length] group %s", g.name)
		for _, r := range g.rules {
			require.Regexp(t, camelCase, r.alert, "[alert-name-camelcase]")
			require.LessOrEqual(t, len(r.alert), 40, "[alert-name-length] %s", r.alert)
			sev := ""
			for _, kv := range r.labels {
				if kv[0] == "severity" {
					sev = kv[1]
				}
			}
			require.Contains(t, []string{"warning", "critical", "info"}, sev, "[alert-severity-rule] %s", r.alert)
			require.Regexp(t, template, r.description, "[alert-description-templating] %s", r.alert)
			require.NotRegexp(t, template, r.summary, "[alert-summary-templating] %s", r.alert)
			require.Regexp(t, sentence, r.summary, "[alert-summary-style] %s", r.alert)
		}
	}
}

// The mixin's jsonnet files are as jsonnetfmt (go-jsonnet's formatter, its
// default options) writes them: `jsonnetfmt --test` passes on mixin/.
func TestMixinIsJsonnetfmtClean(t *testing.T) {
	dir := filepath.Join("..", "..", "mixin")
	n := 0
	err := filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || !IsJsonnet(path) {
			return err
		}
		n++
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		f, err := formatter.Format(path, string(b), formatter.DefaultOptions())
		require.NoError(t, err, path)
		require.Equal(t, f, string(b), "%s is not jsonnetfmt-formatted", path)
		return nil
	})
	require.NoError(t, err)
	require.Positive(t, n)
}
