package report

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// TestCSVCell: a cell a spreadsheet would take as a formula is text; a
// number, negative or signed, stays a number.
func TestCSVCell(t *testing.T) {
	for in, want := range map[string]string{
		"":                     "",
		"db-1":                 "db-1",
		"=1+2":                 "'=1+2",
		`=HYPERLINK("x","y")`:  `'=HYPERLINK("x","y")`,
		"+cmd|' /C calc'!A0":   "'+cmd|' /C calc'!A0",
		"-2+3":                 "'-2+3",
		"@SUM(A1)":             "'@SUM(A1)",
		"\t=1":                 "'\t=1",
		"\r=1":                 "'\r=1",
		"-1.5":                 "-1.5",
		"-1500000000":          "-1500000000",
		"+3":                   "+3",
		"-.5":                  "-.5",
		"1e-05":                "1e-05",
		"-2.5E+10":             "-2.5E+10",
		"-":                    "'-",
		"-Inf":                 "'-Inf",
		"4096:1;8192:1":        "4096:1;8192:1",
		"/dev/sdb;=evil":       "/dev/sdb;=evil",
		"2026-11-29T04:41:55Z": "2026-11-29T04:41:55Z",
	} {
		require.Equal(t, want, csvCell(in), "%q", in)
	}
}

// TestHTMLEscapesDocuments: the HTML report (html/template, and the SVG
// charts' own escaping) writes a name that holds markup as text.
func TestHTMLEscapesDocuments(t *testing.T) {
	r := mixedResult()
	r.Host.Hostname = `<script>alert(1)</script>`
	r.Workload.Name = `"><img src=x onerror=alert(2)>`
	var b strings.Builder
	require.NoError(t, WriteHTML(&b, &result.Suite{Schema: result.SuiteSchema, Results: []*result.Result{r}}))
	require.NotContains(t, b.String(), "<script>alert")
	require.NotContains(t, b.String(), "<img src=x")
	require.Contains(t, b.String(), "&lt;script&gt;alert(1)&lt;/script&gt;")
}
