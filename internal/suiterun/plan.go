package suiterun

import (
	"time"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/runner"
	"github.com/ioprobe/ioprobe/internal/target"
	"github.com/ioprobe/ioprobe/internal/version"
)

// Settings are what every run of a suite (or a single run) shares.
type Settings struct {
	AllowDestructive bool
	MaxErrors        uint64        // stop a run after this many failed I/Os (0: never)
	Interval         time.Duration // snapshot period
	Engines          *engine.Registry
	// NoDeviceLatency: no BPF programs time the devices' requests
	// (run --device-latency=false).
	NoDeviceLatency bool
	// Created, when set, is handed the files each run creates (see
	// runner.Plan.Created).
	Created func(path string, c *target.CreatedFile, err error)
	// Note, when set, hears each run's notes as they are known (see
	// runner.Plan.Note).
	Note func(note string)
}

// Plan is the runner plan of one unit: one group of workers per access
// specification, all on the unit's targets. The caller adds observers.
func (s Settings) Plan(u Unit) runner.Plan {
	p := runner.Plan{
		AllowDestructive: s.AllowDestructive,
		MaxErrors:        s.MaxErrors,
		Interval:         s.Interval,
		Version:          version.Version,
		Engines:          s.Engines,
		NoDeviceLatency:  s.NoDeviceLatency,
		Created:          s.Created,
		Note:             s.Note,
	}
	if len(u.Point.Specs) > 1 {
		p.Name = u.Point.Name
	}
	for i, spec := range u.Point.Specs {
		p.Groups = append(p.Groups, runner.Group{Spec: spec, Targets: u.TargetsOf(i), Clones: u.Clones})
	}
	return p
}

// Check checks every unit against its targets before the first one runs
// (a write point on a target that refuses writes). It returns the first
// unit refused and why.
func (s Settings) Check(units []Unit) (Unit, error) {
	for _, u := range units {
		if err := runner.Check(s.Plan(u)); err != nil {
			return u, err
		}
	}
	return Unit{}, nil
}
