package cli

import (
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ioprobe/ioprobe/internal/report"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// compareOptions are the flags of `ioprobe compare`.
type compareOptions struct {
	output string
	out    string
}

// AddFlags registers the flags.
func (o *compareOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.output, "output", "o", "text", report.OutputUsage(report.ForCompare))
	fs.StringVar(&o.out, "out", "", "write the output to this file instead of stdout")
}

func newCompareCommand(g *globalOptions) *cobra.Command {
	o := &compareOptions{}
	cmd := &cobra.Command{
		Use:   "compare BASE.json OTHER.json",
		Short: "Relative difference of two result or suite files, point by point",
		Long: `Pairs the points of two files (suite point names; for files that each
measured several targets, the target too) and prints, per point, how OTHER
differs from BASE as the esg report presents it: "+13% IOPS, −4% p99
latency, +9% CPU per I/O".

A difference within the measured run-to-run spread is marked as noise (≈):
the spread is that of the runs of --repeat when there were several, else
that of the run's 1-second intervals (CPU per I/O, sampled only at the ends
of a run, then varies as IOPS does). A difference is noise when it lies
within 2 × √(cv_base² + cv_other²), cv being each side's standard deviation
÷ mean. See docs/suites.md.`,
		Example: `  ioprobe compare lsi.json buslogic.json
  ioprobe compare before.json after.json --output json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usagef("compare: name two files, BASE and OTHER (see 'ioprobe compare --help')")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompare(g, o, args[0], args[1])
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// runCompare is `ioprobe compare`.
func runCompare(g *globalOptions, o *compareOptions, base, other string) error {
	write, err := report.Writer(o.output, report.ForCompare)
	if err != nil {
		return err
	}
	if err := checkOut(o.out, inUse("an input of the comparison", base, other)...); err != nil {
		return err
	}
	var budget result.DecodeBudget // both sides share the documents' bounds
	b, err := loadWithin([]string{base}, &budget)
	if err != nil {
		return err
	}
	ot, err := loadWithin([]string{other}, &budget)
	if err != nil {
		return err
	}
	c, err := result.Compare(b.doc.Results, ot.doc.Results)
	if err != nil {
		return usagef("compare: %v", err)
	}
	doc := &report.Comparison{Comparison: c, Base: report.CompareSide{File: base, Results: b.doc.Results},
		Other: report.CompareSide{File: other, Results: ot.doc.Results}}
	return writeOut(g, o.out, func(w io.Writer) error { return write(w, doc) })
}
