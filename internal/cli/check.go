package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/ioprobe/ioprobe/internal/check"
	"github.com/ioprobe/ioprobe/internal/report"
	"github.com/ioprobe/ioprobe/internal/suiterun"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// CheckSchema names the JSON document of `ioprobe check NAME --output json`.
const CheckSchema = "ioprobe.check/v1"

// checkOptions are the flags of `ioprobe check NAME`.
type checkOptions struct {
	target           string
	duration         time.Duration
	output           string
	allowDestructive bool
}

func newCheckCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "check NAME",
		Short: "Judge a storage against a published threshold (exit 0 pass, 3 fail)",
		Long: `ioprobe check runs one named workload that answers one question about a
storage, and judges the result against the threshold its source publishes.
Exit status: 0 the storage passes, 3 it was measured fine but fails the
threshold, 1 I/O failed, 2 bad input, 130 interrupted.`,
		Args: cobra.ArbitraryArgs, // an unknown name is bad input (exit 2), said below
		// "check foo --target X" names the unknown check, not the flag
		// that only the known checks have.
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown check %q (known: %s)", args[0], checkNames())
			}
			return usagef("name a check: %s (see 'ioprobe check --help')", checkNames())
		},
	}
	for _, c := range check.All() {
		cmd.AddCommand(newCheckSubcommand(g, c))
	}
	return cmd
}

func checkNames() string {
	s := ""
	for i, c := range check.All() {
		if i > 0 {
			s += ", "
		}
		s += c.Name
	}
	return s
}

func newCheckSubcommand(g *globalOptions, c check.Check) *cobra.Command {
	o := &checkOptions{}
	cmd := &cobra.Command{
		Use:   c.Name + " --target PATH",
		Short: c.Short,
		Long:  c.Short + "\n\nWorkload and threshold: " + c.Source + ".",
		Example: "  ioprobe check " + c.Name + " --target /var/lib/etcd     # a directory: a file is created in it and removed after\n" +
			"  ioprobe check " + c.Name + " --target /data/probe.dat --output json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCheck(cmd.Context(), g, c, o)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.target, "target", "", "a directory on the storage to judge (a file is created in it and removed after), or a file or device")
	fs.DurationVar(&o.duration, "duration", c.DefaultDuration, "measured run time (long enough for a stable 99th percentile)")
	fs.StringVarP(&o.output, "output", "o", "text", "text (the run's report and the verdict) or json ("+CheckSchema+")")
	fs.BoolVar(&o.allowDestructive, "allow-destructive", false, "allow writes to a block device or an existing file that ioprobe did not create")
	return cmd
}

// checkDocument is the JSON output: the verdict and the run behind it.
type checkDocument struct {
	Schema  string         `json:"schema"`
	Verdict check.Verdict  `json:"verdict"`
	Result  *result.Result `json:"result"`
}

func runCheck(ctx context.Context, g *globalOptions, c check.Check, o *checkOptions) error {
	if o.output != "text" && o.output != "json" {
		return usagef("--output %q: want text or json", o.output)
	}
	if o.target == "" {
		return usagef("--target is required: a directory (or file) on the storage to judge")
	}
	spec := c.Spec(o.duration)
	spec.Ramp = 0
	if err := spec.Validate(); err != nil {
		return err
	}
	path, temporary := o.target, false
	if st, err := os.Stat(o.target); err == nil && st.IsDir() {
		path, temporary = filepath.Join(o.target, "ioprobe-check-"+c.Name+".dat"), true
	}
	var pr *progress
	if g.stderrTTY {
		pr = newProgress(g.stderr)
		defer pr.clear()
	}
	settings := suiterun.Settings{AllowDestructive: o.allowDestructive, MaxErrors: 1, Interval: time.Second, Engines: g.engines}
	res, err := measure(ctx, settings.Plan(suiterun.Unit{Point: workload.SuitePoint{Specs: []workload.Spec{spec}}, Targets: []string{path}}), pr)
	if temporary && res != nil && len(res.Targets) == 1 && res.Targets[0].Created {
		_ = os.Remove(path) // ours: made for this check
	}
	if err != nil {
		if ctx.Err() != nil {
			return &exitError{code: ExitInterrupted, err: errors.New("interrupted while preparing")}
		}
		return err
	}
	v := c.Judge(res)
	if o.output == "json" {
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(checkDocument{Schema: CheckSchema, Verdict: v, Result: res}); err != nil {
			return err
		}
	} else {
		if err := report.WriteText(g.stdout, res); err != nil {
			return err
		}
		fmt.Fprintf(g.stdout, "\nCheck     %s: %s\n", c.Name, v.Reason)
	}
	switch {
	case ctx.Err() != nil:
		return &exitError{code: ExitInterrupted, err: errors.New("interrupted: the result above is partial, no verdict")}
	case res.Status == result.StatusErrors:
		return &exitError{code: ExitIOErrors, err: errors.New(res.Message)}
	case !v.Pass:
		return &exitError{code: ExitCheckFailed, err: fmt.Errorf("check %s failed: %s", c.Name, v.Reason)}
	}
	return nil
}
