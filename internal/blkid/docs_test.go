package blkid

import (
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
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
	qemuDriver := regexp.MustCompile(`^qemu block/[a-z0-9]+\.c$`)
	images := map[string]bool{}
	for _, p := range imageProbes() {
		images[p.Type] = true
	}
	recent := map[string]bool{}
	for _, m := range docRow.FindAllStringSubmatch(string(doc), -1) {
		if images[m[1]] {
			// A disk image: no libblkid release knows it; qemu's driver probes it.
			require.Equal(t, "not in libblkid", m[3], "%s: a disk image's Since column", m[1])
			require.Regexp(t, qemuDriver, m[6], "%s: no qemu block driver", m[1])
			continue
		}
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

// backupRow is one row of docs/signatures.md's "Backup copies" table:
// format, its types, where ioprobe looks, the program that reads the
// copies, and where the places come from.
var backupRow = regexp.MustCompile("(?m)^\\| ([^|`]+) \\| ((?:`[^`]+` ?)+) \\| ([^|]+) \\| ([^|]+) \\| ([^|]+) \\|$")

// Every backup copy ioprobe searches for is documented with the program
// that reads it, and nothing else is.
func TestSignaturesDocBackups(t *testing.T) {
	doc, err := os.ReadFile("../../docs/signatures.md")
	require.NoError(t, err)
	rows := map[string][]string{}
	for _, m := range backupRow.FindAllStringSubmatch(string(doc), -1) {
		rows[m[1]] = m
	}
	registered := map[string]bool{}
	for _, b := range Backups() {
		registered[b.Name] = true
		m, ok := rows[b.Name]
		require.True(t, ok, "docs/signatures.md has no Backup copies row for %s", b.Name)
		var types []string
		for _, f := range strings.Fields(m[2]) {
			types = append(types, strings.Trim(f, "`"))
		}
		require.ElementsMatch(t, b.Types, types, "%s: the types documented", b.Name)
		require.Contains(t, m[4], "`"+b.Tool, "%s: the program that reads it", b.Name)
		require.NotEmpty(t, strings.TrimSpace(m[5]), "%s: where the places come from", b.Name)
		probed := map[string]bool{}
		for _, p := range Probes() {
			probed[p.Type] = true
		}
		for _, typ := range b.Types {
			require.True(t, probed[typ], "%s: %s is no registered type", b.Name, typ)
		}
	}
	documented := map[string]bool{}
	for name := range rows {
		documented[name] = true
	}
	require.Equal(t, keys(registered), keys(documented), "the Backup copies table and Backups() list different formats")
}

// The partition starts probed are the ones the doc lists.
func TestSignaturesDocPartitionStarts(t *testing.T) {
	doc, err := os.ReadFile("../../docs/signatures.md")
	require.NoError(t, err)
	var starts []string
	for _, s := range PartitionStarts {
		starts = append(starts, strconv.FormatInt(s, 10))
	}
	require.Contains(t, string(doc), "\nStarts probed (bytes): "+strings.Join(starts, ", ")+".\n")
}

func keys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
