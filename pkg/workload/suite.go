package workload

import (
	"fmt"
	"strings"
)

// SuitePoint is one measurement of a suite: one access specification, or
// several run at once on their own workers (the business suite's mixed
// run), on each target in turn or on several targets at once.
type SuitePoint struct {
	// Name is stable and unique within the suite ("random-read-4k",
	// "scaling-seq-read-64k-w8"): compare and merge pair points by it.
	Name string
	// Section is the table or figure of the report the point feeds; the
	// points of a section are tabulated and drawn together.
	Section string
	// Pattern is the reports' column ("Random Read", "File Server").
	Pattern string
	// Size is the reports' row: the data size in bytes (0 for a mixed run
	// of several sizes).
	Size int64
	// Specs holds one access specification per group of workers.
	Specs []Spec
	// Span is 0 when the point runs on each target in turn (targets side
	// by side), or n > 0 when it runs on the first n targets at once
	// (scaling over targets).
	Span int
}

// WritesData reports whether any of the point's specifications writes.
func (p *SuitePoint) WritesData() bool {
	for i := range p.Specs {
		if p.Specs[i].WritesData() {
			return true
		}
	}
	return false
}

// Suite is a named list of points that rebuilds a report's experiment.
type Suite struct {
	Name   string
	Title  string
	Source string // the report, tables and figures it rebuilds
	Points []SuitePoint
}

// SuiteOptions are what the command line sets for every point.
type SuiteOptions struct {
	// Base carries the run parameters every point inherits: Duration, Ramp,
	// RegionBytes, Engine, Seed, the stop-after budget (IOCount, IOBytes,
	// Loops), Verify, the flushes (Fsync, Fdatasync, Sync) and fio's
	// batch sizes (SubmitMode, SubmitBatch, CompleteMin, CompletePoll,
	// CompleteMax).
	Base Spec
	// QueueDepth and Workers, when positive, replace the suite's own values
	// (--qd, --workers) without changing point names.
	QueueDepth, Workers int
	// Cycles are the --cycle dimensions. A cycled dimension replaces the
	// list of values the suite has for it (the sizes of characterize, the
	// workers of scaling); a suite that has no list for it runs every point
	// at every value and names the points accordingly ("-qd4").
	Cycles []Cycle
	// Targets is the number of targets given; points that scale over
	// targets use up to this many.
	Targets int
	// Custom is the access specification of the "custom" suite (run's
	// flags), complete with run time and defaults.
	Custom *Spec
	// ReadOnly drops the points that write.
	ReadOnly bool
}

// SuiteInfo describes a suite for listings and help.
type SuiteInfo struct {
	Name        string
	Description string
	Source      string
	// Owns lists the dimensions the suite varies itself; a --cycle of one
	// of them replaces the suite's values.
	Owns []string
}

type suiteDef struct {
	SuiteInfo
	build func(b *suiteBuilder)
}

// Section titles, shared with the docs.
const (
	SectionCharacterize = "Data size × access pattern (esx2 Tables 2–5, Figures 2–9)"
	SectionSequential   = "Sequential throughput by block size (esx35 Figures 1–4)"
	SectionCPUCost      = "CPU cost of an 8 KiB 50% read 50% random mix (esx35 Figure 6)"
	SectionRequestSize  = "Random reads by request size (vsphere5 Figures 3–4)"
	SectionPeakWorkers  = "Scaling over workers (vsphere5 Figure 2)"
	SectionPeakTargets  = "Scaling over targets (vsphere5 Figure 7)"
	SectionBusiness     = "Business workloads (esg appendix, Figures 8–10, 13)"
	SectionScaling      = "Aggregate throughput over workers (esx35 Figure 5, vsphere5 Figure 2)"
	SectionCustom       = "Custom access specification"
)

// MaxSuitePoints bounds a suite after cycling, for the reason
// MaxCycleValues bounds one list: three cycles of 64 values multiply to
// hundreds of thousands of points (years of runs, and the memory to plan
// them) where the user meant a few dozen.
const MaxSuitePoints = 4096

// CustomSuite is the suite made of run's access specification.
const CustomSuite = "custom"

