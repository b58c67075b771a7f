package fiojob

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Options say how to read a job file.
type Options struct {
	// Section runs only this job section (fio's --section); "" all.
	Section string
	// Targets replace every job's filename/directory (--target).
	Targets []string
	// Env looks up ${VAR}; nil: every variable is unset.
	Env func(string) (string, bool)
	// Keywords are fio's $pagesize, $mb_memory and $ncpus, as the host
	// has them; nil: none is replaced.
	Keywords map[string]string
	// Include reads an include file by its path (fio tries the name as
	// given, then next to the including file); nil refuses includes.
	Include func(name string) ([]byte, error)
	// Stat says what is at a job's file: fio sizes a job by its file
	// (no size=, size=N%), takes an existing device named like a job
	// section as its file, and refuses a new file without a size. nil:
	// every file is taken to exist, its size unknown (size=N% is then
	// refused).
	Stat func(path string) (FileInfo, error)
}

// FileInfo is what Options.Stat reports about a path.
type FileInfo struct {
	Exists  bool
	Regular bool  // a regular file (else a device)
	Size    int64 // bytes: the file's size, or the device's
}

// Option is one option of a job file as its author wrote it.
type Option struct {
	Key, Value string
	Bare       bool // written without "=value"
}

// Job is one job section as ioprobe runs it.
type Job struct {
	Name    string
	Spec    workload.Spec
	Targets []string
	// Notes say what the user must know about how fio reads the job and
	// what ioprobe leaves out (a unit fio ignores, a log not written).
	Notes []string
	// StartDelay is fio's startdelay: every job of a point has the same.
	StartDelay time.Duration
	// IOScheduler is fio's ioscheduler (""; none given): before the job
	// fio switches the I/O scheduler of the device under each of its
	// files (the whole disk of a partition) to it, and fails the job when
	// it cannot (backend.c: switch_ioscheduler).
	IOScheduler string
	// Options are the job's own section's options, Global those of the
	// [global] sections before it, as written (for fio-json's "job
	// options" and "global options").
	Options, Global []Option
	at              pos
	last            map[string]option
}

// line is where option key was last set for the job (else its section
// header), for a refusal that names it.
func (j Job) line(key string) (pos, string) {
	if o, ok := j.last[key]; ok {
		return o.at, key
	}
	return j.at, key
}

// Refusal is an *Error about the job's option key, naming the line that
// last set it (else the job's section): for what only the caller can
// find, such as the device under a file.
func (j Job) Refusal(key, reason string) error {
	at, key := j.line(key)
	return &Error{File: at.file, Line: at.line, Section: j.Name, Option: key, Reason: reason}
}

// Point is jobs that fio runs at once: one access specification each,
// each on its own files (Job.Targets), each until its own end.
type Point struct {
	Name string
	Jobs []Job
	// Targets are every job's files, each once, in the order the jobs
	// name them.
	Targets []string
}

// SameTargets reports whether every job of the point runs on all of its
// targets, in their order.
func (p Point) SameTargets() bool {
	for _, j := range p.Jobs {
		if !slices.Equal(j.Targets, p.Targets) {
			return false
		}
	}
	return true
}

// Specs are the point's access specifications, one per job.
func (p Point) Specs() []workload.Spec {
	out := make([]workload.Spec, len(p.Jobs))
	for i, j := range p.Jobs {
		out[i] = j.Spec
	}
	return out
}

