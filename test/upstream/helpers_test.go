package upstream

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
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
