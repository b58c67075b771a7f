package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// TestPrometheusRules checks configs/prometheus with the promtool of the
// newest Prometheus 3, of 3.5 (the long-term support release) and of
// Debian's 2.42: the rule files and each release's scrape config are valid
// (prometheus.yml from 3.8, prometheus-3.5.yml before; for 2.x without its
// 3.x key, as its comment says), and the unit tests of
// configs/prometheus/tests (recording rules' values, each alert firing
// when it should and only then) pass. The expected values are exact on
// every one: promtool 2.42 compares floats exactly and has no
// fuzzy_compare. On 3.5, prometheus.yml fails, which is why there are two.
func TestPrometheusRules(t *testing.T) {
	// Beside the others: it waits for the LTS promtool's build (after
	// Prometheus 3's, which is all the others need) and holds none of them up.
	besideOtherPrometheusTests(t)
	servers := promServers(t, true)
	dir, err := filepath.Abs(filepath.Join("..", "configs", "prometheus"))
	require.NoError(t, err)
	tests, err := filepath.Glob(filepath.Join(dir, "tests", "*.yml"))
	require.NoError(t, err)
	require.NotEmpty(t, tests)
	requireRecordingRulesFirst(t, dir, tests)
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			config := filepath.Join(dir, s.configFile())
			if s.v2 {
				// Its rule files by absolute path: promtool reads them too.
				cfg, err := os.ReadFile(config)
				require.NoError(t, err)
				v2 := forPrometheus2(t, string(cfg))
				for _, f := range []string{"rules.yml", "alerts.yml"} {
					v2 = strings.Replace(v2, "  - "+f+"\n", "  - '"+filepath.Join(dir, f)+"'\n", 1)
				}
				config = filepath.Join(t.TempDir(), "prometheus.yml")
				require.NoError(t, os.WriteFile(config, []byte(v2), 0o644))
			}
			for _, args := range [][]string{
				{"check", "rules", "rules.yml", "alerts.yml"},
				{"check", "config", config},
				append([]string{"test", "rules"}, rel(t, dir, tests)...),
			} {
				cmd := exec.Command(s.promtool, args...)
				cmd.Dir = dir
				out, err := cmd.CombinedOutput()
				require.NoError(t, err, "%s: promtool %v:\n%s", s.name, args, out)
			}
			if s.lts {
				cmd := exec.Command(s.promtool, "check", "config", "prometheus.yml")
				cmd.Dir = dir
				out, err := cmd.CombinedOutput()
				require.Error(t, err, "%s takes prometheus.yml: is prometheus-3.5.yml still needed?", s.name)
				require.Contains(t, string(out), "field scrape_native_histograms not found")
			}
		})
	}
}

// The two scrape configs are one config for two lines of releases:
// prometheus-3.5.yml is prometheus.yml without scrape_native_histograms
// (which releases before 3.8 do not know), and its comment says to start
// Prometheus with the feature flag that does the same there.
func TestScrapeConfigsPerRelease(t *testing.T) {
	load := func(name string) (map[string]any, string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("..", "configs", "prometheus", name))
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, yaml.Unmarshal(b, &m), name)
		return m, string(b)
	}
	newest, _ := load("prometheus.yml")
	lts, ltsText := load("prometheus-3.5.yml")
	native := 0
	for _, sc := range newest["scrape_configs"].([]any) {
		job := sc.(map[string]any)
		if v, ok := job["scrape_native_histograms"]; ok {
			require.Equal(t, true, v)
			require.Equal(t, "ioprobe", job["job_name"], "native histograms are /metrics'")
			native++
			delete(job, "scrape_native_histograms")
		}
	}
	require.Equal(t, 1, native)
	require.Equal(t, newest, lts, "prometheus-3.5.yml is prometheus.yml without scrape_native_histograms")
	require.Contains(t, ltsText, "--enable-feature=native-histograms")
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

// requireRecordingRulesFirst checks that every promtool test file fixes
// the order of all rule groups, recording groups before alerting ones.
// Without group_eval_order promtool evaluates groups in Go map order, so
// at an evaluation interval longer than the 5m lookback an alert that
// happens to run before the recording rule it reads sees nothing: a test
// that passes or fails by chance (it failed once in CI).
func requireRecordingRulesFirst(t *testing.T, dir string, tests []string) {
	t.Helper()
	type ruleFile struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Record string `yaml:"record"`
				Alert  string `yaml:"alert"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	alerting := map[string]bool{}
	var groups []string
	for _, f := range []string{"rules.yml", "alerts.yml"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		var rf ruleFile
		require.NoError(t, yaml.Unmarshal(b, &rf), f)
		for _, g := range rf.Groups {
			groups = append(groups, g.Name)
			for _, r := range g.Rules {
				if r.Alert != "" {
					alerting[g.Name] = true
				}
			}
		}
	}
	for _, tf := range tests {
		b, err := os.ReadFile(tf)
		require.NoError(t, err)
		var spec struct {
			Order []string `yaml:"group_eval_order"`
		}
		require.NoError(t, yaml.Unmarshal(b, &spec), tf)
		require.ElementsMatch(t, groups, spec.Order, "%s: group_eval_order must name every rule group", tf)
		seenAlerting := false
		for _, g := range spec.Order {
			if alerting[g] {
				seenAlerting = true
			} else {
				require.False(t, seenAlerting, "%s: recording group %s is evaluated after an alerting group", tf, g)
			}
		}
	}
}
