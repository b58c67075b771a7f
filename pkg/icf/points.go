package icf

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// SectorBytes is the sector 'Disk maximum size counts in (Iometer counts
// the disk's sectors; ioprobe takes 512 bytes, what nearly every disk
// reports as its logical sector).
const SectorBytes = 512

// MaxPoints bounds the points a file unrolls into, so that a typo in the
// cycling is an error rather than a week-long suite.
const MaxPoints = 1024

// Group is the workers of a point that run the same access
// specification with the same outstanding I/Os on the same targets:
// one ioprobe group of len(Workers) workers.
type Group struct {
	Spec        *AccessSpec
	Workers     []string // Iometer's worker names
	QueueDepth  int      // outstanding I/Os per worker per target
	Targets     []string // the file's target names
	RegionBytes int64    // 0: the whole target
	Seed        uint64
	DataPattern int
}

// Point is one of Iometer's test runs: the workers, targets and queue
// depth that run together for one access specification index.
type Point struct {
	Name        string
	AccessIndex int // which of each worker's assigned specifications
	Workers     int // workers that run
	Targets     int // targets that run, summed over the workers
	QueueDepth  int // the cycled queue depth; 0 when the test type does not cycle it
	Groups      []Group
}

// check is what a file must say before it can be run; Options stand in
// for the sections it lacks.
func (c *Config) check(r *reader, o Options) error {
	r.sec = secTestSetup
	if !c.HasTestSetup {
		if o.RunTime <= 0 {
			return r.errf(line{n: 1}, "", "the file has no 'TEST SETUP (it was saved without it): give the run time (--duration, and --ramp)")
		}
		c.RunTime, c.RampUp, r.sawRunTime = o.RunTime, o.RampUp, true
	}
	if !c.HasManagers && len(c.Specs) > 0 {
		w := Worker{Name: "Worker 1", QueueDepth: max(o.QueueDepth, 1), DataPattern: -1, At: r.specsAt}
		for _, s := range c.Specs {
			w.Specs = append(w.Specs, s.Name)
		}
		c.Disk = []Worker{w}
	}
	switch {
	case !r.sawRunTime:
		return r.errf(line{n: 1}, "Run Time", "the file has no run time: Iometer would run until stopped, ioprobe needs one (add a 'TEST SETUP 'Run Time)")
	case c.RunTime == 0:
		return r.errf(line{n: r.runTimeAt}, "Run Time", "0 hours, 0 minutes, 0 seconds: Iometer runs until stopped, ioprobe needs a run time")
	}
	if cyclesQueue(c.TestType) && c.Queue.End > workload.MaxQueueDepth {
		return r.errf(line{n: c.Queue.At}, "Queue Depth Cycling", "end %d: ioprobe runs at most %d outstanding I/Os per worker per target", c.Queue.End, workload.MaxQueueDepth)
	}
	r.sec = secManagers
	for _, d := range c.Disk {
		if d.QueueDepth > workload.MaxQueueDepth {
			return r.errf(line{n: d.At}, "", "worker %q: %d outstanding I/Os: ioprobe runs at most %d per worker per target", d.Name, d.QueueDepth, workload.MaxQueueDepth)
		}
	}
	if len(c.Disk) == 0 {
		return r.errf(line{n: r.lastLine()}, "", "the file has no disk worker ('MANAGER LIST with a 'Worker of type DISK): nothing to run")
	}
	return nil
}

// sim replays Iometer's cycling (CGalileoView::CycleTargets, CycleWorkers,
// CycleWorkersTargets, IncrementTargets, IncrementTargetsSerial,
// CycleQueue, CycleTargetsQueue, Normal) on the workers of the file.
type sim struct {
	c                               *Config
	a                               int   // access specification index
	active                          []int // active targets per worker
	qd                              []int // outstanding I/Os per worker
	workersToRun, targetsToRun, qTo int
	wExp, tExp, qExp                int
}

func (s *sim) eligible(w int) bool {
	d := s.c.Disk[w]
	return s.a < len(d.Specs) && d.Specs[s.a] != "" && len(d.Targets) > 0
}

func (s *sim) setActive(w, n int) int {
	n = max(0, min(n, len(s.c.Disk[w].Targets)))
	s.active[w] = n
	return n
}

func (s *sim) total() int {
	n := 0
	for _, a := range s.active {
		n += a
	}
	return n
}

func (s *sim) clear() { clear(s.active) }

// init is InitAccessSpecRun.
func (s *sim) init() {
	s.wExp, s.tExp, s.qExp = 1, 1, 1
	s.targetsToRun, s.workersToRun, s.qTo = s.c.Targets.Start, s.c.Workers.Start, s.c.Queue.Start
	s.clear()
}

// limit keeps exponential stepping from overflowing; no count goes near it.
const limit = 1 << 30

