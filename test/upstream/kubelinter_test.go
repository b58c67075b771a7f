package upstream

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kube-linter's default checks that look at containers (stackrox/kube-linter,
// pkg/builtinchecks), encoded on the decoded objects, every container of
// every pod template (init containers included), as kube-linter reads
// them:
//
//	run-as-non-root                 effective runAsUser > 0, or runAsNonRoot without runAsUser 0; no runAsGroup 0
//	no-read-only-root-fs            readOnlyRootFilesystem: true
//	unset-cpu-requirements          a CPU request
//	unset-memory-requirements       a memory limit
//	privilege-escalation-container  no allowPrivilegeEscalation: true, not privileged, no SYS_ADMIN
//	privileged-container            not privileged
//	drop-net-raw-capability         NET_RAW not added, dropped (ALL drops it)
//	latest-tag                      an image tag, not latest
//	job-ttl-seconds-after-finished  a Job has ttlSecondsAfterFinished
//	host-pids                       the pod does not share the node's PID namespace
//
// An object may ignore a check with kube-linter's annotation
// ignore-check.kube-linter.io/<check>, whose value must say why; here it
// exempts only the containers that exemptions names, so that the
// annotation cannot hide a finding in ioprobe's own container.

// exemptions are the containers allowed to fail a check their object's
// annotation ignores.
var exemptions = map[string][]string{
	"run-as-non-root": {"chown-data", "ioprobe-devices"},
}

// podTemplate is what the checks read of an object.
type podTemplate struct {
	name string
	meta metav1.ObjectMeta
	spec corev1.PodSpec
}

func podTemplates(t *testing.T) []podTemplate {
	t.Helper()
	var out []podTemplate
	for _, o := range shippedObjects(t) {
		switch v := o.obj.(type) {
		case *appsv1.DaemonSet:
			out = append(out, podTemplate{o.String(), v.ObjectMeta, v.Spec.Template.Spec})
		case *batchv1.Job:
			out = append(out, podTemplate{o.String(), v.ObjectMeta, v.Spec.Template.Spec})
			if v.Spec.TTLSecondsAfterFinished == nil {
				t.Errorf("[job-ttl-seconds-after-finished] %s", o)
			}
		}
	}
	require.Len(t, out, 3, "the DaemonSets and the fleet Job")
	return out
}

// ignored says whether an object's annotations ignore check, and fails
// the test when one does without a reason.
func ignored(t *testing.T, p podTemplate, check string) bool {
	t.Helper()
	if _, all := p.meta.Annotations["kube-linter.io/ignore-all"]; all {
		t.Errorf("%s ignores every kube-linter check", p.name)
	}
	reason, ok := p.meta.Annotations["ignore-check.kube-linter.io/"+check]
	if ok && strings.TrimSpace(reason) == "" {
		t.Errorf("%s ignores %s without saying why", p.name, check)
	}
	return ok
}

// containerFindings are kube-linter's findings for one container.
func containerFindings(pod *corev1.PodSpec, c *corev1.Container) map[string][]string {
	out := map[string][]string{}
	add := func(check, format string, args ...any) {
		out[check] = append(out[check], fmt.Sprintf(format, args...))
	}
	sc := c.SecurityContext
	if sc == nil {
		sc = &corev1.SecurityContext{}
	}
	psc := pod.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	user, group, nonRoot := psc.RunAsUser, psc.RunAsGroup, psc.RunAsNonRoot
	if sc.RunAsUser != nil {
		user = sc.RunAsUser
	}
	if sc.RunAsGroup != nil {
		group = sc.RunAsGroup
	}
	if sc.RunAsNonRoot != nil {
		nonRoot = sc.RunAsNonRoot
	}
	if group != nil && *group == 0 {
		add("run-as-non-root", "runAsGroup 0")
	}
	switch {
	case user != nil && *user > 0:
	case nonRoot != nil && *nonRoot:
		if user != nil && *user == 0 {
			add("run-as-non-root", "runAsNonRoot with runAsUser 0")
		}
	default:
		add("run-as-non-root", "not set to runAsNonRoot")
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		add("no-read-only-root-fs", "root filesystem not read-only")
	}
	if _, ok := c.Resources.Requests[corev1.ResourceCPU]; !ok {
		add("unset-cpu-requirements", "no CPU request")
	}
	if _, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok {
		add("unset-memory-requirements", "no memory limit")
	}
	privileged := sc.Privileged != nil && *sc.Privileged
	if privileged {
		add("privileged-container", "privileged")
	}
	var added, dropped []corev1.Capability
	if sc.Capabilities != nil {
		added, dropped = sc.Capabilities.Add, sc.Capabilities.Drop
	}
	if (sc.AllowPrivilegeEscalation != nil && *sc.AllowPrivilegeEscalation) || privileged || hasCap(added, "SYS_ADMIN") {
		add("privilege-escalation-container", "may escalate privileges")
	}
	if hasCap(added, "NET_RAW") || !(hasCap(dropped, "NET_RAW") || hasCap(dropped, "ALL")) {
		add("drop-net-raw-capability", "NET_RAW not dropped")
	}
	if latest := regexp.MustCompile(`:latest$|^[^:]*$|/[^:]+$`); latest.MatchString(c.Image) {
		add("latest-tag", "image %q has no tag or the latest tag", c.Image)
	}
	return out
}

func hasCap(caps []corev1.Capability, name corev1.Capability) bool {
	for _, c := range caps {
		if c == name || c == "CAP_"+name {
			return true
		}
	}
	return false
}

// The pod templates of configs/kubernetes pass kube-linter's default
// container checks; the findings that stay (chown-data runs as root;
// daemonset-devices.yaml's ioprobe runs as root in the node's PID
// namespace) are ignored by annotation, with their reasons, and only for
// those containers.
func TestKubeLinterContainerChecks(t *testing.T) {
	for _, p := range podTemplates(t) {
		if p.spec.HostPID && !ignored(t, p, "host-pids") {
			t.Errorf("[host-pids] %s shares the node's PID namespace", p.name)
		}
		var containers []corev1.Container
		containers = append(containers, p.spec.InitContainers...)
		containers = append(containers, p.spec.Containers...)
		for i := range containers {
			c := &containers[i]
			for check, msgs := range containerFindings(&p.spec, c) {
				exempt := false
				for _, name := range exemptions[check] {
					exempt = exempt || name == c.Name
				}
				if exempt && ignored(t, p, check) {
					continue
				}
				t.Errorf("[%s] %s: container %q: %s", check, p.name, c.Name, strings.Join(msgs, "; "))
			}
		}
	}
}

// The checks find what they are meant to: the chown-data container as it
// was shipped (root, no resources, a writable root filesystem) and an
// image on the latest tag.
func TestKubeLinterChecksFind(t *testing.T) {
	root, no := int64(0), false
	pod := &corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr(true), RunAsUser: ptr(int64(65532))}}
	c := &corev1.Container{Name: "chown-data", Image: "ghcr.io/ioprobe/ioprobe:latest", SecurityContext: &corev1.SecurityContext{
		RunAsNonRoot: &no, RunAsUser: &root, AllowPrivilegeEscalation: &no,
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"CHOWN"}},
	}}
	var checks []string
	for check := range containerFindings(pod, c) {
		checks = append(checks, check)
	}
	require.ElementsMatch(t, []string{"run-as-non-root", "no-read-only-root-fs", "unset-cpu-requirements",
		"unset-memory-requirements", "latest-tag"}, checks)
}

func ptr[T any](v T) *T { return &v }
