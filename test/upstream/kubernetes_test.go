package upstream

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// kubeDir holds the Kubernetes objects ioprobe ships.
var kubeDir = filepath.Join("..", "..", "configs", "kubernetes")

// kubeObject is one document of a shipped file, decoded.
type kubeObject struct {
	file string
	obj  runtime.Object
	gvk  schema.GroupVersionKind
}

func (o kubeObject) String() string { return o.file + ": " + o.gvk.Kind }

// Every object in configs/kubernetes decodes strictly into the Go types
// of Kubernetes (k8s.io/api) and of the Prometheus Operator: no field is
// unknown to them, so `kubectl apply` with strict validation takes them
// and none is dropped silently without it.
func TestKubernetesObjectsDecodeStrictly(t *testing.T) {
	var kinds []string
	for _, o := range shippedObjects(t) {
		kinds = append(kinds, o.String())
	}
	sort.Strings(kinds)
	require.Equal(t, []string{
		"configmap.yaml: ConfigMap",
		"daemonset-devices.yaml: DaemonSet",
		"daemonset.yaml: DaemonSet",
		"fleet-job.yaml: Job",
		"fleet-job.yaml: PersistentVolumeClaim",
		"service.yaml: Service",
		"servicemonitor.yaml: ServiceMonitor",
		"servicemonitor.yaml: ServiceMonitor",
	}, kinds)
}

// The decoder is strict: a field where the type has none (the
// ServiceMonitor's scrapeClassicHistograms under an endpoint, as it once
// was shipped, rather than under spec) is an error naming it.
func TestStrictDecodingRejectsAMisplacedField(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(kubeDir, "servicemonitor.yaml"))
	require.NoError(t, err)
	doc := string(b)[:strings.Index(string(b), "\n---\n")]
	moved := strings.Replace(doc, "      interval: 15s", "      interval: 15s\n      scrapeClassicHistograms: true", 1)
	require.NotEqual(t, doc, moved)
	_, _, err = strictDecoder(t).Decode([]byte(moved), nil, nil)
	require.ErrorContains(t, err, `unknown field "spec.endpoints[0].scrapeClassicHistograms"`)
}

// The Pod that fleet-job.yaml's comment has `kubectl run --overrides`
// merge into the collector pod is a valid (partial) Pod too.
func TestFleetCollectorOverridesDecodeStrictly(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(kubeDir, "fleet-job.yaml"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?s)--overrides='(.*?)'`).FindSubmatch(b)
	require.NotNil(t, m, "fleet-job.yaml has no --overrides")
	// The JSON spans comment lines: drop their "#   " prefixes.
	js := regexp.MustCompile(`\n#\s*`).ReplaceAll(m[1], []byte(" "))
	obj, _, err := strictDecoder(t).Decode(js, &schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, nil)
	require.NoError(t, err, "%s", js)
	pod := obj.(*corev1.Pod)
	require.Len(t, pod.Spec.Containers, 1)
	require.Equal(t, "ioprobe-fleet-results", pod.Spec.Volumes[0].PersistentVolumeClaim.ClaimName)
}

// kustomization.yaml lists every object file but the fleet Job, which
// its comment keeps out on purpose (an apply must not start a benchmark),
// and daemonset-devices.yaml, which replaces daemonset.yaml by hand where
// jobs write devices.
func TestKustomizationListsTheObjects(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(kubeDir, "kustomization.yaml"))
	require.NoError(t, err)
	var k struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Namespace  string   `json:"namespace"`
		Resources  []string `json:"resources"`
	}
	require.NoError(t, utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096).Decode(&k))
	require.Equal(t, "kustomize.config.k8s.io/v1beta1", k.APIVersion)
	require.Equal(t, "Kustomization", k.Kind)
	files, err := filepath.Glob(filepath.Join(kubeDir, "*.yaml"))
	require.NoError(t, err)
	var want []string
	for _, f := range files {
		if n := filepath.Base(f); n != "kustomization.yaml" && n != "fleet-job.yaml" && n != "daemonset-devices.yaml" {
			want = append(want, n)
		}
	}
	require.ElementsMatch(t, want, k.Resources)
}

// daemonSet is the DaemonSet in file.
func daemonSet(t *testing.T, file string) *appsv1.DaemonSet {
	t.Helper()
	for _, o := range shippedObjects(t) {
		if ds, ok := o.obj.(*appsv1.DaemonSet); ok && o.file == file {
			return ds
		}
	}
	t.Fatalf("no DaemonSet in %s", file)
	return nil
}

// daemonset-devices.yaml gives ioprobe what a device write needs, a view
// of every process on the node (README "Safety", hidden-processes): the
// node's PID namespace, root with only the capabilities that read other
// processes' tables, no privilege escalation; daemonset.yaml has not
// (its ioprobe refuses device writes). Apart from that the two are the
// same DaemonSet: one replaces the other.
func TestDevicesDaemonSetGivesTheView(t *testing.T) {
	base, dev := daemonSet(t, "daemonset.yaml"), daemonSet(t, "daemonset-devices.yaml")
	require.False(t, base.Spec.Template.Spec.HostPID)
	require.True(t, dev.Spec.Template.Spec.HostPID, "the node's PID namespace")
	require.Equal(t, base.Name, dev.Name, "it replaces the DaemonSet")
	require.Equal(t, base.Labels, dev.Labels)
	require.Equal(t, base.Spec.Selector, dev.Spec.Selector)
	require.Len(t, dev.Spec.Template.Spec.Containers, 1)
	b, d := base.Spec.Template.Spec.Containers[0], dev.Spec.Template.Spec.Containers[0]
	for _, same := range []struct {
		what string
		a, b any
	}{{"image", b.Image, d.Image}, {"args", b.Args, d.Args}, {"ports", b.Ports, d.Ports},
		{"readiness", b.ReadinessProbe, d.ReadinessProbe}, {"liveness", b.LivenessProbe, d.LivenessProbe},
		{"resources", b.Resources, d.Resources}, {"mounts", b.VolumeMounts, d.VolumeMounts}} {
		require.Equal(t, same.a, same.b, "the %s differ", same.what)
	}
	sc := d.SecurityContext
	require.NotNil(t, sc)
	require.EqualValues(t, 0, *sc.RunAsUser, "root: a non-root container's added capabilities are not in effect")
	require.False(t, *sc.AllowPrivilegeEscalation)
	require.True(t, *sc.ReadOnlyRootFilesystem)
	require.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop)
	require.ElementsMatch(t, []corev1.Capability{"SYS_PTRACE", "DAC_READ_SEARCH", "CHECKPOINT_RESTORE"}, sc.Capabilities.Add)
	require.Nil(t, sc.Privileged)
	require.Equal(t, []corev1.VolumeDevice{{Name: "disk", DevicePath: "/dev/ioprobe"}}, d.VolumeDevices)
}