// step advances a cycled count: plus the step when linear, else
// start × step^exp (the caller says which, as Iometer's code does).
func step(cy Cycling, linear bool, cur, exp *int) {
	if linear {
		*cur = min(*cur+cy.Step, limit)
		return
	}
	v := cy.Start
	for i := 0; i < *exp && v < limit; i++ {
		v *= cy.Step
	}
	*cur = min(v, limit)
	*exp++
}

// linear: Iometer steps linearly for LINEAR and for a step of 1.
func (cy Cycling) linear() bool { return !cy.Exponential || cy.Step == 1 }

func (s *sim) normal() bool {
	old, n := s.total(), 0
	for w := range s.c.Disk {
		if s.eligible(w) {
			n += s.setActive(w, len(s.c.Disk[w].Targets))
		}
	}
	return n > old
}

func (s *sim) cycleTargets() bool {
	old, n := s.total(), 0
	for w := range s.c.Disk {
		if s.eligible(w) {
			n += s.setActive(w, s.targetsToRun)
		}
	}
	step(s.c.Targets, s.c.Targets.linear(), &s.targetsToRun, &s.tExp)
	return n > old
}

func (s *sim) cycleWorkers() bool {
	old, n, left := s.total(), 0, s.workersToRun
	for w := range s.c.Disk {
		if s.eligible(w) {
			n += s.setActive(w, len(s.c.Disk[w].Targets))
			if left--; left == 0 {
				break
			}
		}
	}
	step(s.c.Workers, s.c.Workers.linear(), &s.workersToRun, &s.wExp)
	return n > old
}

// cycleWorkersTargets returns the workers set running (0: done). As in
// Iometer, its target stepping is linear when the worker step is 1.
func (s *sim) cycleWorkersTargets(depth int) int {
	old, n, workers, left := s.total(), 0, 0, s.workersToRun
	for w := range s.c.Disk {
		if s.eligible(w) {
			n += s.setActive(w, s.targetsToRun)
			workers++
			if left--; left == 0 {
				break
			}
		}
	}
	switch {
	case n == 0:
		return 0
	case n > old:
		step(s.c.Targets, !s.c.Targets.Exponential || s.c.Workers.Step == 1, &s.targetsToRun, &s.tExp)
		return workers
	case depth > 0:
		return 0
	}
	s.clear()
	s.targetsToRun, s.tExp = s.c.Targets.Start, 1
	step(s.c.Workers, s.c.Workers.linear(), &s.workersToRun, &s.wExp)
	if s.cycleWorkersTargets(depth+1) > workers {
		return 1
	}
	return 0
}

// incrementTargets is IncrementTargets and IncrementTargetsSerial: they
// differ across managers only, and ioprobe reads one.
func (s *sim) incrementTargets() bool {
	old, n, left := s.total(), 0, s.targetsToRun
	for w := range s.c.Disk {
		if s.eligible(w) {
			set := s.setActive(w, left)
			n += set
			left -= set
		}
	}
	step(s.c.Targets, s.c.Targets.linear(), &s.targetsToRun, &s.tExp)
	return n > old
}

func (s *sim) cycleQueue() bool {
	if s.qTo > s.c.Queue.End {
		return false
	}
	running := false
	for w := range s.c.Disk {
		if s.eligible(w) {
			s.qd[w] = s.qTo
			s.setActive(w, len(s.c.Disk[w].Targets))
			running = true
		}
	}
	step(s.c.Queue, s.c.Queue.linear(), &s.qTo, &s.qExp)
	return running
}

func (s *sim) cycleTargetsQueue() bool {
	if s.cycleQueue() {
		s.clear()
		t, e := s.targetsToRun, s.tExp
		s.cycleTargets()
		s.targetsToRun, s.tExp = t, e
		return true
	}
	s.cycleTargets()
	t, e := s.targetsToRun, s.tExp
	if !s.cycleTargets() {
		return false
	}
	s.targetsToRun, s.tExp = t, e
	s.qExp, s.qTo = 1, s.c.Queue.Start
	s.cycleQueue()
	s.clear()
	s.cycleTargets()
	s.targetsToRun, s.tExp = t, e
	return true
}

// advance is SetActiveTargets: the next run of the current access
// specification index, false when its cycling is done.
func (s *sim) advance() bool {
	switch s.c.TestType {
	case CycleTargets:
		return s.cycleTargets()
	case CycleWorkers:
		return s.cycleWorkers()
	case CycleWorkersAndTargets:
		return s.cycleWorkersTargets(0) > 0
	case IncrementTargetsPar, IncrementTargetsSerial:
		return s.incrementTargets()
	case CycleOutstanding:
		return s.cycleQueue()
	case CycleOutstandingTargets:
		return s.cycleTargetsQueue()
	}
	return s.normal()
}

