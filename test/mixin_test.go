package test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-jsonnet"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// The monitoring mixin (mixin/, for kube-prometheus and jsonnet users) is
// generated from the same Go source as grafana/ and configs/prometheus/.
// TestMixinRendersTheShippedFiles renders it with go-jsonnet (Google's
// evaluator, a test-only dependency) and its default _config, and compares
// the result with the shipped files as data: the dashboards with
// grafana/dashboards, prometheusRules with rules.yml, prometheusAlerts with
// alerts.yml. Then it renders it with another selector and checks that
// every expression took it.
func TestMixinRendersTheShippedFiles(t *testing.T) {
	// In-process jsonnet on the repository's files: no device, nothing timed.
	besideOthers(t)
	render := func(t *testing.T, snippet string) map[string]any {
		t.Helper()
		vm := jsonnet.MakeVM()
		vm.Importer(&jsonnet.FileImporter{JPaths: []string{filepath.Join("..", "mixin")}})
		out, err := vm.EvaluateAnonymousSnippet("render.jsonnet", snippet)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &m))
		return m
	}
	mixin := render(t, `local m = import 'mixin.libsonnet';
{dashboards: m.grafanaDashboards, rules: m.prometheusRules, alerts: m.prometheusAlerts}`)

	files, err := filepath.Glob(filepath.Join("..", "grafana", "dashboards", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	dashboards := mixin["dashboards"].(map[string]any)
	require.Len(t, dashboards, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var want any
		require.NoError(t, json.Unmarshal(b, &want))
		require.Equal(t, want, dashboards[filepath.Base(f)], "the mixin's %s", filepath.Base(f))
	}
	for key, file := range map[string]string{"rules": "rules.yml", "alerts": "alerts.yml"} {
		b, err := os.ReadFile(filepath.Join("..", "configs", "prometheus", file))
		require.NoError(t, err)
		var want any
		require.NoError(t, yaml.Unmarshal(b, &want))
		// Through JSON, so that both sides have JSON's types.
		j, err := json.Marshal(want)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(j, &want))
		require.Equal(t, want, mixin[key], "the mixin's %s and configs/prometheus/%s", key, file)
	}

	// A kube-prometheus user's selector and host labels reach every rule.
	custom := render(t, `local m = (import 'mixin.libsonnet') + {_config+:: {ioprobeSelector: 'job="storage-probe"', hostLabels: 'instance, pod'}};
{rules: m.prometheusRules, alerts: m.prometheusAlerts}`)
	raw, err := json.Marshal(custom)
	require.NoError(t, err)
	require.NotContains(t, string(raw), `job=\"ioprobe\"`)
	require.Contains(t, string(raw), `up{job=\"storage-probe\"} == 0`)
	require.Contains(t, string(raw), `sum without (instance, pod, target)`)
}

// queryStrings returns every query of a rendered dashboard by where it is:
// panels' targets, annotations, variables.
func queryStrings(t *testing.T, d map[string]any) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && (k == "expr" || (k == "query" && v["type"] == "query")) {
					out[path+"/"+k] = s
					continue
				}
				walk(path+"/"+k, x)
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s/%d", path, i), x)
			}
		}
	}
	walk("", d)
	return out
}

// A kube-prometheus user's _config changes every query of every
// dashboard: each takes the selector (here another job and a namespace)
// and the scope variable (cluster), which comes before Job.
func TestMixinSelectorReachesEveryDashboardQuery(t *testing.T) {
	// In-process jsonnet on the repository's files: no device, nothing timed.
	besideOthers(t)
	render := func(config string) map[string]any {
		vm := jsonnet.MakeVM()
		vm.Importer(&jsonnet.FileImporter{JPaths: []string{filepath.Join("..", "mixin")}})
		out, err := vm.EvaluateAnonymousSnippet("render.jsonnet", "((import 'mixin.libsonnet') + {_config+:: "+config+"}).grafanaDashboards")
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &m))
		return m
	}
	def := render("{}")
	custom := render(`{ioprobeSelector: 'job="storage-probe", namespace="storage"', scopeLabels: 'cluster'}`)
	require.Len(t, custom, 3)
	for name, d := range custom {
		got := queryStrings(t, d.(map[string]any))
		was := queryStrings(t, def[name].(map[string]any))
		// The cluster variable is new and moves the variables after it.
		require.Len(t, got, len(was)+1, name)
		require.NotEmpty(t, was, name)
		for path, q := range got {
			require.Contains(t, q, `job="storage-probe", namespace="storage"`, "%s %s", name, path)
			require.NotContains(t, q, `job="ioprobe"`, "%s %s", name, path)
			if !strings.HasPrefix(q, "label_values(ioprobe_build_info{") {
				require.Contains(t, q, `cluster=~"$cluster", job=~"$job"`, "%s %s", name, path)
			}
		}
		for path, q := range was {
			require.NotContains(t, q, "namespace", "%s %s", name, path)
		}
	}
}
