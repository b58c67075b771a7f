package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ioprobe/ioprobe/internal/report"
	"github.com/ioprobe/ioprobe/internal/safefile"
	"github.com/ioprobe/ioprobe/internal/suiterun"
	"github.com/ioprobe/ioprobe/internal/target"
	"github.com/ioprobe/ioprobe/internal/textsafe"
	"github.com/ioprobe/ioprobe/internal/version"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// MaxRepeat bounds --repeat.
const MaxRepeat = 100

// suiteOptions are the flags of `ioprobe suite`: run's, plus cycling,
// repeats and where the output goes.
type suiteOptions struct {
	runOptions
	cycles   []string
	repeat   int
	out      string
	readOnly bool
}

// customOnly are run's flags that make the access specification: a
// named suite fixes its own, so they apply to 'suite custom' only and a
// named suite refuses them (one line, exit 2). Every other flag of run's
// a named suite carries to each of its points (see suiteOptions.suite).
var customOnly = []string{"bs", "line", "read-pct", "random-pct", "profile", "rate-iops", "align"}

// AddFlags registers run's flags and the suite's own.
func (o *suiteOptions) AddFlags(fs *pflag.FlagSet) {
	o.runOptions.AddFlags(fs)
	fs.Lookup("output").Usage = report.OutputUsage(report.ForSuite)
	fs.Lookup("target").Usage = "file or block device to measure (repeat for several: the suite runs on each in turn, side by side; default ./" + DefaultTarget + ")"
	fs.Lookup("qd").Usage = "outstanding I/Os per worker per target for every point (default: the suite's, 16 for most)"
	fs.Lookup("workers").Usage = "workers for every point (default: the suite's, 1 for most)"
	// The suite's own defaults are in the usage: run's would print a
	// second, wrong one ("(default 16)"), and they apply only when given.
	fs.Lookup("qd").DefValue, fs.Lookup("workers").DefValue = "0", "0"
	for _, name := range customOnly {
		fs.Lookup(name).Usage += " (suite custom only)"
	}
	fs.StringArrayVar(&o.cycles, "cycle", nil, "cycle a dimension over every point: qd=1,2,4,8 (list), qd=1..32*2 (exponential), qd=1..8+1 (linear); also workers=… and bs=4k..1m*2; repeat for several")
	fs.IntVar(&o.repeat, "repeat", 1, "run each point this many times; the result keeps their spread and merged histogram")
	fs.StringVar(&o.out, "out", "", "write the output to this file instead of stdout")
	fs.BoolVar(&o.readOnly, "read-only", false, "run only the points that do not write (for a device or file that must not be written)")
}

