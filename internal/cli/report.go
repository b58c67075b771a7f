package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ioprobe/ioprobe/internal/report"
	"github.com/ioprobe/ioprobe/internal/safefile"
	"github.com/ioprobe/ioprobe/internal/textsafe"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// reportOptions are the flags of `ioprobe report`.
type reportOptions struct {
	merge  bool
	output string
	out    string
}

// AddFlags registers the flags.
func (o *reportOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.merge, "merge", false, "merge the results of the same point from many hosts: histograms merged, counts exact, rates summed over runs that overlapped in time")
	fs.StringVarP(&o.output, "output", "o", "text", report.OutputUsage(report.ForReport))
	fs.StringVar(&o.out, "out", "", "write the output to this file instead of stdout")
}

func newReportCommand(g *globalOptions) *cobra.Command {
	o := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report FILE.json ... [flags]",
		Short: "Tables, charts or a merge of saved result and suite files",
		Long: `Reads result files ('ioprobe run --output json') and suite files ('ioprobe
suite --output json') and prints the suites' tables and the runs' summaries
(text), or writes one self-contained HTML page with the reports' figures
drawn from the results (html): throughput and response time by data size,
IOPS and CPU tables, IOPS and MB/s per %CPU, scaling over workers, targets
side by side and each run's latency distribution.

--merge combines the same point measured on many hosts at once (a suite run
on every node against shared storage): counts are exact, rates are summed
over the runs that overlapped in time, percentiles come from the merged
histograms. Runs that did not overlap (one host's runs one after another)
were not concurrent load: their rates are averaged over time, not summed,
and the report says so. It says how many runs and hosts it merged. Points pair by suite point and, when a file
measured several targets, by target.`,
		Example: `  ioprobe report characterize.json --output html --out characterize.html
  ioprobe report --merge node1.json node2.json node3.json
  ioprobe report --merge node*.json --output json --out cluster.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("report: name at least one result or suite file (see 'ioprobe report --help')")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(g, o, args)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// loaded is the results of several files, as one suite document.
type loaded struct {
	doc   *result.Suite
	files map[*result.Result]string
	// named counts how often each file was named.
	named map[string]int
	// multiTarget says that some file measured several targets in turn.
	multiTarget bool
}

// load decodes every file. A file that cannot be read or is not an
// ioprobe document is bad input.
func load(files []string) (*loaded, error) { return loadWithin(files, &result.DecodeBudget{}) }

// loadWithin is load counting the files in budget, which files loaded
// apart (compare's two sides) share.
func loadWithin(files []string, budget *result.DecodeBudget) (*loaded, error) {
	l := &loaded{doc: &result.Suite{Schema: result.SuiteSchema}, files: map[*result.Result]string{}, named: map[string]int{}}
	var names, sources, versions []string
	for _, f := range files {
		l.named[f]++
		data, err := safefile.Result.Read(f)
		if err != nil {
			return nil, err
		}
		suite, rs, err := result.DecodeWithin(bytes.NewReader(data), budget)
		if err != nil {
			return nil, usagef("%s: %v", f, err)
		}
		if len(rs) == 0 {
			return nil, usagef("%s holds no results", f)
		}
		sides := map[string]bool{}
		for i, r := range rs {
			if r == nil {
				return nil, usagef("%s: result %d is null", f, i)
			}
			l.files[r] = f
			if p := result.PointOf(r); p.Target != "" {
				sides[p.Target] = true
			}
			if r.Point != nil && r.Point.Suite != "" {
				suite = r.Point.Suite
			}
			versions = append(versions, r.Version)
			if l.doc.StartedAt.IsZero() || (!r.StartedAt.IsZero() && r.StartedAt.Before(l.doc.StartedAt)) {
				l.doc.StartedAt = r.StartedAt
			}
		}
		l.multiTarget = l.multiTarget || len(sides) > 1
		names = append(names, suite)
		l.doc.Results = append(l.doc.Results, rs...)
		if s, fl, err := sourceOf(data); err == nil {
			if s != "" {
				sources = append(sources, s)
			}
			l.doc.Fleet = addFleet(l.doc.Fleet, fl)
		}
	}
	l.doc.Suite = joinSet(names)
	l.doc.Source = joinSet(sources)
	l.doc.Version = joinSet(versions)
	return l, nil
}

// sourceOf reads a suite file's source line and, for a fleet suite,
// where it ran (Decode returns only the results).
func sourceOf(data []byte) (string, *result.FleetSuite, error) {
	var s struct {
		Source string             `json:"source"`
		Fleet  *result.FleetSuite `json:"fleet"`
	}
	err := json.Unmarshal(data, &s)
	return s.Source, s.Fleet, err
}

// addFleet joins where fleet suites ran, for a report of several: their
// hosts and failures together.
func addFleet(to, f *result.FleetSuite) *result.FleetSuite {
	if f == nil {
		return to
	}
	if to == nil {
		c := *f
		c.Hosts = slices.Clone(f.Hosts)
		c.FailedHosts = slices.Clone(f.FailedHosts)
		c.Failures = slices.Clone(f.Failures)
		return &c
	}
	to.Target = joinSet([]string{to.Target, f.Target})
	for _, h := range f.Hosts {
		if !slices.Contains(to.Hosts, h) {
			to.Hosts = append(to.Hosts, h)
		}
	}
	for _, h := range f.FailedHosts {
		if !slices.Contains(to.FailedHosts, h) {
			to.FailedHosts = append(to.FailedHosts, h)
		}
	}
	to.Partial = to.Partial || f.Partial
	to.Failures = append(to.Failures, f.Failures...)
	return to
}

// twice names where a merge met the same run twice: the same file given
// twice, or two files (a merged result and one of its inputs).
func (l *loaded) twice(e *result.DuplicateRunError) string {
	a, b := l.files[e.First], l.files[e.Second]
	run := "the run of " + e.Run.String()
	switch {
	case a == b && l.named[a] > 1:
		return fmt.Sprintf("%s is named twice (it holds %s)", a, run)
	case a == b:
		return fmt.Sprintf("%s holds %s twice", a, run)
	}
	return fmt.Sprintf("%s and %s both hold %s", a, b, run)
}

func joinSet(v []string) string {
	var out []string
	for _, s := range v {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, ", ")
}

// runReport is `ioprobe report`.
func runReport(g *globalOptions, o *reportOptions, files []string) error {
	write, err := report.Writer(o.output, report.ForReport)
	if err != nil {
		return err
	}
	if err := checkOut(o.out, inUse("an input of the report", files...)...); err != nil {
		return err
	}
	l, err := load(files)
	if err != nil {
		return err
	}
	doc := l.doc
	if o.merge {
		n := len(doc.Results)
		merged, err := result.MergeByPoint(doc.Results, l.multiTarget)
		var dup *result.DuplicateRunError
		if errors.As(err, &dup) {
			return usagef("--merge: %s: merging would count its I/Os twice", l.twice(dup))
		}
		var sum *result.MergeSumError
		if errors.As(err, &sum) {
			return usagef("--merge: %s does not add up with the others: %v (merging would give false figures)", l.files[sum.Result], sum.Err)
		}
		if err != nil {
			return usagef("--merge: %v", err)
		}
		doc.Results = merged
		runs, apart, hosts := 0, 0, map[string]bool{}
		for _, r := range merged {
			runs += r.Merged.Runs
			if r.Merged.Periods > 1 {
				apart++
			}
			for _, h := range r.Merged.Hosts {
				hosts[h] = true
			}
		}
		fmt.Fprintf(g.stderr, "ioprobe: merged %d %s (%d %s from %d %s) into %d\n", n, plural(n, "result", "results"), runs, plural(runs, "run", "runs"),
			len(hosts), plural(len(hosts), "host", "hosts"), len(merged))
		if apart > 0 {
			fmt.Fprintf(g.stderr, "ioprobe: warning: in %d of the merged results the runs did not overlap in time: not concurrent load, so their rates are averaged over time, not summed\n", apart)
		}
		for _, r := range merged {
			for _, d := range r.Merged.StorageDiffers {
				fmt.Fprint(g.stderr, textsafe.Sprintf("ioprobe: warning: %s: the storage differs between the runs merged: %s\n", result.PointOf(r).Name, d))
			}
		}
	}
	return writeOut(g, o.out, func(w io.Writer) error { return write(w, doc) })
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
