package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Comparison is what `ioprobe compare` writes: the comparison and the two
// sides it was made from.
type Comparison struct {
	*result.Comparison
	Base, Other CompareSide
}

// Output is one output format (--output NAME): a writer for each document
// it can write, nil where it cannot. Which formats a command accepts
// follows from which writers exist, so adding a format is one entry in
// Outputs and its writer.
type Output struct {
	Name string
	Help string // a few words for --help ("" for none)
	// Run is one result (`ioprobe run`).
	Run func(io.Writer, *result.Result) error
	// Suite is a suite's results (`ioprobe suite`).
	Suite func(io.Writer, *result.Suite) error
	// Report is the results of several files, maybe merged (`ioprobe report`).
	Report func(io.Writer, *result.Suite) error
	// Compare is a comparison of two files (`ioprobe compare`).
	Compare func(io.Writer, *Comparison) error
	// Fleet is one run on several hosts (`ioprobe fleet run`).
	Fleet func(io.Writer, *result.Fleet) error
}

// Outputs is the table of output formats, in the order --help lists them.
func Outputs() []Output {
	csvOf := func(w io.Writer, s *result.Suite) error { return WriteCSV(w, s.Results, true) }
	fioOf := func(w io.Writer, s *result.Suite) error { return WriteFioJSON(w, s.Results) }
	return []Output{
		{Name: "text", Help: "tables", Run: WriteText, Suite: WriteSuiteText, Report: WriteReportText,
			Compare: func(w io.Writer, c *Comparison) error { return WriteCompareText(w, c.Comparison, c.Base, c.Other) },
			Fleet:   WriteFleetText},
		{Name: "json",
			Run:   func(w io.Writer, r *result.Result) error { return WriteJSON(w, r) },
			Suite: func(w io.Writer, s *result.Suite) error { return WriteJSON(w, s) }, Report: writeReportJSON,
			Compare: func(w io.Writer, c *Comparison) error { return WriteJSON(w, c.Comparison) },
			Fleet:   func(w io.Writer, f *result.Fleet) error { return WriteJSON(w, f) }},
		{Name: "csv", Help: "a row per result",
			Run: func(w io.Writer, r *result.Result) error { return WriteCSV(w, []*result.Result{r}, true) }, Suite: csvOf, Report: csvOf,
			Fleet: func(w io.Writer, f *result.Fleet) error { return WriteCSV(w, expandHosts(fleetSuite(f).Results), true) }},
		{Name: "html", Help: "charts", Suite: WriteHTML, Report: WriteHTML,
			Fleet: func(w io.Writer, f *result.Fleet) error { return WriteHTML(w, fleetSuite(f)) }},
		{Name: "fio-json", Help: "fio 3 json+, a job per result",
			Run:   func(w io.Writer, r *result.Result) error { return WriteFioJSON(w, []*result.Result{r}) },
			Suite: fioOf, Report: fioOf},
	}
}

// ForRun picks the writer of one result.
func ForRun(o Output) func(io.Writer, *result.Result) error { return o.Run }

// ForSuite picks the writer of a suite.
func ForSuite(o Output) func(io.Writer, *result.Suite) error { return o.Suite }

// ForReport picks the writer of several files' results.
func ForReport(o Output) func(io.Writer, *result.Suite) error { return o.Report }

// ForFleet picks the writer of a fleet run.
func ForFleet(o Output) func(io.Writer, *result.Fleet) error { return o.Fleet }

// ForCompare picks the writer of a comparison.
func ForCompare(o Output) func(io.Writer, *Comparison) error { return o.Compare }

// Writer is the writer of format name for the document that of picks; an
// unknown format, or one that cannot write that document, is a
// *workload.FieldError that lists those that can.
func Writer[T any](name string, of func(Output) func(io.Writer, T) error) (func(io.Writer, T) error, error) {
	var names []string
	for _, o := range Outputs() {
		if w := of(o); w != nil {
			if o.Name == name {
				return w, nil
			}
			names = append(names, o.Name)
		}
	}
	return nil, &workload.FieldError{Field: "--output", Value: name, Reason: "must be one of " + oneOf(names)}
}

// OutputUsage is the --output flag's help for the document that of picks.
func OutputUsage[T any](of func(Output) func(io.Writer, T) error) string {
	var names []string
	for _, o := range Outputs() {
		if of(o) == nil {
			continue
		}
		if o.Help != "" {
			names = append(names, fmt.Sprintf("%s (%s)", o.Name, o.Help))
		} else {
			names = append(names, o.Name)
		}
	}
	return "output format: " + oneOf(names)
}

// oneOf joins "a, b or c".
func oneOf(v []string) string {
	if len(v) < 2 {
		return strings.Join(v, "")
	}
	return strings.Join(v[:len(v)-1], ", ") + " or " + v[len(v)-1]
}

// writeReportJSON writes one plain result as itself, anything else as a
// suite document.
func writeReportJSON(w io.Writer, doc *result.Suite) error {
	if len(doc.Results) == 1 && doc.Results[0].Point == nil {
		return WriteJSON(w, doc.Results[0])
	}
	return WriteJSON(w, doc)
}

// WriteReportText prints the suites' tables, then the summary of each
// plain run.
func WriteReportText(w io.Writer, doc *result.Suite) error {
	var points, plain []*result.Result
	for _, r := range doc.Results {
		if r.Point != nil {
			points = append(points, r)
		} else {
			plain = append(plain, r)
		}
	}
	if len(points) > 0 {
		s := *doc
		s.Results = points
		if err := WriteSuiteText(w, &s); err != nil {
			return err
		}
	}
	for i, r := range plain {
		if i > 0 || len(points) > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		if len(r.Hosts) > 0 {
			if err := writeHostsTable(w, r.Hosts, r); err != nil {
				return err
			}
			if _, err := fmt.Fprintf(w, "\n%s:\n", AllHosts); err != nil {
				return err
			}
		}
		if err := WriteText(w, r); err != nil {
			return err
		}
	}
	return nil
}
