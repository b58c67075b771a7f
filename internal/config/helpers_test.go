package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// eachFile runs test on every dir/*.yaml with its expected text from want
// (keyed by the file's name without .yaml): every file needs an entry, and
// every entry a file.
func eachFile(t *testing.T, dir string, want map[string]string, test func(t *testing.T, f, name, want string)) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	require.NoError(t, err)
	require.Len(t, files, len(want), "every file in %s needs its expected text here, and every text a file", dir)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			w, ok := want[name]
			require.True(t, ok, "no expected text for %s", f)
			test(t, f, name, w)
		})
	}
}
