package blkid

import (
	"os"
	"regexp"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// docs/signatures.md lists every type ioprobe recognises; this keeps it and
// the registry in step.
func TestSignaturesDocMatchesProbes(t *testing.T) {
	doc, err := os.ReadFile("../../docs/signatures.md")
	require.NoError(t, err)
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\| ([a-z_]+) \\| ([^|]+) \\| ([^|]+) \\|$")
	documented := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]+" ("+m[2]+")"] = true
	}
	registered := map[string]bool{}
	for _, p := range Probes() {
		registered[p.Type+" ("+string(p.Usage)+")"] = true
	}
	require.Equal(t, keys(registered), keys(documented), "docs/signatures.md and Probes() list different types")
}

func keys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