// Parse reads the job file name (its bytes data) into points, in the
// order fio would run them.
func Parse(name string, data []byte, o Options) ([]Point, error) {
	l := &lexer{env: o.Env, include: o.Include, keywords: o.Keywords}
	if err := l.file(name, data, 0, false); err != nil {
		return nil, err
	}
	var (
		globals []*section
		points  []Point
		found   bool
		sawJobs bool
	)
	for _, s := range l.sections {
		if s.global {
			globals = append(globals, s)
			continue
		}
		sawJobs = true
		if o.Section != "" && s.name != o.Section {
			continue
		}
		found = true
		j, barrier, err := resolve(s, globals, o)
		if err != nil {
			return nil, err
		}
		if barrier || len(points) == 0 {
			points = append(points, Point{Name: j.Name, Targets: j.Targets})
		}
		p := &points[len(points)-1]
		if len(p.Jobs) > 0 {
			if err := sameRun(p.Jobs[0], j); err != nil {
				return nil, err
			}
			p.Name += "+" + j.Name
			for _, t := range j.Targets {
				if !slices.Contains(p.Targets, t) {
					p.Targets = append(p.Targets, t)
				}
			}
		}
		p.Jobs = append(p.Jobs, j)
	}
	switch {
	case !sawJobs:
		return nil, &Error{File: name, Reason: "no job section (only [global])"}
	case !found:
		return nil, &Error{File: name, Reason: fmt.Sprintf("no job section [%s]", o.Section)}
	}
	return points, nil
}

// sameRun checks that a job fio would run at once with first can run as
// another group of workers of the same ioprobe run: jobs at once may have
// their own files, run time and amount to do (each ends on its own, as
// fio's), but start together after one ramp-up.
func sameRun(first, j Job) error {
	var at pos
	var key string
	e := &Error{Section: j.Name}
	switch {
	case j.Spec.Ramp != first.Spec.Ramp:
		at, key = j.line("ramp_time")
		e.Reason = fmt.Sprintf("runs at once with [%s] with another ramp_time: ioprobe opens one measured window for the jobs it runs at once, after one ramp-up (add stonewall)", first.Name)
	case j.StartDelay != first.StartDelay:
		at, key = j.line("startdelay")
		e.Reason = fmt.Sprintf("runs at once with [%s] with another startdelay (%v, not %v): ioprobe starts a run's workers together (add stonewall)", first.Name, j.StartDelay, first.StartDelay)
	default:
		return nil
	}
	e.File, e.Line, e.Option = at.file, at.line, key
	return e
}

// resolve applies a job's options as fio does: each [global] section
// before it, then its own, each section's options in fio's order
// (options.c's priorities: kb_base first, filename and filename_format
// last, the rest as written, so a later value replaces an earlier one),
// and returns the job and whether it waits for the jobs before it.
func resolve(s *section, globals []*section, o Options) (Job, bool, error) {
	j := newJob(s)
	fail := func(op option, reason string) error {
		return optionErr(op.at, s.name, op.key, reason)
	}
	out := Job{Name: s.name, at: s.at}
	for _, g := range globals {
		for _, op := range g.opts {
			out.Global = append(out.Global, Option{Key: op.key, Value: strings.TrimSpace(op.written), Bare: op.bare})
		}
	}
	for _, op := range s.opts {
		out.Options = append(out.Options, Option{Key: op.key, Value: strings.TrimSpace(op.written), Bare: op.bare})
	}
	for _, sect := range append(append([]*section{}, globals...), s) {
		opts := append([]option(nil), sect.opts...)
		sort.SliceStable(opts, func(a, b int) bool { return prio(opts[a].key) > prio(opts[b].key) })
		for _, op := range opts {
			if err := j.apply(op); err != nil {
				return Job{}, false, fail(op, err.Error())
			}
		}
	}
	spec, targets, err := j.finish(o, fail)
	if err != nil {
		return Job{}, false, err
	}
	out.Spec, out.Targets, out.Notes, out.last = spec, targets, j.notes, j.last
	if j.startDelay > 0 {
		out.StartDelay = j.startDelay
	}
	out.IOScheduler = j.ioscheduler
	return out, j.barrier, nil
}

// prio is fio's option priority (options.c .prio): higher first.
func prio(key string) int {
	switch key {
	case "kb_base", "unit_base", "cpus_allowed_policy":
		return 1
	case "filename", "filename_format", "lockfile":
		return -1
	}
	return 0
}

// splitFilename is fio's get_next_str over a filename list: ':' between
// names, "\:" for a colon in a name.
func splitFilename(v string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(v); i++ {
		switch {
		case v[i] == '\\' && i+1 < len(v) && v[i+1] == ':':
			cur.WriteByte(':')
			i++
		case v[i] == ':':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(v[i])
		}
	}
	return append(out, cur.String())
}