func newSuiteCommand(g *globalOptions) *cobra.Command {
	o := &suiteOptions{}
	var list strings.Builder
	for _, s := range workload.Suites() {
		fmt.Fprintf(&list, "  %-13s %s\n  %-13s from %s\n", s.Name, s.Description, "", s.Source)
	}
	cmd := &cobra.Command{
		Use:   "suite NAME [flags]",
		Short: "Run a suite that rebuilds a reference report's tables and figures",
		Long: `Runs the points of a suite one after the other, each an access specification
measured as 'ioprobe run' measures it, and prints the reports' tables: data
sizes down, workloads across, one table each for IOPS, MB/s, mean response
time, CPU %, IOPS per %CPU and MB/s per %CPU.

Suites:
` + list.String() + `
Several --target flags run the whole suite on each target in turn, for a
side-by-side comparison. Every point is checked against every target before
the first one runs: a write point against a target that refuses writes stops
the suite before it starts (exit status 2).

Cycling (Iometer's): --cycle qd=1,2,4,8 | qd=1..32*2 | qd=1..8+1, and the same
for workers= and bs=. A cycled dimension replaces the suite's own values for
it (characterize's sizes, scaling's workers); otherwise every point runs at
every value. 'ioprobe suite custom' takes run's --bs, --line, --read-pct,
--random-pct, --profile, --rate-iops or --align and cycles that one access
specification; a named suite fixes its own and refuses them. Every other run
flag applies to every point: --duration, --ramp, --size, --engine, --seed,
--number-ios, --io-size, --verify, --fsync, --fdatasync, --sync, --batch-*,
--max-errors, --interval, --device-latency, --allow-destructive.

See docs/suites.md for the report, table and figure each suite rebuilds.`,
		Example: `  ioprobe suite characterize --target /data/probe.dat --size 1GiB
  ioprobe suite characterize --target /dev/sdb --target /dev/sdc --allow-destructive --output json --out esx2.json
  ioprobe suite protocols --target /dev/sdb --size 100MiB --read-only      # the cached run
  ioprobe suite custom --profile oltp --cycle qd=1..64*2 --output html --out oltp.html
  ioprobe suite business --repeat 3 --output json --out business.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("suite: name one suite (%s) (see 'ioprobe suite --help')", strings.Join(workload.SuiteNames(), ", "))
			}
			return nil
		},
		ValidArgs: workload.SuiteNames(),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.changed = cmd.Flags().Changed
			return runSuite(cmd.Context(), g, o, args[0])
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// suite builds the suite from the flags.
func (o *suiteOptions) suite(name string, targets int) (*workload.Suite, error) {
	changed := o.changed
	if changed == nil {
		changed = func(string) bool { return false }
	}
	so := workload.SuiteOptions{Targets: targets, ReadOnly: o.readOnly}
	if strings.EqualFold(name, workload.CustomSuite) {
		s, err := o.spec()
		if err != nil {
			return nil, err
		}
		so.Custom = &s
	} else {
		for _, f := range customOnly {
			if changed(f) {
				return nil, usagef("--%s applies to 'ioprobe suite custom' only: suite %s fixes its access specifications", f, name)
			}
		}
		so.Base = workload.Spec{Duration: o.duration, Ramp: o.ramp, Engine: workload.EngineName(o.engine), Seed: o.seed, Verify: o.verify}
		// The flushes and fio's batch sizes, like --verify, are run
		// parameters that apply to any access specification: every
		// point takes them (once left out here, they were taken and
		// silently ignored; TestSuiteFlagsAreCarriedOrRefused walks
		// every flag so that none is again).
		o.flushAndBatch(&so.Base, changed)
		// --number-ios and --io-size end every point, as they end a run
		// and suite custom's points: like --duration, a run parameter,
		// not part of the access specification the suite fixes (once
		// left out here, they were taken and silently ignored).
		if err := o.budget(&so.Base, changed); err != nil {
			return nil, err
		}
		if o.size != "" {
			n, err := parseRegion(o.size)
			if err != nil {
				return nil, err
			}
			so.Base.RegionBytes = n
		}
		if changed("qd") {
			if o.qd < 1 || o.qd > workload.MaxQueueDepth {
				return nil, &workload.FieldError{Field: "--qd", Value: fmt.Sprint(o.qd), Reason: fmt.Sprintf("must be between 1 and %d", workload.MaxQueueDepth)}
			}
			so.QueueDepth = o.qd
		}
		if changed("workers") {
			if o.workers < 1 || o.workers > workload.MaxWorkers {
				return nil, &workload.FieldError{Field: "--workers", Value: fmt.Sprint(o.workers), Reason: fmt.Sprintf("must be between 1 and %d", workload.MaxWorkers)}
			}
			so.Workers = o.workers
		}
	}
	for _, c := range o.cycles {
		cy, err := workload.ParseCycle(c)
		if err != nil {
			return nil, err
		}
		so.Cycles = append(so.Cycles, cy)
	}
	s, err := workload.BuildSuite(name, so)
	if err != nil {
		return nil, err
	}
	if changed("batch-submit") && o.batchSubmit == 0 {
		// fio's iodepth_batch_submit=0 is each point's own queue depth,
		// the suite's, --qd's or the cycled one.
		for i := range s.Points {
			for j := range s.Points[i].Specs {
				s.Points[i].Specs[j].SubmitBatch = s.Points[i].Specs[j].QueueDepth
			}
		}
	}
	return s, nil
}

// runSuite is `ioprobe suite`.
func runSuite(ctx context.Context, g *globalOptions, o *suiteOptions, name string) error {
	write, err := report.Writer(o.output, report.ForSuite)
	if err != nil {
		return err
	}
	if o.repeat < 1 || o.repeat > MaxRepeat {
		return &workload.FieldError{Field: "--repeat", Value: fmt.Sprint(o.repeat), Reason: fmt.Sprintf("must be between 1 and %d", MaxRepeat)}
	}
	if o.interval < 10*time.Millisecond {
		return &workload.FieldError{Field: "--interval", Value: o.interval.String(), Reason: "must be at least 10ms"}
	}
	if err := checkOut(o.out, inUse("a target of the suite", targetsOr(o.targets)...)...); err != nil {
		return err
	}
	targets := o.targets
	if len(targets) == 0 {
		targets = []string{DefaultTarget}
	}
	for i, t := range targets {
		for _, u := range targets[:i] {
			if u == t {
				return &workload.FieldError{Field: "--target", Value: t, Reason: "given twice"}
			}
		}
	}
	s, err := o.suite(name, len(targets))
	if err != nil {
		return err
	}
	if len(o.targets) == 0 { // said once the command line is known to be good
		fmt.Fprintf(g.stderr, "ioprobe: no --target given: measuring ./%s (created and filled on first use)\n", DefaultTarget)
	}
	units := suiterun.Units(s, targets)
	if o.dryRun {
		if u, err := dryRun(g.stdout, "suite "+s.Name, o.settings(g), units); err != nil {
			return suiteRefusal(s, u, err)
		}
		return nil
	}
	// Every point against every target before the first runs.
	if u, err := o.settings(g).Check(units); err != nil {
		return suiteRefusal(s, u, err)
	}

	doc := &result.Suite{Schema: result.SuiteSchema, Suite: s.Name, Title: s.Title, Source: s.Source,
		Version: version.Version, StartedAt: time.Now().UTC(), Results: []*result.Result{},
		Options: &result.SuiteOptions{Targets: targets, DurationSeconds: o.duration.Seconds(), RampSeconds: o.ramp.Seconds(),
			Cycles: o.cycles, Repeat: o.repeat, ReadOnly: o.readOnly, Engine: o.engine}}
	if n, err := workload.ParseSize(o.size); err == nil {
		doc.Options.RegionBytes = n
	}
	if o.changed != nil && o.changed("qd") {
		doc.Options.QueueDepth = o.qd
	}
	if o.changed != nil && o.changed("workers") {
		doc.Options.Workers = o.workers
	}

	runErr := o.runUnits(ctx, g, s, units, doc)
	if len(doc.Results) > 0 {
		if err := writeOut(g, o.out, func(w io.Writer) error { return write(w, doc) }); err != nil {
			return err
		}
	}
	return runErr
}

// suiteRefusal says which point a refusal is about, and how to run the
// rest of the suite.
func suiteRefusal(s *workload.Suite, u suiterun.Unit, err error) error {
	var se *target.SafetyError
	hint := ""
	if errors.As(err, &se) && se.Write {
		hint = " (--read-only runs only the points that read)"
	}
	return fmt.Errorf("suite %s, point %s: %w%s; nothing was run", s.Name, u.Label(), err, hint)
}

// checkOut refuses an --out that could not be written (no such
// directory, a directory others can write, a name that is a symlink, a
// device, a FIFO or a directory) before anything runs: exit 2, nothing
// touched. Nor may it name a file the command uses (uses): its output
// would replace a target it measured or an input it read.
func checkOut(path string, uses ...safefile.InUse) error {
	if path == "" {
		return nil
	}
	return safefile.CheckOut(path, uses...)
}

// inUse lists paths as files the command uses, each called what.
func inUse(what string, paths ...string) []safefile.InUse {
	out := make([]safefile.InUse, len(paths))
	for i, p := range paths {
		out[i] = safefile.InUse{What: what, Path: p}
	}
	return out
}

// targetsOr is the targets given, or the default target.
func targetsOr(targets []string) []string {
	if len(targets) == 0 {
		return []string{DefaultTarget}
	}
	return targets
}

// runUnits runs every unit (× repeat) and appends their results to doc.
// It stops at an interrupt or at a point whose I/O failed, and returns the
// error that sets the exit status.
func (o *suiteOptions) runUnits(ctx context.Context, g *globalOptions, s *workload.Suite, units []suiterun.Unit, doc *result.Suite) error {
	clock := newSuiteClock(suiterun.Measured(units), o.repeat)
	var pr *progress
	if g.stderrTTY {
		pr = newProgress(g.terminal())
		pr.prefix = clock.prefix
		defer pr.clear()
	}
	settings := o.settings(g)
	done := 0
	ex := suiterun.Executor{
		Repeat: o.repeat,
		Suite:  s.Name,
		Run: func(ctx context.Context, u suiterun.Unit, run int) (*result.Result, error) {
			label := u.Label()
			if o.repeat > 1 {
				label += fmt.Sprintf(" run %d/%d", run, o.repeat)
			}
			clock.begin(label, u.Planned())
			if o.beforeUnit != nil {
				if err := o.beforeUnit(u); err != nil {
					return nil, err
				}
			}
			return measure(ctx, settings.Plan(u), pr)
		},
		Kept: func(u suiterun.Unit, res *result.Result) {
			doc.Results = append(doc.Results, res)
			// A line a point on stderr, terminal or not: a suite written
			// to a file would otherwise say nothing for minutes.
			done++
			if pr != nil {
				pr.clear()
			}
			fmt.Fprintf(g.stderr, "ioprobe: [%d/%d] %s\n", done, len(units), pointLine(u, res, clock.left()))
		},
		Reused: func(u, from suiterun.Unit, _ *result.Result) {
			fmt.Fprint(g.stderr, textsafe.Sprintf("ioprobe: point %s has the specification of %s: reported from that measurement\n", u.Label(), from.Label()))
		},
	}
	err := ex.Execute(ctx, units)
	var st *suiterun.Stopped
	if !errors.As(err, &st) {
		return err
	}
	switch {
	case st.Interrupted:
		return &exitError{code: ExitInterrupted, err: errors.New("interrupted: " + o.partial())}
	case st.Err != nil:
		return fmt.Errorf("suite %s, point %s: %w (%s)", s.Name, st.Unit.Label(), st.Err, o.partial())
	default:
		return &exitError{code: ExitIOErrors, err: fmt.Errorf("suite %s stopped at point %s: %s", s.Name, st.Unit.Label(), st.Result.Message)}
	}
}

// partial says where the results of a suite that stopped early went.
func (o *suiteOptions) partial() string {
	if o.out != "" {
		return "the results in " + o.out + " are partial"
	}
	return "the results on stdout are partial"
}

// writeOut writes to stdout, or to path (then says so on stderr): a new
// regular file in path's directory, renamed over path once whole (see
// safefile.Create), never through a symlink or onto a device.
func writeOut(g *globalOptions, path string, write func(w io.Writer) error) error {
	if path == "" {
		return write(g.stdout)
	}
	f, err := safefile.Create(path)
	if err != nil {
		return err
	}
	if err := write(f.File()); err != nil {
		f.Abort()
		return err
	}
	if err := f.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(g.stderr, "ioprobe: wrote %s\n", path)
	return nil
}

// pointLine says how a point of a suite went, in a line: its label, its
// headline figures, how it ended when not well, and the suite's time left.
func pointLine(u suiterun.Unit, r *result.Result, left time.Duration) string {
	sm := &r.Summary
	v := func(id result.FigureID) float64 { return result.Value(id, sm) }
	line := fmt.Sprintf("%s: %s IOPS, %.2f MB/s, mean %.3f ms, p99 %.3f ms", u.Label(), group(v(result.FigIOPS)), v(result.FigMBPerSecond),
		v(result.FigLatencyMean)*1e3, v(result.FigLatencyP99)*1e3)
	if r.Status != "" && r.Status != result.StatusOK {
		line += "; " + string(r.Status)
		if r.Message != "" {
			line += ": " + r.Message
		}
	}
	if left > 0 {
		line += fmt.Sprintf("; suite %s left", left.Round(time.Second))
	}
	return line
}