// Points unrolls the file into Iometer's test runs, in Iometer's order:
// each access specification index (the first specification of every
// worker, then the second, …) times the cycling steps of the test type.
// A run in which every worker is idle measures nothing and is left out.
func (c *Config) Points() ([]Point, error) {
	s := &sim{c: c, active: make([]int, len(c.Disk)), qd: make([]int, len(c.Disk))}
	for w, d := range c.Disk {
		s.qd[w] = d.QueueDepth
	}
	indices := 0
	for _, d := range c.Disk {
		indices = max(indices, len(d.Specs))
	}
	var out []Point
	names := map[string]int{}
	for s.a = 0; s.a < indices; s.a++ {
		s.init()
		for s.advance() {
			if len(out) == MaxPoints {
				return nil, &Error{File: c.File, Line: c.TestTypeAt, Section: secTestSetup, Key: "Test Type",
					Reason: fmt.Sprintf("%s unrolls into more than %d runs: check the cycling's start, step and end", c.TestType, MaxPoints)}
			}
			p := s.point()
			if n := names[p.Name]; n > 0 {
				p.Name = fmt.Sprintf("%s (%d)", p.Name, n+1)
			}
			names[p.Name]++
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, &Error{File: c.File, Section: secManagers,
			Reason: "no worker has both an access specification and a target: nothing to run"}
	}
	return out, nil
}

// point is the current run, workers that share everything grouped.
func (s *sim) point() Point {
	p := Point{AccessIndex: s.a}
	var specs []string
	for w, d := range s.c.Disk {
		if !s.eligible(w) || s.active[w] == 0 {
			continue
		}
		spec := s.c.spec(d.Specs[s.a])
		g := Group{Spec: spec, Workers: []string{d.Name}, QueueDepth: s.qd[w], Targets: d.Targets[:s.active[w]],
			RegionBytes: d.MaxSectors * SectorBytes, Seed: d.Seed, DataPattern: d.DataPattern}
		p.Workers++
		p.Targets += s.active[w]
		if n := len(p.Groups); n > 0 && sameGroup(p.Groups[n-1], g) {
			p.Groups[n-1].Workers = append(p.Groups[n-1].Workers, d.Name)
			continue
		}
		p.Groups = append(p.Groups, g)
		if !slices.Contains(specs, spec.Name) {
			specs = append(specs, spec.Name)
		}
	}
	p.Name = strings.Join(specs, " + ")
	t := s.c.TestType
	if t == CycleWorkers || t == CycleWorkersAndTargets {
		p.Name += fmt.Sprintf("-w%d", p.Workers)
	}
	if t == CycleTargets || t == CycleWorkersAndTargets || t == IncrementTargetsPar || t == IncrementTargetsSerial || t == CycleOutstandingTargets {
		p.Name += fmt.Sprintf("-t%d", p.Targets)
	}
	if cyclesQueue(t) {
		p.QueueDepth = p.Groups[0].QueueDepth
		p.Name += fmt.Sprintf("-qd%d", p.QueueDepth)
	}
	return p
}

func cyclesQueue(testType string) bool {
	return testType == CycleOutstanding || testType == CycleOutstandingTargets
}

func sameGroup(a, b Group) bool {
	return a.Spec == b.Spec && a.QueueDepth == b.QueueDepth && slices.Equal(a.Targets, b.Targets) &&
		a.RegionBytes == b.RegionBytes && a.Seed == b.Seed && a.DataPattern == b.DataPattern
}

// spec returns the specification of that name.
func (c *Config) spec(name string) *AccessSpec {
	for i := range c.Specs {
		if strings.EqualFold(c.Specs[i].Name, name) { // a later section may rename it by case
			return &c.Specs[i]
		}
	}
	return nil
}

// DiskTargets are the target names the workers use, in order of first
// use: what --target replaces, one for one.
func (c *Config) DiskTargets() []string {
	var out []string
	for _, d := range c.Disk {
		for _, t := range d.Targets {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// Retarget replaces the file's disk targets by paths, one for one in the
// order DiskTargets lists them (Windows drive letters and physical drive
// numbers mean nothing here). A file without target assignments (saved
// without them) gives every worker all the paths. It returns what
// replaced what, for the user to read.
func (c *Config) Retarget(paths []string) ([]string, error) {
	names := c.DiskTargets()
	if len(names) == 0 {
		for i := range c.Disk {
			c.Disk[i].Targets = slices.Clone(paths)
		}
		return []string{fmt.Sprintf("the file assigns no targets: every worker runs on %s", strings.Join(paths, ", "))}, nil
	}
	if len(paths) != len(names) {
		quoted := make([]string, len(names))
		for i, n := range names {
			quoted[i] = fmt.Sprintf("%q", n)
		}
		return nil, fmt.Errorf("the file's workers use %d disk target(s) (%s): give --target %d time(s), in that order, to replace them", len(names), strings.Join(quoted, ", "), len(names))
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("target %q is %s", n, paths[i])
	}
	for i := range c.Disk {
		for j, t := range c.Disk[i].Targets {
			c.Disk[i].Targets[j] = paths[slices.Index(names, t)]
		}
	}
	return out, nil
}
