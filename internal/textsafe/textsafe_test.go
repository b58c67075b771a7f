package textsafe

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"db-1.example.com":         "db-1.example.com",
		"Ünïcödé µs – …":           "Ünïcödé µs – …",
		"a\x1b]0;pwned\x07b":       `a\x1b]0;pwned\ab`,
		"ok\rFORGED":               `ok\rFORGED`,
		"two\nlines\tand tab":      `two\nlines\tand tab`,
		"\x1b[2J\x1b[H":            `\x1b[2J\x1b[H`,
		"c1\u0085\u009b31m":        `c1\u0085\u009b31m`,
		"evil\u202egnp.exe":        `evil\u202egnp.exe`,
		"iso\u2066x\u2069 \u200fy": `iso\u2066x\u2069 \u200fy`,
		"zw\u200bj\ufeff":          `zw\u200bj\ufeff`,
		"bad\xff\xfebytes":         `bad\xff\xfebytes`,
		"del\x7f nul\x00":          `del\x7f nul\x00`,
		"nbsp\u00a0ls\u2028":       `nbsp\u00a0ls\u2028`,
		"stand-in \ufffd":          `stand-in \ufffd`,
		"tag\U000e0041":            `tag\U000e0041`,
		`back\slash "quoted"`:      `back\slash "quoted"`,
	} {
		got := Escape(in)
		require.Equal(t, want, got, "%q", in)
		require.Equal(t, got, Escape(got), "escaping twice changes nothing")
		for _, r := range got {
			require.True(t, Safe(r), "%q holds %U", got, r)
		}
	}
}

func TestLine(t *testing.T) {
	require.Equal(t, `a b\x1bc\n…`, Line("a\tb\x1bc\nlonger", 6))
	require.Equal(t, `x\xff`, Line("x\xff", 10))
}

// TestWriter: the layout of a text (newlines, tabs) passes, everything
// else that is not Safe is escaped; the writer reports the bytes it was
// given as written.
func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	require.Same(t, w, NewWriter(w), "not wrapped twice")
	for _, s := range []string{"host\tdb-1\n", "name \x1b[31mred\x1b[0m\r\n", "\u202eevil\n", "plain\n"} {
		n, err := w.Write([]byte(s))
		require.NoError(t, err)
		require.Equal(t, len(s), n)
	}
	require.Equal(t, "host\tdb-1\nname \\x1b[31mred\\x1b[0m\\r\n\\u202eevil\nplain\n", b.String())
}

type state string

func TestSprintf(t *testing.T) {
	err := errorString("refused\r\nFORGED")
	require.Equal(t, `host db\x1b[2J is failed: refused\r\nFORGED (3 tries, 1.5s)`,
		Sprintf("host %s is %s: %v (%d tries, %v)", "db\x1b[2J", state("failed"), err, 3, 1500*time.Millisecond))
	require.Equal(t, `"a\\a"`, Sprintf("%q", "a\a"), "%q quotes the escaped text: use %s")
}

type errorString string

func (e errorString) Error() string { return string(e) }

// TestCell: a CSV cell is escaped as Escape escapes, but for its tabs.
func TestCell(t *testing.T) {
	require.Equal(t, "db-1", Cell("db-1"))
	require.Equal(t, "\tEPYC", Cell("\tEPYC"))
	require.Equal(t, `a\x1b[2J\r\nb`+"\t"+`\u202ec`, Cell("a\x1b[2J\r\nb\t\u202ec"))
	require.Equal(t, Cell("a\x1bb"), Cell(Cell("a\x1bb")), "escaping twice is escaping once")
}
