package test

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRedteamHugeFiguresNeverWrap: a document's counts may be any
// uint64 and its seconds any float64; converted to int64 they wrapped
// (2^64-1 bytes were printed as -9223372036854775808 B, 1e300 seconds as
// a negative fio-json elapsed). The text says 16 EiB, fio-json's figures
// saturate, and nothing is negative. A negative ramp-up is refused.
func TestRedteamHugeFiguresNeverWrap(t *testing.T) {
	dir := t.TempDir()
	good := shortRead(t, dir)
	huge := filepath.Join(dir, "huge.json")
	editResult(t, good, huge, func(doc map[string]any) {
		s := doc["summary"].(map[string]any)
		s["read_bytes"], s["bytes"] = json.Number("18446744073709551615"), json.Number("18446744073709551615")
		s["elapsed_seconds"] = 1e300
	})
	o := ioprobe(t, dir, "report", huge)
	require.Equal(t, 0, o.code, o.stderr)
	require.Regexp(t, `(?m)^bytes +16 EiB$`, o.stdout)
	require.NotContains(t, o.stdout, "-9223372036854775808")
	o = ioprobe(t, dir, "report", "-o", "fio-json", huge)
	require.Equal(t, 0, o.code, o.stderr)
	for _, m := range regexp.MustCompile(`"(elapsed|runtime|bw_bytes|io_bytes)": (-?\d+)`).FindAllStringSubmatch(o.stdout, -1) {
		require.False(t, strings.HasPrefix(m[2], "-"), "fio-json %s is %s", m[1], m[2])
	}

	neg := filepath.Join(dir, "neg.json")
	editResult(t, good, neg, func(doc map[string]any) { doc["workload"].(map[string]any)["ramp_seconds"] = -5 })
	o = ioprobe(t, dir, "report", neg)
	require.Equal(t, 2, o.code, o.stderr)
	require.Equal(t, "ioprobe: "+neg+": bad ioprobe.result/v1 document: the result does not add up: workload.ramp_seconds: is -5: a time, rate or count is a finite number, not negative\n", o.stderr)
}
