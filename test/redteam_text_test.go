package test

import (
	"encoding/csv"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRedteamCSVAndHTMLEscapeControls: CSV and HTML are text outputs too
// (`report -o csv` on a terminal, `less report.html`): a document's
// hostname, kernel, CPU model, workload name, status, message, notes and
// target path with escape sequences and bidi overrides are written
// escaped in both, as in the text tables (but for newlines in HTML,
// where they are layout); the CSV's cell is the escaped text and a
// formula start is still neutralised.
func TestRedteamCSVAndHTMLEscapeControls(t *testing.T) {
	dir := t.TempDir()
	good := shortRead(t, dir)
	bad := filepath.Join(dir, "bad.json")
	editResult(t, good, bad, func(doc map[string]any) {
		host := doc["host"].(map[string]any)
		host["hostname"], host["kernel"], host["cpu_model"] = hostile, hostile, "="+hostile
		doc["workload"].(map[string]any)["name"] = hostile
		doc["status"], doc["message"], doc["notes"] = hostile, hostile, []string{hostile}
		doc["targets"].([]any)[0].(map[string]any)["path"] = hostile
		doc["run_id"] = "hostile-run"
	})
	for _, args := range [][]string{{"report", "-o", "csv", bad}, {"report", "-o", "csv", "a.json", bad}, {"report", "-o", "html", "a.json", bad}} {
		o := ioprobe(t, dir, args...)
		require.Equal(t, 0, o.code, "%v: %s", args, o.stderr)
		if args[2] == "html" {
			// A newline is layout in HTML (a browser shows a space), and
			// the page's own are kept; every other control is escaped.
			requireNoRawControls(t, strings.Join(args, " "), strings.ReplaceAll(o.stdout, "\nFORGED", "\n(forged)"))
		} else {
			requireNoRawControls(t, strings.Join(args, " "), o.stdout)
		}
		require.Contains(t, o.stdout, `db-1\x1b]2;pwned\a`, "%v: shown escaped", args)
	}
	o := ioprobe(t, dir, "report", "-o", "csv", bad)
	rows, err := csv.NewReader(strings.NewReader(o.stdout)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 2)
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	require.Equal(t, hostileShown, rows[1][col["hostname"]])
	require.Equal(t, "'="+hostileShown, rows[1][col["cpu_model"]], "a formula start is still neutralised")
}
