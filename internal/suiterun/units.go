package suiterun

import (
	"fmt"
	"slices"
	"time"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Unit is one run of a suite point on its targets.
type Unit struct {
	Index   int // the point's index in its suite
	Point   workload.SuitePoint
	Targets []string
	Side    string // the target of a point run on each target in turn
	// SpecTargets, when set, are the targets of each of Point.Specs (an
	// imported Iometer file whose workers have targets of their own);
	// Targets is then their union.
	SpecTargets [][]string
	// Clones keeps each worker's figures in the result (summary.jobs[]
	// .clones): fio's job clones, which fio reports one by one.
	Clones bool
	// Setting is what the point runs under besides its specifications
	// and targets (a fio job's ioscheduler=): points that differ in it
	// are each measured, never one reported from the other's run.
	Setting string
}

// TargetsOf returns the targets of the unit's i-th specification.
func (u Unit) TargetsOf(i int) []string {
	if u.SpecTargets != nil {
		return u.SpecTargets[i]
	}
	return u.Targets
}

// Label names the unit in messages: "random-read-4k on /dev/sdb".
func (u Unit) Label() string {
	if u.Side != "" {
		return u.Point.Name + " on " + u.Side
	}
	what := "targets"
	if len(u.Targets) == 1 {
		what = "target"
	}
	return fmt.Sprintf("%s on %d %s at once", u.Point.Name, len(u.Targets), what)
}

// Planned is the unit's planned ramp-up and run time.
func (u Unit) Planned() time.Duration {
	s := u.Point.Specs[0]
	return s.Ramp + s.Duration
}

// Units runs the suite on each target in turn, then the points that span
// several targets.
func Units(s *workload.Suite, targets []string) []Unit {
	var out []Unit
	for _, t := range targets {
		for i, p := range s.Points {
			if p.Span == 0 {
				out = append(out, Unit{Index: i, Point: p, Targets: []string{t}, Side: t})
			}
		}
	}
	for i, p := range s.Points {
		if p.Span > 0 {
			out = append(out, Unit{Index: i, Point: p, Targets: targets[:p.Span]})
		}
	}
	return out
}

// SameAs is the measured-once rule: it maps each unit to the earlier unit
// that runs the same access specifications (their names aside) on the same
// targets, or to -1. Such a unit is not measured again; the earlier
// measurement is reported under both points (peak-iops' 8 KiB random read
// at 32 outstanding is a request size and one worker of the workers
// scaling).
func SameAs(units []Unit) []int {
	out := make([]int, len(units))
	for i, u := range units {
		out[i] = -1
		for j := range units[:i] {
			if out[j] < 0 && slices.Equal(units[j].Targets, u.Targets) && units[j].Setting == u.Setting && workload.SameSpecs(units[j].Point.Specs, u.Point.Specs) &&
				slices.EqualFunc(units[j].SpecTargets, u.SpecTargets, slices.Equal) {
				out[i] = j
				break
			}
		}
	}
	return out
}
