package test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/ioprobe/ioprobe/internal/testdeps"
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

// The shipped unit and its drop-in for device writes are what systemd
// takes (systemd-analyze verify, with ExecStart pointed at the built
// binary: no warning), and they say what the docs say: the unit alone
// hides other users' processes and grants nothing; with the drop-in,
// /proc shows every process and the ioprobe user has exactly the
// capabilities that give the view (TestHoldersNeedAViewOfEveryProcess
// runs ioprobe as the unit would).
func TestSystemdUnitAndDropIn(t *testing.T) {
	analyze := testdeps.LookPath(t, "systemd-analyze")
	dir := t.TempDir()
	unit, err := os.ReadFile("../configs/systemd/ioprobe.service")
	require.NoError(t, err)
	require.Contains(t, string(unit), "ExecStart=/usr/local/bin/ioprobe serve")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ioprobe.service"), []byte(strings.Replace(string(unit), "ExecStart=/usr/local/bin/ioprobe", "ExecStart="+binary, 1)), 0o644))
	verify := func() string {
		out, err := exec.Command(analyze, "verify", filepath.Join(dir, "ioprobe.service")).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return strings.TrimSpace(string(out))
	}
	require.Empty(t, verify(), "the unit")
	dropIn, err := os.ReadFile("../configs/systemd/ioprobe.service.d/write-devices.conf")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "ioprobe.service.d"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ioprobe.service.d/write-devices.conf"), dropIn, 0o644))
	require.Empty(t, verify(), "the unit with the drop-in")

	alone := unitSettings(t, "../configs/systemd/ioprobe.service")
	require.Equal(t, "invisible", alone.protectProc)
	require.Empty(t, alone.ambient)
	with := unitSettings(t, "../configs/systemd/ioprobe.service", "../configs/systemd/ioprobe.service.d/write-devices.conf")
	require.Equal(t, "default", with.protectProc)
	view := []string{"CAP_SYS_PTRACE", "CAP_DAC_READ_SEARCH", "CAP_CHECKPOINT_RESTORE"}
	require.ElementsMatch(t, view, with.ambient)
	require.ElementsMatch(t, view, with.bounding, "the bounding set is the drop-in's alone")
}
