package test

import (
	"go/ast"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnlyThisPackageHasPrometheusTests: make test skips the tests named
// prometheusTestPrefix… in every package (go test -skip) and runs them
// apart in this one only (scripts/test.sh): one elsewhere would never run.
func TestOnlyThisPackageHasPrometheusTests(t *testing.T) {
	found := 0
	for _, f := range testCode(t) {
		for _, d := range f.file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, prometheusTestPrefix) {
				continue
			}
			if filepath.Dir(f.path) != "../test" {
				t.Errorf("%s: %s: make test runs the tests named %s… of ./test only; rename it", f.path, fn.Name.Name, prometheusTestPrefix)
				continue
			}
			found++
		}
	}
	if found == 0 {
		t.Errorf("no test here is named %s…: is scripts/test.sh's Prometheus part still needed?", prometheusTestPrefix)
	}
}
