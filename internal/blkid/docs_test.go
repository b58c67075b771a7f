package blkid

import (
	"os"
	"regexp"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/blkid/handmade"
)

// docRow is one row of a docs/signatures.md table: type, usage, the
// util-linux release that introduced it, where ioprobe looks, the format,
// and libblkid's prober.
var docRow = regexp.MustCompile("(?m)^\\| `([^`]+)` \\| ([a-z_]+) \\| ([^|]+) \\| ([^|]+) \\| ([^|]+) \\| ([^|]+) \\|$")

// docs/signatures.md lists every type ioprobe recognises; this keeps it and
// the registry in step.
func TestSignaturesDocMatchesProbes(t *testing.T) {
	doc, err := os.ReadFile("../../docs/signatures.md")
	require.NoError(t, err)
	documented := map[string]bool{}
	for _, m := range docRow.FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]+" ("+m[2]+")"] = true
	}
	registered := map[string]bool{}
	for _, p := range Probes() {
		registered[p.Type+" ("+string(p.Usage)+")"] = true
	}
	require.Equal(t, keys(registered), keys(documented), "docs/signatures.md and Probes() list different types")
}

// Every row names the util-linux release whose libblkid first reported the
// type and the prober that reads it; the types after Debian 12's 2.38 are
// exactly those the hand-built headers mark as recent.
func TestSignaturesDocSinceAndProber(t *testing.T) {
	doc, err := os.ReadFile("../../docs/signatures.md")
	require.NoError(t, err)
	since := regexp.MustCompile(`^2\.(\d+)\b`)
	prober := regexp.MustCompile(`^(superblocks|partitions)/[a-z0-9_]+\.c$`)
	recent := map[string]bool{}
	for _, m := range docRow.FindAllStringSubmatch(string(doc), -1) {
		v := since.FindStringSubmatch(m[3])
		require.NotNil(t, v, "%s: the Since column %q names no util-linux release", m[1], m[3])
		require.Regexp(t, prober, m[6], "%s: no libblkid prober file", m[1])
		if len(v[1]) == 2 && v[1] > "38" {
			recent[m[1]] = true
		}
	}
	made := map[string]bool{}
	for _, h := range handmade.Headers() {
		if h.Since != "" && h.Since > "2.38" && h.Type != "zfs_member" {
			made[h.Type] = true
		}
	}
	require.Equal(t, keys(made), keys(recent), "the types documented as newer than 2.38 and the recent hand-built headers differ")
}

func keys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