var suiteDefs = []suiteDef{
	{SuiteInfo{"characterize", "{random write, random read, sequential write, sequential read} × {4, 8, 16, 32, 64 KiB}, 16 outstanding, 1 worker (20 points)",
		"esx2-buslogic-vs-lsilogic: Table 1; Tables 2–5, Figures 2–9", []string{CycleBS}}, buildCharacterize},
	{SuiteInfo{"protocols", "sequential read and write at 1 KiB … 512 KiB; the 8 KiB 50% read 50% random mix for CPU cost (21 points); a small --size gives the cached run",
		"esx35-storage-protocols: Figures 1–4, 6", []string{CycleBS}}, buildProtocols},
	{SuiteInfo{"peak-iops", "100% random read at 512 B, 1, 2, 4, 8 KiB with 16 and 32 outstanding; 8 KiB over 1, 2, 4, 8 workers and over the targets given",
		"vsphere5-million-iops: Figures 2–4, 7", []string{CycleBS, CycleQD, CycleWorkers}}, buildPeakIOPS},
	{SuiteInfo{"business", "file server, OLTP, Exchange DB, log, video on demand, and all five at once on their own workers (6 points)",
		"esg-iscsi-vmware: appendix workloads, Figures 8–10, 13", nil}, buildBusiness},
	{SuiteInfo{"scaling", "64 KiB sequential read and 8 KiB random read with 1, 2, 4, 8, 16, 32 workers (12 points)",
		"esx35-storage-protocols Figure 5, vsphere5-million-iops Figure 2", []string{CycleWorkers}}, buildScaling},
	{SuiteInfo{CustomSuite, "the access specification of run's flags (--bs, --read-pct, --random-pct, --profile …), cycled with --cycle",
		"Iometer's cycling of outstanding I/Os and workers", nil}, buildCustom},
}

// Suites lists the suites in the order `ioprobe suite --help` shows them.
func Suites() []SuiteInfo {
	out := make([]SuiteInfo, len(suiteDefs))
	for i, d := range suiteDefs {
		out[i] = d.SuiteInfo
	}
	return out
}

// SuiteNames lists the suite names.
func SuiteNames() []string {
	out := make([]string, len(suiteDefs))
	for i, d := range suiteDefs {
		out[i] = d.Name
	}
	return out
}

// BuildSuite builds the named suite's points for the options, validates
// every access specification, and returns a *FieldError for bad input.
func BuildSuite(name string, o SuiteOptions) (*Suite, error) {
	var def *suiteDef
	for i := range suiteDefs {
		if suiteDefs[i].Name == normalizeName(name) {
			def = &suiteDefs[i]
		}
	}
	if def == nil {
		return nil, fieldErr("suite", name, "unknown suite (known: %s)", strings.Join(SuiteNames(), ", "))
	}
	if def.Name == CustomSuite && o.Custom == nil {
		return nil, fieldErr("suite", name, "the custom suite needs an access specification")
	}
	b := &suiteBuilder{o: o, cycles: map[string][]int64{}, used: map[string]bool{}}
	for _, c := range o.Cycles {
		if c.Dim == CycleHosts {
			return nil, fieldErr("--cycle", c.Dim, "cycles the hosts of 'ioprobe fleet suite'; a suite on one host has one")
		}
		if _, dup := b.cycles[c.Dim]; dup {
			return nil, fieldErr("--cycle", c.Dim, "cycled twice; give one --cycle per dimension")
		}
		b.cycles[c.Dim] = c.Values
	}
	def.build(b)
	n := len(b.points)
	for _, c := range o.Cycles {
		if !b.used[c.Dim] {
			n *= len(c.Values)
		}
	}
	if n > MaxSuitePoints {
		dims := make([]string, len(o.Cycles))
		for i, c := range o.Cycles {
			dims[i] = c.Dim
		}
		return nil, fieldErr("--cycle", strings.Join(dims, ","), "suite %s would run %d points (at most %d): cycle fewer values", def.Name, n, MaxSuitePoints)
	}
	points := b.points
	// Cycles the suite has no list for multiply every point, in the order
	// the dimensions were given.
	for _, c := range o.Cycles {
		if !b.used[c.Dim] {
			points = expand(points, c)
		}
	}
	s := &Suite{Name: def.Name, Title: def.Description, Source: def.Source}
	seen := map[string]bool{}
	for _, p := range points {
		if o.ReadOnly && p.WritesData() {
			continue
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("suite %s: point %s defined twice", def.Name, p.Name)
		}
		seen[p.Name] = true
		for i := range p.Specs {
			if err := p.Specs[i].Validate(); err != nil {
				if fe, ok := err.(*FieldError); ok {
					return nil, &FieldError{Field: fe.Field, Value: fe.Value, Reason: fe.Reason + " (in suite point " + p.Name + ")"}
				}
				return nil, err
			}
		}
		s.Points = append(s.Points, p)
	}
	if len(s.Points) == 0 {
		return nil, fieldErr("--read-only", "given", "suite %s has no point that only reads", def.Name)
	}
	return s, nil
}

