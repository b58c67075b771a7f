package suiterun

import (
	"context"
	"fmt"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// RunFunc measures a unit once (run counts the repeats from 1). An error
// means nothing was measured.
type RunFunc func(ctx context.Context, u Unit, run int) (*result.Result, error)

// Executor runs units one after another, each Repeat times, and measures
// a unit that repeats an earlier one's specifications only once.
type Executor struct {
	Run    RunFunc
	Repeat int // runs of each measured unit (less than 1: one)
	// KeepGoing carries on after a unit that measured nothing or ended
	// with I/O errors (the daemon: the next point may measure); otherwise
	// execution stops there (the command line: the results so far are
	// partial). The end of ctx always stops it.
	KeepGoing bool
	// Suite, when set, names the suite in each kept result's Point (the
	// suite file's record of which point a result measured).
	Suite string
	// Kept receives each unit's result, in order: one run, or its repeats
	// merged with their spread (partial repeats when a run failed).
	Kept func(u Unit, res *result.Result)
	// Reused hears of a unit that was not measured because the earlier
	// unit from ran the same specifications on the same targets; res is
	// the copy kept for u (nil when from measured nothing). It is called
	// after Kept.
	Reused func(u, from Unit, res *result.Result)
}

// Stopped says why execution ended before the last unit.
type Stopped struct {
	Unit Unit
	// Err is the error of a run that measured nothing.
	Err error
	// Result is the last run's result when it ended early (interrupted)
	// or with I/O errors.
	Result *result.Result
	// Interrupted: ctx ended or the last run was interrupted.
	Interrupted bool
}

func (s *Stopped) Error() string {
	switch {
	case s.Err != nil:
		return fmt.Sprintf("point %s: %v", s.Unit.Label(), s.Err)
	case s.Result != nil && s.Result.Status == result.StatusErrors:
		return fmt.Sprintf("stopped at point %s: %s", s.Unit.Label(), s.Result.Message)
	}
	return "interrupted at point " + s.Unit.Label()
}

func (s *Stopped) Unwrap() error { return s.Err }

// Measured is the units that SameAs does not report from an earlier one.
func Measured(units []Unit) []Unit {
	var out []Unit
	for i, j := range SameAs(units) {
		if j < 0 {
			out = append(out, units[i])
		}
	}
	return out
}

// Execute runs the units. It returns nil after the last one, a *Stopped
// when a run or ctx ended it early, or the error of merging repeats.
func (e Executor) Execute(ctx context.Context, units []Unit) error {
	same := SameAs(units)
	kept := make([]*result.Result, len(units))
	for i, u := range units {
		if ctx.Err() != nil {
			return &Stopped{Unit: u, Interrupted: true}
		}
		if j := same[i]; j >= 0 {
			var r *result.Result
			if kept[j] != nil {
				c := *kept[j]
				e.annotate(&c, u)
				if c.Point != nil {
					c.Point.SameAs = units[j].Point.Name
				}
				r = &c
				e.keep(u, r)
			}
			kept[i] = r
			if e.Reused != nil {
				e.Reused(u, units[j], r)
			}
			continue
		}
		var runs []*result.Result
		var runErr error
		for k := 1; k <= max(e.Repeat, 1); k++ {
			res, err := e.Run(ctx, u, k)
			if err != nil {
				runErr = err
				break
			}
			runs = append(runs, res)
			if res.Status != result.StatusOK {
				break
			}
		}
		if len(runs) > 0 {
			res, err := e.merge(u, runs)
			if err != nil && runErr == nil {
				return err
			}
			if err == nil {
				kept[i] = res
				e.keep(u, res)
			}
		}
		switch {
		case ctx.Err() != nil:
			return &Stopped{Unit: u, Err: runErr, Interrupted: true}
		case e.KeepGoing:
		case runErr != nil:
			return &Stopped{Unit: u, Err: runErr}
		case runs[len(runs)-1].Status != result.StatusOK:
			last := runs[len(runs)-1]
			return &Stopped{Unit: u, Result: last, Interrupted: last.Status == result.StatusInterrupted}
		}
	}
	return nil
}

// merge is a unit's result: one run, or the repeats merged.
func (e Executor) merge(u Unit, runs []*result.Result) (*result.Result, error) {
	res := runs[0]
	if len(runs) > 1 {
		m, err := result.MergeRepeats(runs...)
		if err != nil {
			return nil, err
		}
		res = m
	}
	e.annotate(res, u)
	return res, nil
}

func (e Executor) annotate(res *result.Result, u Unit) {
	if e.Suite == "" {
		return
	}
	p := u.Point
	res.Point = &result.Point{Suite: e.Suite, Name: p.Name, Section: p.Section, Pattern: p.Pattern, SizeBytes: p.Size, Index: u.Index}
	if u.Side != "" {
		res.Point.Target = u.Side
	} else {
		res.Point.Targets = len(u.Targets)
	}
}

func (e Executor) keep(u Unit, res *result.Result) {
	if e.Kept != nil {
		e.Kept(u, res)
	}
}
