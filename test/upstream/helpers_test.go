package upstream

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// shippedObjects decodes every object of configs/kubernetes but the
// kustomization (kustomize's build file, not an API object).
func shippedObjects(t *testing.T) []kubeObject {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(kubeDir, "*.yaml"))
	require.NoError(t, err)
	dec := strictDecoder(t)
	var out []kubeObject
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		objs, err := decodeFile(t, dec, f)
		require.NoError(t, err, "%s does not decode strictly into the upstream types", f)
		out = append(out, objs...)
	}
	return out
}

// strictDecoder decodes YAML or JSON into the upstream types as an API
// server with strict field validation does (kubectl apply
// --validate=strict): an unknown or duplicated field is an error.
func strictDecoder(t *testing.T) runtime.Decoder {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme, monitoringv1.AddToScheme,
	} {
		require.NoError(t, add(scheme))
	}
	return serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
}

// decodeFile decodes every document of a multi-document YAML file.
func decodeFile(t *testing.T, dec runtime.Decoder, path string) ([]kubeObject, error) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	var out []kubeObject
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		require.NoError(t, err, path)
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj, gvk, err := dec.Decode(doc, nil, nil)
		if err != nil {
			return out, err
		}
		out = append(out, kubeObject{file: filepath.Base(path), obj: obj, gvk: *gvk})
	}
}

func stripComments(doc []byte) []byte {
	return regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAll(doc, nil)
}
