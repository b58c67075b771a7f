package exporter

import (
	"context"
	"sync"
	"time"

	"github.com/ioprobe/ioprobe/internal/config"
	"github.com/ioprobe/ioprobe/internal/runner"
	"github.com/ioprobe/ioprobe/internal/target"
	"github.com/ioprobe/ioprobe/internal/version"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Run statuses beyond result's: the run could not start.
const statusFailed = "failed"

// deviceKeyOf is the device a target path is on; a path that cannot be
// looked up (yet) is its own device.
func deviceKeyOf(path string) string {
	if k, err := target.DeviceKey(path); err == nil {
		return k
	}
	return "path " + path
}

// runPoints runs a job's points one after another (one, unless it is a
// suite); its error is the first point's, when that could not start (the
// scheduler logs it once per streak and backs off), and it calls started
// once the first point's I/O runs. After a whole run, the job's last-run
// gauges are exactly the points it measured.
func (d *Daemon) runPoints(ctx context.Context, r *jobRunner, trigger string, started func()) error {
	n := r.runs.Add(1)
	var first error
	for i, pt := range r.job.Points {
		if err := ctx.Err(); err != nil {
			if i == 0 {
				return err
			}
			return first
		}
		if measuredBefore(r.job.Points[:i], pt) {
			continue // its gauges are those of the earlier point
		}
		var obs []runner.Observer
		if i == 0 {
			var once sync.Once
			obs = append(obs, runner.ObserverFunc(func(*runner.Snapshot) { once.Do(started) }))
		}
		err := d.runPoint(ctx, r.job, pt, trigger, n, obs...)
		switch {
		case i == 0:
			first = err
		case err != nil && ctx.Err() == nil && (first == nil || err.Error() != first.Error()):
			// A point that fails as the first did is part of the streak
			// the scheduler reports.
			d.logger.Error("run could not start", "job", r.job.Name, "target", r.job.Target.Name, "point", pt.Name, "trigger", trigger, "err", err)
		}
	}
	if ctx.Err() == nil {
		d.runs.retain(r.job.Name, n)
	}
	return first
}

// measuredBefore reports whether an earlier point of the job has the same
// label and specifications: the same measurement, published under the
// same last-run series (peak-iops' 8 KiB random read at 32 outstanding is
// a request size and one worker of the workers scaling), taken once.
func measuredBefore(earlier []config.Point, pt config.Point) bool {
	for _, e := range earlier {
		if e.Label() == pt.Label() && workload.SameSpecs(e.Specs, pt.Specs) {
			return true
		}
	}
	return false
}

// plan builds the runner plan of specs on one target.
func (d *Daemon) plan(t *config.Target, job string, specs []workload.Spec, maxErrors uint64) runner.Plan {
	p := runner.Plan{
		AllowDestructive: t.AllowDestructive,
		MaxErrors:        maxErrors,
		Interval:         d.cfg.Load().Global.SnapshotInterval,
		Version:          version.Version,
		Engines:          d.opts.Engines,
		Job:              job,
	}
	for _, s := range specs {
		s.RegionBytes = t.Size
		p.Groups = append(p.Groups, runner.Group{Spec: s, Targets: []string{t.Path}})
	}
	return p
}

// runPoint runs one point and records it: the live series during the run,
// then the last-run gauges, the run counters and the history. Its error
// says that the run could not start (it measured nothing). Observers in
// obs see the run's snapshots too.
func (d *Daemon) runPoint(ctx context.Context, j *config.Job, pt config.Point, trigger string, n uint64, obs ...runner.Observer) error {
	p := d.plan(j.Target, j.Name, pt.Specs, j.MaxErrors)
	if len(pt.Specs) > 1 {
		p.Name = pt.Name
	}
	var reads, writes bool
	for _, s := range pt.Specs {
		reads = reads || s.ReadPct > 0
		writes = writes || s.ReadPct < 100
	}
	p.Observers = append([]runner.Observer{d.live.observer(j.Name, map[string]string{j.Target.Path: j.Target.Name}, reads, writes)}, obs...)

	res, err := runner.Run(ctx, p)
	now := time.Now()
	rec := &Run{Job: j.Name, Target: j.Target.Name, Point: pt.Name, Trigger: trigger, FinishedAt: now.UTC(), Result: res}
	sh := shapeOf(j.Target.Name, j.Name, pt.Label(), pt.Specs)
	log := d.logger.With("job", j.Name, "target", j.Target.Name, "point", pt.Name, "trigger", trigger)
	switch {
	case err != nil && ctx.Err() != nil:
		rec.Status, rec.Error = result.StatusInterrupted, err.Error()
		log.Info("run interrupted while preparing its target", "err", err)
	case err != nil:
		rec.Status, rec.Error = statusFailed, err.Error()
		d.runs.set(sh, &lastRun{end: now, runNumber: n})
		log.Debug("run could not start", "err", err)
	default:
		rec.Status = res.Status
		for _, t := range res.Targets {
			if t.Created {
				d.noteCreated(t.Path)
			}
		}
		s := &res.Summary
		if res.Status == result.StatusInterrupted && ctx.Err() != nil {
			// Stopped by us (shutdown, reload, a heavier run): not a result.
			log.Debug("run interrupted", "iops", s.IOPS)
			break
		}
		d.runs.set(sh, &lastRun{success: res.Status == result.StatusOK, end: now, res: res, runNumber: n})
		log.Info("run finished", "status", res.Status, "iops", round(s.IOPS), "mb_per_second", round(s.MBPerSecond),
			"latency_mean_ms", round(s.Latency.MeanSeconds*1e3), "latency_p99_ms", round(s.Latency.Percentiles["99"]*1e3), "errors", s.Errors, "message", res.Message)
	}
	d.m.jobRuns.WithLabelValues(j.Name, rec.Status).Inc()
	d.history.add(rec, d.cfg.Load().Global.RunHistory)
	return err
}

func round(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }
