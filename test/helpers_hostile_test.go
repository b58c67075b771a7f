package test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// editResult reads a result file as JSON, lets change edit it and writes
// it to path.
func editResult(t *testing.T, data []byte, path string, change func(doc map[string]any)) {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	change(doc)
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, out, 0o600))
}

// requireNoRawControls fails when s holds what a terminal acts on: C0
// controls but newline and tab, DEL, C1 controls, bidi marks, overrides
// and isolates, or bytes that are not UTF-8; and when a line of s was
// forged (starts with FORGED).
func requireNoRawControls(t *testing.T, what, s string, allow ...rune) {
	t.Helper()
	require.True(t, utf8.ValidString(s), "%s: not UTF-8", what)
	for i, r := range s {
		bad := r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f ||
			r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
		if bad && !strings.ContainsRune(string(allow), r) {
			t.Fatalf("%s: raw %U at byte %d: %q", what, r, i, s[max(0, i-40):min(len(s), i+40)])
		}
	}
	require.NotRegexp(t, `(?m)^FORGED`, s, "%s: a forged line", what)
}
