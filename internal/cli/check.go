package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/spf13/cobra"

	"github.com/ioprobe/ioprobe/internal/check"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// checkOptions are the flags of `ioprobe check NAME`.
type checkOptions struct {
	target   string
	duration time.Duration
	output   string
	out      string
	repeat   int
	rate     float64
	backend  bool
	// rateFlag is the flag the rate came from: --rate-iops, or --rate,
	// its old name, which still works and says so.
	rateFlag string
	oldRate  float64
}

// The check's rate flag has run's name for the same idea: at most so many
// I/Os a second (here WAL appends: a write and its fdatasync, which fio's
// rate_iops counts as one with fdatasync=1). --rate was its first name.
const (
	rateFlag    = "rate-iops"
	oldRateFlag = "rate"
)

func newCheckCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "check NAME",
		Short: "Judge a storage against a published threshold (exit 0 pass, 3 fail, 2 inconclusive)",
		Long: `ioprobe check runs one named workload that answers one question about a
storage, and judges the result against the threshold its source publishes.
Exit status: 0 the storage passes, 3 it was measured fine but fails the
threshold, 2 bad input or an inconclusive verdict (too few samples), 1 I/O
failed, 130 interrupted (no verdict).`,
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
		Use:   c.Name + " --target DIR",
		Short: c.Short,
		Long:  c.Short + "\n\n" + c.Long + "\n\nThresholds and workload: " + c.Source + ".",
		Example: "  ioprobe check " + c.Name + " --target /var/lib/etcd              # the directory etcd uses (it must exist)\n" +
			"  ioprobe check " + c.Name + " --target /var/lib/etcd --repeat 3   # three runs: the verdict on all, the spread between them\n" +
			"  ioprobe check " + c.Name + " --target /var/lib/etcd --rate-iops 100   # beside a live etcd: at most 100 appends a second\n" +
			"  ioprobe check " + c.Name + " --target /data --output json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.rateFlag = rateFlag
			if cmd.Flags().Changed(oldRateFlag) {
				if cmd.Flags().Changed(rateFlag) && o.oldRate != o.rate {
					return usagef("--%s %g and --%s %g: give one (--%s is the old name of --%s)", oldRateFlag, o.oldRate, rateFlag, o.rate, oldRateFlag, rateFlag)
				}
				o.rate, o.rateFlag = o.oldRate, oldRateFlag
			}
			return runCheck(cmd.Context(), g, c, o)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.target, "target", "", "an existing directory on the storage to judge: the check's files are made in it and removed after")
	fs.DurationVar(&o.duration, "duration", c.DefaultDuration, "measured time of each run (long enough for 300 samples in every stream)")
	fs.IntVar(&o.repeat, "repeat", 1, "runs, one after another: the verdict rests on all of them, and the report gives each run's figure (the spread)")
	fs.Float64Var(&o.rate, rateFlag, 0, "at most this many WAL appends a second (each a write and its fdatasync: one I/O, as fio's rate_iops counts it with fdatasync=1, and as run --rate-iops caps I/Os); 0: a closed loop, as fast as the storage answers")
	fs.Float64Var(&o.oldRate, oldRateFlag, 0, "the old name of --"+rateFlag)
	_ = fs.MarkHidden(oldRateFlag) // still works, and says so
	fs.BoolVar(&o.backend, "backend", true, "run etcd's backend commits beside the WAL, as etcd does (--backend=false: the WAL alone, as the fio recipe)")
	fs.StringVarP(&o.output, "output", "o", "text", "text (the figures and the verdict) or json ("+check.Schema+")")
	fs.StringVar(&o.out, "out", "", "write the output to this file instead of stdout (a regular file, never a symlink or a device)")
	return cmd
}

func (o *checkOptions) validate(c check.Check) error {
	switch {
	case o.output != "text" && o.output != "json":
		return usagef("--output %q: want text or json", o.output)
	case o.target == "":
		return usagef("--target is required: an existing directory on the storage to judge")
	case o.duration <= 0:
		return usagef("--duration %v: want a positive duration", o.duration)
	case o.repeat < 1 || o.repeat > 100:
		return usagef("--repeat %d: want 1 to 100 runs", o.repeat)
	case math.IsNaN(o.rate) || math.IsInf(o.rate, 0) || o.rate < 0:
		return usagef("--%s %v: want 0 (no limit) or a positive number of appends a second", o.rateName(), o.rate)
	case o.rate > 0 && o.rate*o.duration.Seconds() < check.MinSamples:
		return usagef("--%s %g for --duration %v allows at most %.0f appends, fewer than the %d samples a verdict needs: raise one of them",
			o.rateName(), o.rate, o.duration, math.Floor(o.rate*o.duration.Seconds()), check.MinSamples)
	}
	return nil
}

// rateName is the rate flag as the user gave it.
func (o *checkOptions) rateName() string {
	if o.rateFlag == "" {
		return rateFlag
	}
	return o.rateFlag
}

func runCheck(ctx context.Context, g *globalOptions, c check.Check, o *checkOptions) error {
	if err := o.validate(c); err != nil {
		return err
	}
	if err := checkOut(o.out); err != nil {
		return err
	}
	if o.rateFlag == oldRateFlag {
		// Once the command line is known to be good: a refusal stays
		// one line.
		fmt.Fprintf(g.stderr, "ioprobe: --%s is the old name of --%s, which means the same (as run --rate-iops): it still works, for now\n", oldRateFlag, rateFlag)
	}
	opts := check.Options{Target: o.target, Duration: o.duration, Repeat: o.repeat, Rate: o.rate, Backend: o.backend}
	if g.stderrTTY {
		pr := newProgress(g.terminal())
		defer pr.clear()
		opts.Progress = func(p check.Progress) {
			run := ""
			if p.Repeats > 1 {
				run = fmt.Sprintf(" [%d/%d]", p.Repeat, p.Repeats)
			}
			line := fmt.Sprintf("check %s%s %ds/%ds  WAL %d appends", c.Name, run, int(p.Elapsed.Seconds()), int(p.Duration.Seconds()), p.Samples[0])
			if o.backend {
				line += fmt.Sprintf("  backend %d commits", p.Samples[1])
			}
			pr.line(line)
		}
	}
	rep, err := c.Run(ctx, opts)
	if err != nil {
		return err
	}
	if err := writeOut(g, o.out, func(w io.Writer) error {
		if o.output == "json" {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(rep)
		}
		return check.WriteText(w, rep)
	}); err != nil {
		return err
	}
	for _, l := range rep.Left {
		fmt.Fprintf(g.stderr, "ioprobe: left %s: something else took the name of a file the check created, so it was not removed\n", l)
	}
	switch {
	case rep.Status == result.StatusInterrupted || ctx.Err() != nil:
		return &exitError{code: ExitInterrupted, err: errors.New("interrupted: the figures above are partial, no verdict")}
	case rep.Verdict == nil:
		return &exitError{code: ExitIOErrors, err: fmt.Errorf("check %s: %s (no verdict)", c.Name, rep.Message)}
	case rep.Verdict.Verdict == check.Inconclusive:
		return &exitError{code: ExitBadInput, err: fmt.Errorf("check %s: %s", c.Name, rep.Verdict.Reason)}
	case !rep.Verdict.Pass:
		return &exitError{code: ExitCheckFailed, err: fmt.Errorf("check %s failed: %s", c.Name, rep.Verdict.Reason)}
	}
	return nil
}
