package exporter

import (
	"github.com/ioprobe/ioprobe/pkg/result"
)

// finished is how a run of the daemon ended, whoever started it: a job's
// schedule or trigger, the run API, /probe.
type finished struct {
	res *result.Result // nil: it measured nothing
	err error          // why it could not start, or ended early
	// cut says the daemon stopped it (shutdown, reload, DELETE, a heavier
	// run, the probe's budget): an interrupted run, not a failed one.
	cut bool
}

// status is the run's status: interrupted when the daemon stopped it
// before it measured anything, failed when it could not start, else its
// result's.
func (f finished) status() result.Status {
	switch {
	case f.res == nil && f.cut:
		return result.StatusInterrupted
	case f.res == nil:
		return result.StatusFailed
	}
	return f.res.Status
}

// recordRun records a finished run, the one way for every kind of run
// (the files its run created are noted as it ends: runner.Plan.Created):
// for a run with a history entry (rec; nil for a probe, whose answer is its record) its
// status, error and result there, ioprobe_job_runs_total of its job, and
// the history, which keeps keep runs of the job. rec.Error, when the
// caller set it, says the error in the caller's words. held, when not
// nil, may keep the run out of ioprobe_job_runs_total (it returns true):
// a job's point that could not start is counted with its run's outcome.
func (d *Daemon) recordRun(f finished, rec *Run, keep int, held func(result.Status) bool) result.Status {
	st := f.status()
	if rec == nil {
		return st
	}
	rec.Status, rec.Result = st, f.res
	if rec.Error == "" && f.err != nil {
		rec.Error = f.err.Error()
	}
	if held == nil || !held(st) {
		d.m.jobs.count(rec.Job, st)
	}
	d.history.add(rec, keep)
	return st
}
