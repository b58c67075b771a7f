package report

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

func accepted[T any](of func(Output) func(io.Writer, T) error) []string {
	var out []string
	for _, o := range Outputs() {
		if _, err := Writer(o.Name, of); err == nil {
			out = append(out, o.Name)
		}
	}
	return out
}

// TestOutputsPerCommand: which formats each command accepts follows from
// which writers exist, and every refusal says the same thing the same way.
func TestOutputsPerCommand(t *testing.T) {
	require.Equal(t, []string{"text", "json", "csv", "fio-json"}, accepted(ForRun))
	require.Equal(t, []string{"text", "json", "csv", "html", "fio-json"}, accepted(ForSuite))
	require.Equal(t, []string{"text", "json", "csv", "html", "fio-json"}, accepted(ForReport))
	require.Equal(t, []string{"text", "json"}, accepted(ForCompare))

	_, err := Writer("html", ForRun)
	var fe *workload.FieldError
	require.ErrorAs(t, err, &fe)
	require.EqualError(t, err, "--output html: must be one of text, json, csv or fio-json")
	_, err = Writer("xml", ForCompare)
	require.EqualError(t, err, "--output xml: must be one of text or json")
	require.Equal(t, "output format: text (tables), json, csv (a row per result) or fio-json (fio 3 json+, a job per result)", OutputUsage(ForRun))
}

// TestReportJSONKeepsAPlainRunAsItself: one plain result stays a result
// document; anything else is a suite document.
func TestReportJSONKeepsAPlainRunAsItself(t *testing.T) {
	write, err := Writer("json", ForReport)
	require.NoError(t, err)
	r := &result.Result{Schema: result.Schema}
	var b bytes.Buffer
	require.NoError(t, write(&b, &result.Suite{Schema: result.SuiteSchema, Results: []*result.Result{r}}))
	require.Contains(t, b.String(), `"schema": "`+result.Schema+`"`)
	require.NotContains(t, b.String(), result.SuiteSchema)
	b.Reset()
	r.Point = &result.Point{Name: "p"}
	require.NoError(t, write(&b, &result.Suite{Schema: result.SuiteSchema, Results: []*result.Result{r}}))
	require.Contains(t, b.String(), `"schema": "`+result.SuiteSchema+`"`)
}
