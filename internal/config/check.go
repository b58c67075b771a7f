package config

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// A valid file can still name targets that cannot work on this machine: a
// file in a directory that does not exist or on tmpfs, a device that is
// missing, not a block device, or refused for writing. Load does not look
// (a reload must not depend on the state of a disk); CheckRuns does, without
// touching any data.

// RunCheck makes every check a run of specs on t would make before it
// starts, creating and writing nothing (the daemon's is runner.Check of
// the run's plan).
type RunCheck func(t *Target, specs []workload.Spec) error

// Unstartable is a problem that keeps jobs and modules from starting on
// this machine: Problem places it at the target's path in the file.
type Unstartable struct {
	Problem
	Target  string
	Jobs    []string // in file order
	Modules []string // in file order
	// API: runs posted to the run API cannot start on the target either
	// (checked when the file has an api section, with a 4 KiB random read).
	API bool
}

// CheckRuns checks every job on its target and every module on every target
// with check. Users of a target that fail for the same reason share one
// problem. The result is in file order; empty when everything can start.
func (c *Config) CheckRuns(check RunCheck) []Unstartable {
	var out []Unstartable
	for _, t := range byLine(c, c.Targets, "targets.") {
		tgt := c.Targets[t]
		byErr := map[string]*Unstartable{}
		var order []string
		fail := func(err error) *Unstartable {
			msg := err.Error()
			u := byErr[msg]
			if u == nil {
				path := "targets." + t + ".path"
				u = &Unstartable{Target: t, Problem: Problem{File: c.File, Line: c.lineOf(path), Path: path, Msg: msg}}
				byErr[msg] = u
				order = append(order, msg)
			}
			return u
		}
		for _, name := range byLine(c, c.Jobs, "jobs.") {
			j := c.Jobs[name]
			if j.Target != tgt {
				continue
			}
			var specs []workload.Spec
			for _, p := range j.Points {
				specs = append(specs, p.Specs...)
			}
			if err := check(tgt, specs); err != nil {
				u := fail(err)
				u.Jobs = append(u.Jobs, name)
			}
		}
		for _, name := range byLine(c, c.Modules, "modules.") {
			s := c.Modules[name].Spec
			s.RegionBytes = s.RegionWithin(tgt.Size)
			if err := check(tgt, []workload.Spec{s}); err != nil {
				u := fail(err)
				u.Modules = append(u.Modules, name)
			}
		}
		if c.API.Given {
			s := workload.Spec{ReadPct: 100, RandomPct: 100, Duration: time.Second}.WithDefaults()
			s.RegionBytes = tgt.Size
			if err := check(tgt, []workload.Spec{s}); err != nil {
				fail(err).API = true
			}
		}
		for _, msg := range order {
			u := byErr[msg]
			u.Msg = fmt.Sprintf("%s cannot start: %s", users(u.Jobs, u.Modules, u.API), msg)
			out = append(out, *u)
		}
	}
	return out
}

// users names jobs and modules: "job a", "jobs a and b",
// "jobs a, b and c, and module m"; then "runs of the run API".
func users(jobs, modules []string, api bool) string {
	var parts []string
	if len(jobs) > 0 {
		parts = append(parts, plural(jobs, "job", "jobs"))
	}
	if len(modules) > 0 {
		parts = append(parts, plural(modules, "module", "modules"))
	}
	s := strings.Join(parts, " and ")
	if len(parts) == 2 && len(jobs) > 1 {
		s = parts[0] + ", and " + parts[1]
	}
	switch {
	case !api:
		return s
	case s == "":
		return "runs of the run API"
	}
	return s + ", and runs of the run API"
}

func plural(names []string, one, many string) string {
	if len(names) == 1 {
		return one + " " + names[0]
	}
	return many + " " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// byLine returns the names of m in the order of their keys in the file.
func byLine[T any](c *Config, m map[string]T, prefix string) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Slice(names, func(a, b int) bool {
		la, lb := c.lineOf(prefix+names[a]), c.lineOf(prefix+names[b])
		if la != lb {
			return la < lb
		}
		return names[a] < names[b]
	})
	return names
}

// lineOf is the line of the nearest key on path that the file has.
func (c *Config) lineOf(path string) int {
	return (&problems{lines: c.lines}).lineOf(path)
}
