package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ioprobe/ioprobe/internal/report"
	"github.com/ioprobe/ioprobe/internal/safefile"
	"github.com/ioprobe/ioprobe/internal/suiterun"
	"github.com/ioprobe/ioprobe/internal/textsafe"
	"github.com/ioprobe/ioprobe/pkg/icf"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// icfOptions are `ioprobe run`'s flag for an Iometer configuration file.
type icfOptions struct {
	file string
}

func (f *icfOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.file, "icf", "", "run an Iometer configuration file (.icf): its access specifications, run time, ramp-up, workers and cycling, as a suite; --target replaces its disk targets one for one (see docs/iometer.md)")
}

// icfSets are run's flags that an ICF sets itself. --duration and --ramp
// stand in for a file saved without its test setup, --qd for one saved
// without its manager list.
var icfSets = []string{"bs", "line", "read-pct", "random-pct", "workers", "rate-iops",
	"profile", "size", "align", "seed", "fsync", "fdatasync", "sync", "verify", "buffered"}

// runICF is `ioprobe run --icf FILE`: the file's runs, in Iometer's
// order, as the points of a suite (each checked before the first runs).
func runICF(ctx context.Context, g *globalOptions, o *runOptions, f *icfOptions) error {
	write, err := report.Writer(o.output, report.ForSuite)
	if err != nil {
		return err
	}
	if err := checkOut(o.out, append(inUse("the Iometer configuration file", f.file), inUse("a target of the run", o.targets...)...)...); err != nil {
		return err
	}
	changed := func(name string) bool { return o.changed != nil && o.changed(name) }
	for _, name := range icfSets {
		if changed(name) {
			return usagef("--%s cannot be used with --icf: the configuration file sets it", name)
		}
	}
	for _, name := range []string{"batch-submit", "batch-complete", "batch-complete-max"} {
		if changed(name) {
			return usagef("--%s cannot be used with --icf: Iometer hands each I/O to the kernel on its own", name)
		}
	}
	if len(o.targets) == 0 {
		return icfNeedsTargets(g, o, f)
	}
	for i, t := range o.targets {
		if slices.Contains(o.targets[:i], t) {
			return &workload.FieldError{Field: "--target", Value: t, Reason: "given twice"}
		}
	}
	if err := o.checkInterval(); err != nil {
		return err
	}
	data, err := safefile.ICF.Read(f.file)
	if err != nil {
		return usagef("--icf: %v", err)
	}
	opts := icf.Options{}
	if changed("duration") {
		opts.RunTime = o.duration
	}
	if changed("ramp") {
		opts.RampUp = o.ramp
	}
	if changed("qd") {
		opts.QueueDepth = o.qd
	}
	s, units, notes, err := icfSuite(f.file, data, opts, o.targets, o.engine)
	var sets *icfSetsFlag
	if errors.As(err, &sets) {
		return usagef("--%s cannot be used with --icf: the configuration file's %s sets it", sets.flag, sets.section)
	}
	if err != nil {
		var ie *icf.Error
		if errors.As(err, &ie) {
			return usagef("%v", err)
		}
		return usagef("%s: %v", f.file, err)
	}
	for _, n := range notes {
		fmt.Fprint(g.stderr, textsafe.Sprintf("ioprobe: %s: %s\n", f.file, n))
	}
	return o.runImported(ctx, g, "Iometer file "+f.file, s, units,
		&result.SuiteOptions{Targets: o.targets, Repeat: 1, Engine: o.engine},
		func(doc *result.Suite) error {
			for _, r := range doc.Results {
				r.Notes = append(r.Notes, notes...)
			}
			return writeOut(g, o.out, func(w io.Writer) error { return write(w, doc) })
		})
}