// expand runs every point at every value of c.
func expand(points []SuitePoint, c Cycle) []SuitePoint {
	var out []SuitePoint
	for _, p := range points {
		for _, v := range c.Values {
			q := p
			q.Name += cycleTag(c.Dim, v)
			q.Specs = make([]Spec, len(p.Specs))
			copy(q.Specs, p.Specs)
			for i := range q.Specs {
				s := &q.Specs[i]
				switch c.Dim {
				case CycleQD:
					s.QueueDepth = int(v)
				case CycleWorkers:
					s.Workers = int(v)
				case CycleBS:
					s.BlockSizes = one(v)
					q.Size = v
				}
			}
			out = append(out, q)
		}
	}
	return out
}

// suiteBuilder gives suite definitions their values: the suite's own
// lists unless the command line cycles or fixes them.
type suiteBuilder struct {
	o      SuiteOptions
	cycles map[string][]int64
	used   map[string]bool
	points []SuitePoint
}

// list returns the values of dim: cycled, else fixed by --qd/--workers,
// else the suite's own def.
func (b *suiteBuilder) list(dim string, def ...int64) []int64 {
	b.used[dim] = true
	if c, ok := b.cycles[dim]; ok {
		return c
	}
	switch {
	case dim == CycleQD && b.o.QueueDepth > 0:
		return []int64{int64(b.o.QueueDepth)}
	case dim == CycleWorkers && b.o.Workers > 0:
		return []int64{int64(b.o.Workers)}
	}
	return def
}

// spec is an access specification with the base run parameters and the
// suite's (or the command line's) outstanding I/Os and workers.
func (b *suiteBuilder) spec(name string, bs int64, readPct, randomPct int) Spec {
	s := b.o.Base
	s.Name = name
	s.BlockSizes = one(bs)
	s.ReadPct, s.RandomPct = readPct, randomPct
	s.QueueDepth, s.Workers = DefaultQueueDepth, DefaultWorkers
	if b.o.QueueDepth > 0 {
		s.QueueDepth = b.o.QueueDepth
	}
	if b.o.Workers > 0 {
		s.Workers = b.o.Workers
	}
	s.Align, s.RateIOPS = 0, 0 // access specification: the suite's, never the base's
	return s.WithDefaults()
}

func (b *suiteBuilder) add(section, name, pattern string, size int64, specs ...Spec) *SuitePoint {
	b.points = append(b.points, SuitePoint{Name: name, Section: section, Pattern: pattern, Size: size, Specs: specs})
	return &b.points[len(b.points)-1]
}

// accessPattern is one of the four pure patterns of esx2 Table 1.
type accessPattern struct {
	slug, label       string
	readPct, randomPc int
}

var (
	randomWrite = accessPattern{"random-write", "Random Write", 0, 100}
	randomRead  = accessPattern{"random-read", "Random Read", 100, 100}
	seqWrite    = accessPattern{"sequential-write", "Sequential Write", 0, 0}
	seqRead     = accessPattern{"sequential-read", "Sequential Read", 100, 0}
)

func sizes(from, to int64) []int64 {
	var out []int64
	for v := from; v <= to; v *= 2 {
		out = append(out, v)
	}
	return out
}

// characterize: esx2 Table 1, in the column order of its Tables 2–5.
func buildCharacterize(b *suiteBuilder) {
	for _, p := range []accessPattern{randomWrite, randomRead, seqWrite, seqRead} {
		for _, bs := range b.list(CycleBS, sizes(4*KiB, 64*KiB)...) {
			name := p.slug + "-" + SizeSlug(bs)
			b.add(SectionCharacterize, name, p.label, bs, b.spec(name, bs, p.readPct, p.randomPc))
		}
	}
}

// protocols: esx35 Figures 1–4 (sequential read and write by block size)
// and Figure 6 (CPU cost of the 8 KiB 50/50 mix). A small --size puts the
// working set in the array's cache: the report's cached run.
func buildProtocols(b *suiteBuilder) {
	for _, p := range []accessPattern{seqRead, seqWrite} {
		for _, bs := range b.list(CycleBS, sizes(1*KiB, 512*KiB)...) {
			name := p.slug + "-" + SizeSlug(bs)
			b.add(SectionSequential, name, p.label, bs, b.spec(name, bs, p.readPct, p.randomPc))
		}
	}
	b.add(SectionCPUCost, "cpu-cost-8k", "50% Read 50% Random", 8*KiB, b.spec("cpu-cost-8k", 8*KiB, 50, 50))
}

