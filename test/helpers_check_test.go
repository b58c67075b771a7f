package test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/check"
)

// checkDoc decodes `check etcd --output json`, strictly.
func checkDoc(t *testing.T, s string) check.Report {
	t.Helper()
	var r check.Report
	decodeStrict(t, []byte(s), &r)
	require.Equal(t, check.Schema, r.Schema)
	return r
}

// entries lists a directory's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}
