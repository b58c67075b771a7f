package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ioprobe/ioprobe/internal/report"
	"github.com/ioprobe/ioprobe/internal/safefile"
	"github.com/ioprobe/ioprobe/internal/suiterun"
	"github.com/ioprobe/ioprobe/internal/textsafe"
	"github.com/ioprobe/ioprobe/pkg/fiojob"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// fioJobOptions are `ioprobe run`'s flags for a fio job file.
type fioJobOptions struct {
	file, section string
}

func (f *fioJobOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.file, "fio-job", "", "run a fio job file (what fio and ioprobe share; anything else is refused naming the option and line; see docs/fio.md)")
	fs.StringVar(&f.section, "section", "", "with --fio-job: run only this job section (fio's --section)")
}

// fioJobSets are run's flags that a job file sets itself.
var fioJobSets = []string{"bs", "line", "read-pct", "random-pct", "qd", "workers", "duration", "ramp", "engine", "rate-iops",
	"profile", "size", "align", "seed", "verify", "fsync", "fdatasync", "sync", "io-size", "number-ios", "buffered",
	"batch-submit", "batch-complete", "batch-complete-max"}

// runFioJob is `ioprobe run --fio-job FILE`: the job file's points, run
// as a suite's are (each checked before the first runs); one point is
// written as a run, several as a suite.
func runFioJob(ctx context.Context, g *globalOptions, o *runOptions, f *fioJobOptions) error {
	writeRun, err := report.Writer(o.output, report.ForRun)
	if err != nil {
		return err
	}
	writeSuite, err := report.Writer(o.output, report.ForSuite)
	if err != nil {
		return err
	}
	if f.file == "" {
		return usagef("--section needs --fio-job")
	}
	if err := checkOut(o.out, inUse("the fio job file", f.file)...); err != nil {
		return err
	}
	for _, name := range fioJobSets {
		if o.changed != nil && o.changed(name) {
			return usagef("--%s cannot be used with --fio-job: the job file sets it", name)
		}
	}
	if err := o.checkInterval(); err != nil {
		return err
	}
	data, err := safefile.JobFile.Read(f.file)
	if err != nil {
		return usagef("--fio-job: %v", err)
	}
	var included []string
	include := func(path string) ([]byte, error) {
		b, err := safefile.JobFile.Read(path)
		if err == nil {
			included = append(included, path)
		}
		return b, err
	}
	points, err := fiojob.Parse(f.file, data, fiojob.Options{Section: f.section, Targets: o.targets, Env: os.LookupEnv, Include: include,
		Stat: fioStat, Keywords: fioKeywords()})
	if err != nil {
		return usagef("%v", err)
	}
	// The job file named its targets and includes: --out is none of them.
	uses := inUse("a file the job file includes", included...)
	for _, p := range points {
		uses = append(uses, inUse("a target of the job file", p.Targets...)...)
	}
	if err := checkOut(o.out, uses...); err != nil {
		return err
	}
	s := &workload.Suite{Name: "fio-job", Title: "fio job file " + filepath.Base(f.file), Source: f.file}
	notes := map[string][]string{}
	units := make([]suiterun.Unit, len(points))
	for i, p := range points {
		specs := p.Specs()
		_, readPct, randomPct := specs[0].Mix() // a job with thinktime is written as lines
		sp := workload.SuitePoint{Name: p.Name, Section: s.Title, Pattern: workload.PatternLabel(readPct, randomPct), Specs: specs, Size: specs[0].MaxBlock()}
		if len(specs) > 1 {
			sp.Pattern, sp.Size = "Mixed", 0
		}
		for _, j := range p.Jobs {
			for _, n := range j.Notes {
				fmt.Fprint(g.stderr, textsafe.Sprintf("ioprobe: %s [%s]: %s\n", f.file, j.Name, n))
				notes[p.Name] = append(notes[p.Name], "["+j.Name+"] "+n)
			}
		}
		s.Points = append(s.Points, sp)
		// fio reports each job clone on its own (without group_reporting):
		// keep each worker's figures.
		units[i] = suiterun.Unit{Index: i, Point: sp, Targets: p.Targets, Clones: true}
		if !p.SameTargets() {
			// Jobs at once on files of their own: each job's group on
			// its files.
			for _, j := range p.Jobs {
				units[i].SpecTargets = append(units[i].SpecTargets, j.Targets)
			}
		}
	}
	byName := map[string]fiojob.Point{}
	for _, p := range points {
		byName[p.Name] = p
	}
	scheds, err := planSchedulers(points, notes)
	if err != nil {
		return usagef("%v", err)
	}
	// restoreSchedulers puts switched devices back and says, for the
	// results, what each point ran under.
	restoreSchedulers := func([]*result.Result) {}
	if scheds != nil {
		for i, sw := range scheds {
			units[i].Setting = schedSetting(sw)
		}
		if o.dryRun {
			for i, sw := range scheds {
				for _, w := range sw {
					if w.dev.Current == w.name {
						// fio writes the name all the same; nothing changes.
						fmt.Fprint(g.stderr, textsafe.Sprintf("ioprobe: %s: [%s] %s already runs %s (fio's ioscheduler=): nothing to switch\n",
							points[i].Name, w.job, w.dev.Device, w.name))
						continue
					}
					fmt.Fprint(g.stderr, textsafe.Sprintf("ioprobe: %s: [%s] would switch the I/O scheduler of %s from %s to %s (fio's ioscheduler=), and put it back after the run\n",
						points[i].Name, w.job, w.dev.Device, w.dev.Current, w.name))
				}
			}
		} else {
			sw := newSchedSwitcher()
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			defer cancel()
			sw.watch(cancel)
			// On every way out, once; and by the backstop, should it end
			// the process first (a run slow to stop on a loaded machine).
			unregister := g.undo.add(sw.left, func() { sw.restore(g.stderr) })
			defer func() {
				sw.restore(g.stderr)
				unregister()
			}()
			inEffect := map[string][]result.IOScheduler{}
			ro := *o
			ro.beforeUnit = func(u suiterun.Unit) error {
				if ctx.Err() != nil {
					return errSchedEnded // interrupted: switch nothing more
				}
				if err := sw.apply(scheds[u.Index], g.stderr); err != nil {
					return err
				}
				inEffect[u.Point.Name] = sw.inEffect()
				return nil
			}
			o = &ro
			restoreSchedulers = func(results []*result.Result) {
				back := sw.restore(g.stderr)
				for _, r := range results {
					if r.Point == nil {
						continue
					}
					for _, s := range inEffect[r.Point.Name] {
						s.Restored = back[s.Device]
						r.IOSchedulers = append(r.IOSchedulers, s)
					}
				}
			}
		}
	}
	return o.runImported(ctx, g, "fio job "+f.file, s, units, nil, func(doc *result.Suite) error {
		restoreSchedulers(doc.Results)
		for _, r := range doc.Results {
			if r.Point != nil {
				r.Notes = append(r.Notes, notes[r.Point.Name]...)
				setFioOptions(r, byName[r.Point.Name])
			}
		}
		return writeOut(g, o.out, func(w io.Writer) error {
			if len(points) == 1 {
				return writeRun(w, doc.Results[0])
			}
			return writeSuite(w, doc)
		})
	})
}

// setFioOptions gives each job of r its options as the job file wrote
// them (fio-json's job options and global options).
func setFioOptions(r *result.Result, p fiojob.Point) {
	conv := func(opts []fiojob.Option) []result.FioOption {
		out := make([]result.FioOption, len(opts))
		for i, o := range opts {
			out[i] = result.FioOption{Key: o.Key, Value: o.Value, Bare: o.Bare}
		}
		return out
	}
	for i := range r.Summary.Jobs {
		if i < len(p.Jobs) {
			r.Summary.Jobs[i].Fio = &result.FioOptions{Job: conv(p.Jobs[i].Options), Global: conv(p.Jobs[i].Global)}
		}
	}
}

// schedSetting names the schedulers a point runs under, for
// suiterun.Unit.Setting.
func schedSetting(sw []schedSwitch) string {
	var parts []string
	for _, w := range sw {
		parts = append(parts, w.dev.Device+"="+w.name)
	}
	return strings.Join(parts, ",")
}
