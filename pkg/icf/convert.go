package icf

import (
	"fmt"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// SectorAlign is the alignment Iometer's align 0 stands for: "sector
// boundaries". ioprobe takes 512 bytes (a target whose logical block is
// larger refuses it before the run, saying so).
const SectorAlign = 512

// workloadLines converts the specification's lines to ioprobe's.
func (a *AccessSpec) workloadLines() []workload.Line {
	out := make([]workload.Line, len(a.Lines))
	for i, l := range a.Lines {
		align := l.Align
		if align == 0 {
			align = SectorAlign
		}
		out[i] = workload.Line{Bytes: l.Bytes, Share: l.Share, ReadPct: l.ReadPct, RandomPct: l.RandomPct,
			Align: align, DelayMs: l.DelayMs, Burst: l.Burst}
	}
	return out
}

// Workload is the point's access specifications in ioprobe's terms, one
// per group (its workers, outstanding I/Os, region, seed, the file's run
// and ramp-up times, engine as given), defaults applied and validated,
// with each group's targets.
func (c *Config) Workload(p Point, engine workload.EngineName) ([]workload.Spec, [][]string, error) {
	specs := make([]workload.Spec, len(p.Groups))
	targets := make([][]string, len(p.Groups))
	for i, g := range p.Groups {
		s := workload.Spec{Name: g.Spec.Name, Lines: g.Spec.workloadLines(), QueueDepth: g.QueueDepth, Workers: len(g.Workers),
			Ramp: c.RampUp, Duration: c.RunTime, RegionBytes: g.RegionBytes, Seed: g.Seed, Engine: engine}.WithDefaults()
		if err := s.Validate(); err != nil {
			return nil, nil, &Error{File: c.File, Line: g.Spec.At, Section: secSpecs,
				Reason: fmt.Sprintf("access specification %q for worker %q: %v", g.Spec.Name, g.Workers[0], err)}
		}
		specs[i], targets[i] = s, g.Targets
	}
	return specs, targets, nil
}

// Notes say where ioprobe's run differs from Iometer's in a way the user
// must know.
func (c *Config) Notes() []string {
	var out []string
	for _, d := range c.Disk {
		switch d.DataPattern {
		case 0, 1:
			name := map[int]string{0: "repeating bytes", 1: "pseudo random"}[d.DataPattern]
			out = append(out, fmt.Sprintf("worker %q: Iometer's data pattern %d (%s) writes compressible data, ioprobe writes incompressible data: write figures differ on storage that compresses or deduplicates", d.Name, d.DataPattern, name))
		}
	}
	return out
}