// peak-iops: vsphere5. Random reads by request size at 16 and 32
// outstanding (Figures 3, 4); 8 KiB at 32 outstanding over workers
// (Figure 2, VMs there); 8 KiB at 16 outstanding over targets, one worker
// driving them all (Figure 7, virtual disks and controllers there).
func buildPeakIOPS(b *suiteBuilder) {
	qds := b.list(CycleQD, 16, 32)
	for _, qd := range qds {
		for _, bs := range b.list(CycleBS, 512, 1*KiB, 2*KiB, 4*KiB, 8*KiB) {
			name := fmt.Sprintf("random-read-%s-qd%d", SizeSlug(bs), qd)
			s := b.spec(name, bs, 100, 100)
			s.QueueDepth = int(qd)
			b.add(SectionRequestSize, name, fmt.Sprintf("Random Read, %d outstanding", qd), bs, s)
		}
	}
	workerQDs := qds
	if _, cycled := b.cycles[CycleQD]; !cycled && b.o.QueueDepth == 0 {
		workerQDs = []int64{32}
	}
	for _, qd := range workerQDs {
		for _, w := range b.list(CycleWorkers, 1, 2, 4, 8) {
			name := fmt.Sprintf("workers-8k-qd%d-w%d", qd, w)
			s := b.spec(name, 8*KiB, 100, 100)
			s.QueueDepth, s.Workers = int(qd), int(w)
			b.add(SectionPeakWorkers, name, fmt.Sprintf("Random Read, %d outstanding", qd), 8*KiB, s)
		}
	}
	targetQDs := qds
	if _, cycled := b.cycles[CycleQD]; !cycled && b.o.QueueDepth == 0 {
		targetQDs = []int64{16}
	}
	for _, qd := range targetQDs {
		for _, n := range spans(b.o.Targets) {
			name := fmt.Sprintf("targets-8k-qd%d-t%d", qd, n)
			s := b.spec(name, 8*KiB, 100, 100)
			s.QueueDepth = int(qd)
			b.add(SectionPeakTargets, name, fmt.Sprintf("Random Read, %d outstanding", qd), 8*KiB, s).Span = n
		}
	}
}

// spans is 1, 2, 4, … up to n, and n itself.
func spans(n int) []int {
	n = max(n, 1)
	var out []int
	for v := 1; v < n; v *= 2 {
		out = append(out, v)
	}
	return append(out, n)
}

// business: the esg appendix workloads, each alone, then all at once on
// their own workers ("mixed").
var businessWorkloads = []struct{ preset, slug, label string }{
	{"file-server", "file-server", "File Server"},
	{"oltp", "oltp", "OLTP"},
	{"exchange-db", "exchange-db", "Exchange DB"},
	{"log", "log", "Log"},
	{"video-on-demand", "video-on-demand", "Video on Demand"},
}

func buildBusiness(b *suiteBuilder) {
	var mixed []Spec
	for _, w := range businessWorkloads {
		p, err := LookupPreset(w.preset)
		if err != nil {
			panic(err) // the presets are ours
		}
		s := b.spec(w.slug, p.Spec.BlockSizes[0].Bytes, p.Spec.ReadPct, p.Spec.RandomPct)
		b.add(SectionBusiness, w.slug, w.label, s.MaxBlock(), s)
		mixed = append(mixed, s)
	}
	b.add(SectionBusiness, "mixed", "Mixed", 0, mixed...)
}

// scaling: esx35 Figure 5 (64 KiB sequential reads, 1 to 32 VMs) and
// vsphere5 Figure 2 (8 KiB random reads, VMs), with workers for VMs.
func buildScaling(b *suiteBuilder) {
	for _, p := range []struct {
		ap accessPattern
		bs int64
	}{{seqRead, 64 * KiB}, {randomRead, 8 * KiB}} {
		for _, w := range b.list(CycleWorkers, 1, 2, 4, 8, 16, 32) {
			name := fmt.Sprintf("%s-%s-w%d", p.ap.slug, SizeSlug(p.bs), w)
			s := b.spec(name, p.bs, p.ap.readPct, p.ap.randomPc)
			s.Workers = int(w)
			b.add(SectionScaling, name, p.ap.label, p.bs, s)
		}
	}
}

// custom: one point from run's flags; --cycle does the rest.
func buildCustom(b *suiteBuilder) {
	s := *b.o.Custom
	s.BlockSizes = append([]BlockSize(nil), s.BlockSizes...)
	name := s.Name
	if name == "" {
		name = "custom"
		s.Name = name
	}
	b.add(SectionCustom, name, PatternLabel(s.ReadPct, s.RandomPct), s.MaxBlock(), s)
}

// PatternLabel names an access pattern the way the reports head their
// columns: "Random Read", "Sequential Write", or "67% Read 100% Random".
func PatternLabel(readPct, randomPct int) string {
	kind := map[int]string{100: "Random", 0: "Sequential"}[randomPct]
	op := map[int]string{100: "Read", 0: "Write"}[readPct]
	if kind != "" && op != "" {
		return kind + " " + op
	}
	return fmt.Sprintf("%d%% Read %d%% Random", readPct, randomPct)
}
