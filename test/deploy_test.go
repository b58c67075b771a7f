package test

import (
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
