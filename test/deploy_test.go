package test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// The shipped example configs are valid: the daemon's own (standalone and
// inside the Kubernetes ConfigMap) and Prometheus'. --config.check also
// checks the machine, and /var/lib/ioprobe (which systemd and the
// DaemonSet mounts at /data) is not the test's to create: the files are
// checked with their directory moved to one of the test's.
func TestDeploymentFiles(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("../configs/ioprobe.yaml")
	require.NoError(t, err)
	example := filepath.Join(dir, "example.yaml")
	require.NoError(t, os.WriteFile(example, []byte(strings.ReplaceAll(string(b), "/var/lib/ioprobe/", dir+"/")), 0o644))
	o := ioprobe(t, dir, "serve", "--config.check", example)
	require.Equal(t, 0, o.code, o.stderr)

	b, err = os.ReadFile("../configs/kubernetes/configmap.yaml")
	require.NoError(t, err)
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	require.NoError(t, yaml.Unmarshal(b, &cm))
	inner := filepath.Join(dir, "ioprobe.yaml")
	require.NoError(t, os.WriteFile(inner, []byte(strings.ReplaceAll(cm.Data["ioprobe.yaml"], "path: /data/", "path: "+dir+"/")), 0o644))
	o = ioprobe(t, dir, "serve", "--config.check", inner)
	require.Equal(t, 0, o.code, o.stderr)

	// prometheus.yml: TestPrometheusRules checks it with both promtools.
}

// The ServiceMonitors keep /metrics and /probe in two jobs: the metrics
// job is the one the alerts select (job="ioprobe", jobLabel from the
// Service's name label), the probe job is named apart and says which
// target it probes.
func TestServiceMonitorsKeepProbeApart(t *testing.T) {
	b, err := os.ReadFile("../configs/kubernetes/servicemonitor.yaml")
	require.NoError(t, err)
	type endpoint struct {
		Path        string              `yaml:"path"`
		Params      map[string][]string `yaml:"params"`
		Relabelings []struct {
			TargetLabel string `yaml:"targetLabel"`
			Replacement string `yaml:"replacement"`
		} `yaml:"relabelings"`
	}
	jobs := map[string]string{} // path -> job
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var sm struct {
			Kind string `yaml:"kind"`
			Spec struct {
				JobLabel  string     `yaml:"jobLabel"`
				Endpoints []endpoint `yaml:"endpoints"`
			} `yaml:"spec"`
		}
		if err := dec.Decode(&sm); err == io.EOF {
			break
		} else {
			require.NoError(t, err)
		}
		require.Equal(t, "ServiceMonitor", sm.Kind)
		require.Len(t, sm.Spec.Endpoints, 1, "one endpoint per ServiceMonitor: one job each")
		e := sm.Spec.Endpoints[0]
		job := "ioprobe" // the Service's app.kubernetes.io/name
		labels := map[string]string{}
		for _, r := range e.Relabelings {
			labels[r.TargetLabel] = r.Replacement
		}
		if j, ok := labels["job"]; ok {
			job = j
		}
		if e.Path == "/probe" {
			require.Equal(t, e.Params["target"], []string{labels["target"]}, "the probe's target label is the target it probes")
		}
		jobs[e.Path] = job
	}
	require.Equal(t, map[string]string{"/metrics": "ioprobe", "/probe": "ioprobe-probe"}, jobs)
}