// icfNeedsTargets refuses an ICF run without --target: the file's disk
// targets (Windows drive letters, physical drives) mean nothing here. With
// --dry-run it lists them first, in the order --target replaces them.
func icfNeedsTargets(g *globalOptions, o *runOptions, f *icfOptions) error {
	const msg = "--icf needs --target: the file's disk targets (Windows drive letters, physical drives) mean nothing here; give one --target for each, in the order the file uses them"
	if !o.dryRun {
		return usagef("%s (--dry-run lists them)", msg)
	}
	data, err := safefile.ICF.Read(f.file)
	if err != nil {
		return usagef("--icf: %v", err)
	}
	c, err := icf.Parse(f.file, data, icf.Options{})
	if err != nil {
		var ie *icf.Error
		if errors.As(err, &ie) {
			return usagef("%v", err)
		}
		return usagef("%s: %v", f.file, err)
	}
	disks := c.DiskTargets()
	fmt.Fprint(g.stdout, textsafe.Sprintf("%s: %d disk target(s), in the order --target replaces them:\n", f.file, len(disks)))
	for i, d := range disks {
		fmt.Fprint(g.stdout, textsafe.Sprintf("  --target %d  replaces  %s\n", i+1, d))
	}
	return usagef("%s (listed above)", msg)
}

// icfSuite reads an ICF into a suite and its units on the given targets,
// and the lines the user must read (which target replaced which, where
// the run differs from Iometer's).
func icfSuite(file string, data []byte, opts icf.Options, targets []string, engine string) (*workload.Suite, []suiterun.Unit, []string, error) {
	c, err := icf.Parse(file, data, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	switch {
	case c.HasTestSetup && opts.RunTime > 0:
		return nil, nil, nil, &icfSetsFlag{"duration", "'TEST SETUP"}
	case c.HasTestSetup && opts.RampUp > 0:
		return nil, nil, nil, &icfSetsFlag{"ramp", "'TEST SETUP"}
	case c.HasManagers && opts.QueueDepth > 0:
		return nil, nil, nil, &icfSetsFlag{"qd", "'MANAGER LIST"}
	}
	var notes []string
	if !c.HasManagers {
		notes = append(notes, fmt.Sprintf("the file has no 'MANAGER LIST: one worker with %d outstanding I/Os runs each access specification in turn", c.Disk[0].QueueDepth))
	}
	moved, err := c.Retarget(targets)
	if err != nil {
		return nil, nil, nil, err
	}
	notes = append(append(moved, notes...), c.Notes()...)
	points, err := c.Points()
	if err != nil {
		return nil, nil, nil, err
	}
	title := "Iometer " + filepath.Base(file)
	if c.Description != "" {
		title += ": " + c.Description
	}
	s := &workload.Suite{Name: "icf", Title: title, Source: file}
	// The reports' section is the file's test: its description (what
	// Iometer's results name the test by), else its test type.
	section := c.TestType
	if c.Description != "" {
		section = c.Description
	}
	units := make([]suiterun.Unit, len(points))
	for i, p := range points {
		specs, specTargets, err := c.Workload(p, workload.EngineName(engine))
		if err != nil {
			return nil, nil, nil, err
		}
		// The reports' column is the file's name of the access
		// specification ("4K; 100% Read; 100% random", Iometer's "All in
		// one"), never ioprobe's label of its mix: the reader looks for
		// the names the file gives. A one-line specification's size is
		// the reports' data size.
		var names []string
		for _, sp := range specs {
			if !slices.Contains(names, sp.Name) {
				names = append(names, sp.Name)
			}
		}
		sp := workload.SuitePoint{Name: p.Name, Section: section, Pattern: strings.Join(names, " + "), Specs: specs}
		if len(specs) == 1 && len(specs[0].Lines) == 1 {
			sp.Size = specs[0].Lines[0].Bytes
		}
		var all []string
		for _, ts := range specTargets {
			for _, t := range ts {
				if !slices.Contains(all, t) {
					all = append(all, t)
				}
			}
		}
		s.Points = append(s.Points, sp)
		units[i] = suiterun.Unit{Index: i, Point: sp, Targets: all, SpecTargets: specTargets}
	}
	return s, units, notes, nil
}

// icfSetsFlag: a flag given for what the file sets itself.
type icfSetsFlag struct{ flag, section string }

func (e *icfSetsFlag) Error() string { return "--" + e.flag + " is set by the file's " + e.section }
