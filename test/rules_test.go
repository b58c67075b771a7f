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

// TestPrometheusRules checks configs/prometheus with the promtool of
// Prometheus 3 and of 2.42: the rule files and the scrape config are valid
// (for 2.x, the config without its 3.x keys, as its comment says), and the
// unit tests of configs/prometheus/tests (recording rules' values, each
// alert firing when it should and only then) pass. The expected values
// are exact on both: promtool 2.42 compares floats exactly and has no
// fuzzy_compare.
func TestPrometheusRules(t *testing.T) {
	afterTheOthers(t)
	dir, err := filepath.Abs(filepath.Join("..", "configs", "prometheus"))
	require.NoError(t, err)
	tests, err := filepath.Glob(filepath.Join(dir, "tests", "*.yml"))
	require.NoError(t, err)
	require.NotEmpty(t, tests)
	requireRecordingRulesFirst(t, dir, tests)
	cfg, err := os.ReadFile(filepath.Join(dir, "prometheus.yml"))
	require.NoError(t, err)
	for _, s := range promServers(t) {
		t.Run(s.name, func(t *testing.T) {
			config := filepath.Join(dir, "prometheus.yml")
			if s.v2 {
				// Its rule files by absolute path: promtool reads them too.
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
		})
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
