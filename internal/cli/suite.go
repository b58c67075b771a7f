package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ioprobe/ioprobe/internal/report"
	"github.com/ioprobe/ioprobe/internal/runner"
	"github.com/ioprobe/ioprobe/internal/target"
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

// AddFlags registers run's flags and the suite's own.
func (o *suiteOptions) AddFlags(fs *pflag.FlagSet) {
	o.runOptions.AddFlags(fs)
	fs.Lookup("output").Usage = "output format: text (the reports' tables), json (ioprobe.suite/v1), csv (a row per point) or html (charts)"
	fs.Lookup("target").Usage = "file or block device to measure (repeat for several: the suite runs on each in turn, side by side; default ./" + DefaultTarget + ")"
	fs.Lookup("qd").Usage = "outstanding I/Os per worker per target for every point (default: the suite's, 16 for most)"
	fs.Lookup("workers").Usage = "workers for every point (default: the suite's, 1 for most)"
	for _, name := range []string{"bs", "read-pct", "random-pct", "profile", "rate-iops", "align"} {
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
every value. 'ioprobe suite custom' takes run's --bs, --read-pct,
--random-pct or --profile and cycles that one access specification.

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

// unit is one run of a suite point on its targets.
type unit struct {
	index   int
	point   *workload.SuitePoint
	targets []string
	side    string // the target of a point run on each target in turn
}

func (u unit) label() string {
	if u.side != "" {
		return u.point.Name + " on " + u.side
	}
	return fmt.Sprintf("%s on %d %s at once", u.point.Name, len(u.targets), plural(len(u.targets), "target", "targets"))
}

func (u unit) planned() time.Duration {
	s := u.point.Specs[0]
	return s.Ramp + s.Duration
}

// plan is the runner plan of one unit.
func (o *suiteOptions) plan(g *globalOptions, u unit) runner.Plan {
	p := runner.Plan{
		AllowDestructive: o.allowDestructive,
		MaxErrors:        o.maxErrors,
		Interval:         o.interval,
		Version:          version.Version,
		Engines:          g.engines,
	}
	if len(u.point.Specs) > 1 {
		p.Name = u.point.Name
	}
	for _, s := range u.point.Specs {
		p.Groups = append(p.Groups, runner.Group{Spec: s, Targets: u.targets})
	}
	return p
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
		for _, f := range []string{"bs", "read-pct", "random-pct", "profile", "rate-iops", "align"} {
			if changed(f) {
				return nil, usagef("--%s applies to 'ioprobe suite custom' only: suite %s fixes its access specifications", f, name)
			}
		}
		so.Base = workload.Spec{Duration: o.duration, Ramp: o.ramp, Engine: o.engine, Seed: o.seed}
		if o.size != "" {
			n, err := workload.ParseSize(o.size)
			if err != nil {
				return nil, &workload.FieldError{Field: "--size", Value: o.size, Reason: err.Error()}
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
	return workload.BuildSuite(name, so)
}

// runSuite is `ioprobe suite`.
func runSuite(ctx context.Context, g *globalOptions, o *suiteOptions, name string) error {
	if err := o.validateOutput("text", "json", "csv", "html"); err != nil {
		return err
	}
	if o.repeat < 1 || o.repeat > MaxRepeat {
		return &workload.FieldError{Field: "--repeat", Value: fmt.Sprint(o.repeat), Reason: fmt.Sprintf("must be between 1 and %d", MaxRepeat)}
	}
	if o.interval < 10*time.Millisecond {
		return &workload.FieldError{Field: "--interval", Value: o.interval.String(), Reason: "must be at least 10ms"}
	}
	if err := checkOut(o.out); err != nil {
		return err
	}
	targets := o.targets
	if len(targets) == 0 {
		targets = []string{DefaultTarget}
		fmt.Fprintf(g.stderr, "ioprobe: no --target given: measuring ./%s (created and filled on first use)\n", DefaultTarget)
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
	units := suiteUnits(s, targets)
	// Every point against every target before the first runs.
	for _, u := range units {
		if err := runner.Check(o.plan(g, u)); err != nil {
			return suiteRefusal(s, u, err)
		}
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
	if err := o.writeSuite(g, doc); err != nil {
		return err
	}
	return runErr
}

// suiteUnits runs the suite on each target in turn, then the points that
// span several targets.
func suiteUnits(s *workload.Suite, targets []string) []unit {
	var out []unit
	for _, t := range targets {
		for i := range s.Points {
			if p := &s.Points[i]; p.Span == 0 {
				out = append(out, unit{index: i, point: p, targets: []string{t}, side: t})
			}
		}
	}
	for i := range s.Points {
		if p := &s.Points[i]; p.Span > 0 {
			out = append(out, unit{index: i, point: p, targets: targets[:p.Span]})
		}
	}
	return out
}

// sameAs maps each unit to the earlier unit with the same access
// specifications (their names aside) on the same targets, or -1: such a
// unit is measured once and reported under both points.
func sameAs(units []unit) []int {
	out := make([]int, len(units))
	for i, u := range units {
		out[i] = -1
		for j := range units[:i] {
			if out[j] < 0 && samePlan(units[j], u) {
				out[i] = j
				break
			}
		}
	}
	return out
}

func samePlan(a, b unit) bool {
	return slices.Equal(a.targets, b.targets) && workload.SameSpecs(a.point.Specs, b.point.Specs)
}

// suiteRefusal says which point a refusal is about, and how to run the
// rest of the suite.
func suiteRefusal(s *workload.Suite, u unit, err error) error {
	var se *target.SafetyError
	hint := ""
	if errors.As(err, &se) && se.Write {
		hint = " (--read-only runs only the points that read)"
	}
	return fmt.Errorf("suite %s, point %s: %w%s; nothing was run", s.Name, u.label(), err, hint)
}

// checkOut refuses an --out whose directory does not exist before the
// suite runs for hours.
func checkOut(path string) error {
	if path == "" {
		return nil
	}
	st, err := os.Stat(filepath.Dir(path))
	if err != nil || !st.IsDir() {
		return &workload.FieldError{Field: "--out", Value: path, Reason: "its directory does not exist"}
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return &workload.FieldError{Field: "--out", Value: path, Reason: "is a directory"}
	}
	return nil
}

// runUnits runs every unit (× repeat) and appends their results to doc.
// It stops at an interrupt or at a point whose I/O failed, and returns the
// error that sets the exit status.
func (o *suiteOptions) runUnits(ctx context.Context, g *globalOptions, s *workload.Suite, units []unit, doc *result.Suite) error {
	same := sameAs(units)
	var measured []unit
	for i, u := range units {
		if same[i] < 0 {
			measured = append(measured, u)
		}
	}
	clock := newSuiteClock(measured, o.repeat)
	var pr *progress
	if g.stderrTTY {
		pr = newProgress(g.stderr)
		pr.prefix = clock.prefix
		defer pr.clear()
	}
	kept := make([]*result.Result, len(units))
	for i, u := range units {
		if j := same[i]; j >= 0 {
			r := *kept[j] // measured: a unit that did not complete ended the suite
			if err := o.keep(doc, s, u, []*result.Result{&r}); err != nil {
				return err
			}
			r.Point.SameAs = units[j].point.Name
			fmt.Fprintf(g.stderr, "ioprobe: point %s has the specification of %s: reported from that measurement\n", u.label(), units[j].label())
			kept[i] = &r
			continue
		}
		var runs []*result.Result
		for k := 0; k < o.repeat; k++ {
			label := u.label()
			if o.repeat > 1 {
				label += fmt.Sprintf(" run %d/%d", k+1, o.repeat)
			}
			clock.begin(label, u.planned())
			plan := o.plan(g, u)
			if pr != nil {
				plan.Observers = append(plan.Observers, pr)
				plan.Progress = pr.preparing
			}
			res, err := runner.Run(ctx, plan)
			if err != nil {
				if len(runs) > 0 {
					o.keep(doc, s, u, runs)
				}
				if ctx.Err() != nil {
					return &exitError{code: ExitInterrupted, err: errors.New("interrupted: the results above are partial")}
				}
				return fmt.Errorf("suite %s, point %s: %w (the results above are partial)", s.Name, u.label(), err)
			}
			runs = append(runs, res)
			if res.Status != result.StatusOK {
				break
			}
		}
		last := runs[len(runs)-1]
		if err := o.keep(doc, s, u, runs); err != nil {
			return err
		}
		kept[i] = doc.Results[len(doc.Results)-1]
		switch {
		case ctx.Err() != nil || last.Status == result.StatusInterrupted:
			return &exitError{code: ExitInterrupted, err: errors.New("interrupted: the results above are partial")}
		case last.Status == result.StatusErrors:
			return &exitError{code: ExitIOErrors, err: fmt.Errorf("suite %s stopped at point %s: %s", s.Name, u.label(), last.Message)}
		}
	}
	return nil
}

// suiteClock knows which run of how many is under way and estimates the
// time left from the planned ramp-up and run time of every run to come.
type suiteClock struct {
	total, started int
	remaining      time.Duration // planned time of the runs not yet started
	current        string
	start          time.Time
	planned        time.Duration
	now            func() time.Time
}

func newSuiteClock(units []unit, repeat int) *suiteClock {
	c := &suiteClock{total: len(units) * repeat, now: time.Now}
	for _, u := range units {
		c.remaining += time.Duration(repeat) * u.planned()
	}
	return c
}

// begin marks the start of the next run.
func (c *suiteClock) begin(label string, planned time.Duration) {
	c.started++
	c.current, c.start, c.planned = label, c.now(), planned
	c.remaining -= planned
}

// prefix starts each progress line: "[3/20 random-write-16k on /dev/sdb,
// suite 12m5s left] ".
func (c *suiteClock) prefix() string {
	left := c.remaining + max(c.planned-c.now().Sub(c.start), 0)
	return fmt.Sprintf("[%d/%d %s, suite %s left] ", c.started, c.total, c.current, left.Round(time.Second))
}

// keep records a unit's runs: one result, or the repeats merged with
// their spread.
func (o *suiteOptions) keep(doc *result.Suite, s *workload.Suite, u unit, runs []*result.Result) error {
	res := runs[0]
	if len(runs) > 1 {
		m, err := result.MergeRepeats(runs...)
		if err != nil {
			return err
		}
		res = m
	}
	p := u.point
	res.Point = &result.Point{Suite: s.Name, Name: p.Name, Section: p.Section, Pattern: p.Pattern, SizeBytes: p.Size, Index: u.index}
	if u.side != "" {
		res.Point.Target = u.side
	} else {
		res.Point.Targets = len(u.targets)
	}
	doc.Results = append(doc.Results, res)
	return nil
}

func (o *suiteOptions) writeSuite(g *globalOptions, doc *result.Suite) error {
	if len(doc.Results) == 0 {
		return nil
	}
	return writeOut(g, o.out, func(w io.Writer) error {
		switch o.output {
		case "json":
			return report.WriteJSON(w, doc)
		case "csv":
			return report.WriteCSV(w, doc.Results, true)
		case "html":
			return report.WriteHTML(w, doc)
		default:
			return report.WriteSuiteText(w, doc)
		}
	})
}

// writeOut writes to stdout, or to path (then says so on stderr).
func writeOut(g *globalOptions, path string, write func(w io.Writer) error) error {
	if path == "" {
		return write(g.stdout)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	fmt.Fprintf(g.stderr, "ioprobe: wrote %s\n", path)
	return nil
}
