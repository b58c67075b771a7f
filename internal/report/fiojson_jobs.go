package report

import (
	"slices"
	"strings"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// fio-json's jobs[], as fio 3.33 reports them (stat.c: __show_run_stats):
// one entry per job clone, except that consecutive members of one
// reporting group (groupid) that have group_reporting are summed into one
// entry, named after its first member, with its last member's options.

// fioMember is one thing fio runs: a job clone of a fio job file, a job of
// a point run at once, or a whole run of ioprobe's own.
type fioMember struct {
	name  string
	wl    result.Workload
	fio   *result.FioOptions // nil: ioprobe's own (options described from wl)
	s     *result.Summary
	hist  result.Histograms
	depth *result.Depth
	group int  // fio's groupid
	gr    bool // group_reporting
	// runs is how many of fio's jobs the member stands for: fio sums
	// their runtimes (1 for a clone; the workers of a job or run of
	// ioprobe's own, whose CPU ioprobe does not split).
	runs int
}

// fioEntry is one jobs[] entry: the members it sums.
type fioEntry struct {
	members                       []*fioMember
	hist                          result.Histograms
	readBytes, writeBytes, errors uint64
	user, system                  float64 // CPU seconds
	runs                          int
	depth                         *result.Depth
	whole                         bool // the entry is the whole run
}

// fioJobsOf is r's jobs[] entries, fio's groupids from group on, and the
// groupid after them.
func fioJobsOf(r *result.Result, group int) ([]fioJob, int) {
	members := fioMembersOf(r, group)
	var entries []*fioEntry
	for i, m := range members {
		if i == 0 || !m.gr || m.group != members[i-1].group {
			entries = append(entries, &fioEntry{hist: result.Histograms{Read: result.NewHistogram(), Write: result.NewHistogram()}})
		}
		e := entries[len(entries)-1]
		e.add(m)
	}
	out := make([]fioJob, 0, len(entries))
	for _, e := range entries {
		e.whole = len(entries) == 1
		out = append(out, fioJobOf(r, e))
	}
	return out, members[len(members)-1].group + 1
}

func (e *fioEntry) add(m *fioMember) {
	e.members = append(e.members, m)
	e.hist.Read.Merge(m.hist.Read)
	e.hist.Write.Merge(m.hist.Write)
	if m.hist.Sync != nil {
		if e.hist.Sync == nil {
			e.hist.Sync = result.NewHistogram()
		}
		e.hist.Sync.Merge(m.hist.Sync)
	}
	e.readBytes += m.s.ReadBytes
	e.writeBytes += m.s.WriteBytes
	e.errors += m.s.Errors
	e.user += m.s.CPU.ProcessUserSeconds
	e.system += m.s.CPU.ProcessSystemSeconds
	e.runs += m.runs
	if m.depth != nil {
		if e.depth == nil {
			e.depth = &result.Depth{}
		}
		e.depth.Add(m.depth)
	}
}

// fioMembersOf lists what fio would run for r: each clone of a fio job
// file's jobs, else each job of a point run at once, else the run.
func fioMembersOf(r *result.Result, group int) []*fioMember {
	jobs := r.Summary.Jobs
	if len(jobs) == 0 {
		return []*fioMember{{name: result.PointOf(r).Name, wl: r.Workload, s: &r.Summary, hist: r.Histogram, depth: r.IODepth,
			group: group, runs: max(1, r.Workload.Workers)}}
	}
	var out []*fioMember
	for i := range jobs {
		j := &jobs[i]
		gr, newGroup := false, false
		if j.Fio != nil {
			gr, newGroup = fioFlag(j.Fio, "group_reporting"), fioFlag(j.Fio, "new_group")
		}
		if i > 0 && newGroup {
			group++
		}
		if j.Fio == nil || len(j.Clones) == 0 {
			out = append(out, &fioMember{name: j.Name, wl: j.Workload, fio: j.Fio, s: &j.Summary, hist: j.Histogram, depth: j.IODepth,
				group: group, gr: gr, runs: max(1, j.Workload.Workers)})
			continue
		}
		for _, k := range fioCloneOrder(len(j.Clones)) {
			c := &j.Clones[k]
			out = append(out, &fioMember{name: j.Name, wl: j.Workload, fio: j.Fio, s: &c.Summary, hist: c.Histogram, depth: c.IODepth,
				group: group, gr: gr, runs: 1})
		}
	}
	return out
}

// fioCloneOrder is the order fio runs and reports a job's n clones in
// (init.c: add_job adds clone numjobs-1 first, down to 1, after the job
// itself): 0, n-1, …, 1. ioprobe's worker k is fio's clone k (its files
// $jobname.k.M, its offset k × offset_increment).
func fioCloneOrder(n int) []int {
	out := make([]int, 0, n)
	if n > 0 {
		out = append(out, 0)
	}
	for k := n - 1; k >= 1; k-- {
		out = append(out, k)
	}
	return out
}

// fioFlag says whether a fio job has a boolean option set, in its own
// section or in [global] (fio's bool options: bare, or a value other
// than 0).
func fioFlag(o *result.FioOptions, key string) bool {
	set := false
	for _, opts := range [][]result.FioOption{o.Global, o.Job} {
		for _, x := range opts {
			if x.Key == key {
				set = x.Bare || (x.Value != "0" && !strings.EqualFold(x.Value, "false"))
			}
		}
	}
	return set
}

// options are the member's fio job options: as written for a fio job
// file's job (fio's "job options": the section's own, none of [global]'s),
// else described from its workload.
func (m *fioMember) options(r *result.Result) fioObject {
	if m.fio == nil {
		return fioJobOptions(m.name, m.wl, r.Targets)
	}
	return fioOptionsAsWritten(m.fio.Job, r.Targets)
}

// fioGlobalOptions are the [global] options of r's fio job file as fio
// prints them (every [global] section: its last job's); ok is false for a
// result of ioprobe's own.
func fioGlobalOptions(r *result.Result) (fioObject, bool) {
	var global []result.FioOption
	ok := false
	for _, j := range r.Summary.Jobs {
		if j.Fio != nil {
			global, ok = j.Fio.Global, true
		}
	}
	if !ok {
		return nil, false
	}
	return fioOptionsAsWritten(global, r.Targets), true
}

// fioAliases maps fio 3.33's option aliases to their names (options.c):
// fio prints an option under its name.
var fioAliases = map[string]string{
	"readwrite": "rw", "iodepth_batch_submit": "iodepth_batch", "iodepth_batch_complete": "iodepth_batch_complete_min",
	"io_limit": "io_size", "fill_fs": "fill_device", "fileoffset": "offset", "blocksize": "bs", "blockalign": "ba",
	"blocksize_range": "bsrange", "blocksize_unaligned": "bs_unaligned", "nr_files": "nrfiles", "timeout": "runtime",
	"iomem": "mem", "mem_align": "iomem_align", "ratemin": "rate_min", "ratecycle": "rate_cycle",
	"wait_for_previous": "stonewall", "disable_bw": "disable_bw_measurement", "ss": "steadystate",
	"ss_dur": "steadystate_duration", "ss_ramp": "steadystate_ramp_time",
}

// fioPrio is fio 3.33's parse priority of the options that have one: a
// section's options are parsed, and printed, highest first (parse.c:
// sort_options, a stable sort), so kb_base comes first and filename last.
var fioPrio = map[string]int{"kb_base": 1, "unit_base": 1, "lockfile": 1, "cpus_allowed_policy": 1,
	"filename": -1, "filename_format": -1}

// fioOptionsAsWritten is options as fio prints them: under their names,
// by priority, each value as written; an option without a value (a bare
// line: time_based, group_reporting) is not printed. A filename is the
// targets ioprobe ran on when --target replaced the file's.
func fioOptionsAsWritten(opts []result.FioOption, targets []result.Target) fioObject {
	sorted := slices.Clone(opts)
	slices.SortStableFunc(sorted, func(a, b result.FioOption) int { return fioPrio[fioName(b.Key)] - fioPrio[fioName(a.Key)] })
	out := fioObject{}
	for _, o := range sorted {
		if o.Bare {
			continue
		}
		name, v := fioName(o.Key), o.Value
		if name == "filename" && len(targets) > 0 {
			v = fioFilename(targets)
		}
		out = append(out, fioKV{name, v})
	}
	return out
}

func fioName(key string) string {
	if n, ok := fioAliases[key]; ok {
		return n
	}
	return key
}

// fioFilename is fio's filename of targets: their paths joined by ':'
// (a ':' in a path written "\:").
func fioFilename(targets []result.Target) string {
	paths := make([]string, len(targets))
	for i, t := range targets {
		paths[i] = strings.ReplaceAll(t.Path, ":", `\:`)
	}
	return strings.Join(paths, ":")
}
