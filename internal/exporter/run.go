package exporter

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ioprobe/ioprobe/internal/config"
	"github.com/ioprobe/ioprobe/internal/runner"
	"github.com/ioprobe/ioprobe/internal/suiterun"
	"github.com/ioprobe/ioprobe/internal/target"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// deviceKeyOf is the device a target path is on. A path whose lookup
// fails keeps the device it was last found on: the device locks are keyed
// on the answer, and two runs on one target must never hold two different
// locks because one of them looked at a bad moment. A path never found is
// its own device.
func deviceKeyOf(path string) string {
	if k, err := target.DeviceKey(path); err == nil {
		knownDevices.remember(path, k)
		return k
	}
	if k, ok := knownDevices.lookup(path); ok {
		return k
	}
	return "path " + path
}

// maxKnownDevices bounds knownDevices. Its paths come from configurations
// (targets), a few per reload; past the bound it starts afresh.
const maxKnownDevices = 4096

// knownDevices is each target path's last device key.
var knownDevices = &deviceMemory{keys: map[string]string{}}

type deviceMemory struct {
	mu   sync.Mutex
	keys map[string]string
}

func (m *deviceMemory) remember(path, key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.keys[path]; !ok && len(m.keys) >= maxKnownDevices {
		m.keys = map[string]string{}
	}
	m.keys[path] = key
}

func (m *deviceMemory) lookup(path string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.keys[path]
	return k, ok
}

// runPoints runs a job's points one after another (one, unless it is a
// suite); its error says that the run could not start: its first point
// could not, and no later point did either (the scheduler logs it once per
// streak and backs off). It calls started once some point's I/O runs. A
// point that could not start in a run that did is logged with its reason
// and counted as failed; the run is not tried again, which would measure
// again the points that ran. A point that repeats an earlier point's
// specifications is measured once. After a whole run, the job's last-run
// gauges are exactly the points it measured.
func (d *Daemon) runPoints(ctx context.Context, r *jobRunner, trigger string, started func()) error {
	n := r.runs.Add(1)
	j := r.job
	var first error
	var began atomic.Bool
	var once sync.Once
	ran := runner.ObserverFunc(func(*runner.Snapshot) {
		began.Store(true)
		once.Do(started)
	})
	// A point that could not start before any I/O of the run is counted
	// with the run's outcome, in one step with the streak (jobCollector):
	// the scheduler's outcome or started.
	held := func(st result.Status) bool {
		if st != result.StatusFailed || began.Load() {
			return false
		}
		r.fail.hold()
		return true
	}
	ex := suiterun.Executor{
		KeepGoing: true, // the next point may measure; the schedule tries again
		Run: func(ctx context.Context, u suiterun.Unit, _ int) (*result.Result, error) {
			res, err := d.runPoint(ctx, j, j.Points[u.Index], trigger, n, held, ran)
			switch {
			case u.Index == 0:
				first = err
			case err != nil && ctx.Err() == nil && (first == nil || err.Error() != first.Error()):
				// A point that fails as the first did is part of the streak
				// the scheduler reports.
				d.logger.Error("run could not start", "job", j.Name, "target", j.Target.Name, "point", j.Points[u.Index].Name, "trigger", trigger, "err", err)
			}
			return res, err
		},
		Reused: func(u, from suiterun.Unit, res *result.Result) {
			pt := j.Points[u.Index]
			if res == nil || pt.Label() == j.Points[from.Index].Label() {
				return // its gauges are those of the earlier point
			}
			d.lastRuns.set(shapeOf(j.Target.Name, j.Name, pt.Label(), pt.Specs),
				&lastRun{success: res.Status == result.StatusOK, end: time.Now(), res: res, runNumber: n})
		},
	}
	_ = ex.Execute(ctx, jobUnits(j)) // each point's outcome is recorded as it ends
	switch {
	case ctx.Err() == nil:
		d.lastRuns.retain(j.Name, n)
	case first == nil && len(j.Points) > 0:
		first = ctx.Err() // stopped before or while the first point prepared
	}
	if first != nil && began.Load() && ctx.Err() == nil {
		// The run started: its first point's refusal is that point's
		// news, not a streak of the job's.
		d.logger.Error("run could not start", "job", j.Name, "target", j.Target.Name, "point", j.Points[0].Name, "trigger", trigger, "err", first)
		return nil
	}
	return first
}

// jobUnits is a job's points as suite units on its target.
func jobUnits(j *config.Job) []suiterun.Unit {
	units := make([]suiterun.Unit, len(j.Points))
	for i, pt := range j.Points {
		units[i] = suiterun.Unit{Index: i, Targets: []string{j.Target.Path},
			Point: workload.SuitePoint{Name: pt.Name, Pattern: pt.Pattern, Size: pt.Size, Specs: pt.Specs}}
	}
	return units
}

// settings are what every run on target t shares.
func (d *Daemon) settings(t *config.Target, maxErrors uint64) suiterun.Settings {
	s := suiterun.Settings{
		AllowDestructive: t.AllowDestructive,
		MaxErrors:        maxErrors,
		Interval:         d.cfg.Load().Global.SnapshotInterval,
		Engines:          d.opts.Engines,
	}
	if !d.cfg.Load().Global.KeepFiles {
		s.Created = d.noteCreated
	}
	return s
}

// targetUnit is specs run at once on target t, over its configured size.
func targetUnit(t *config.Target, name string, specs []workload.Spec) suiterun.Unit {
	u := suiterun.Unit{Point: workload.SuitePoint{Name: name}, Targets: []string{t.Path}}
	for _, s := range specs {
		s.RegionBytes = s.RegionWithin(t.Size)
		u.Point.Specs = append(u.Point.Specs, s)
	}
	return u
}

// runPoint runs one point and records it: the live series during the run,
// then the last-run gauges, the run counters (held: recordRun) and the
// history. Its error says that the run could not start (it measured
// nothing). Observers in obs see the run's snapshots too.
func (d *Daemon) runPoint(ctx context.Context, j *config.Job, pt config.Point, trigger string, n uint64, held func(result.Status) bool, obs ...runner.Observer) (*result.Result, error) {
	p := d.settings(j.Target, j.MaxErrors).Plan(targetUnit(j.Target, pt.Name, pt.Specs))
	if j.Mode == config.Continuous {
		// A continuous job starts a run a minute; loading the BPF
		// programs that time the device costs each of them about
		// 40 ms of CPU, more than its 1,200 I/Os (docs/performance.md,
		// "The idle daemon"). The config's devices: loads them once.
		p.NoDeviceLatency = true
		p.NoDeviceLatencyWhy = "not measured per run of a continuous job (list the device under devices: to watch it)"
	}
	live := d.live.observerFor(j.Name, map[string]string{j.Target.Path: j.Target.Name}, pt.Specs)
	p.Observers = append([]runner.Observer{live}, obs...)

	res, err := runner.Run(ctx, p)
	now := time.Now()
	f := finished{res: res, err: err, cut: ctx.Err() != nil}
	st := d.recordRun(f, &Run{Job: j.Name, Target: j.Target.Name, Point: pt.Name, Trigger: trigger, FinishedAt: now.UTC()}, d.cfg.Load().Global.RunHistory, held)
	sh := shapeOf(j.Target.Name, j.Name, pt.Label(), pt.Specs)
	log := d.logger.With("job", j.Name, "target", j.Target.Name, "point", pt.Name, "trigger", trigger)
	switch {
	case res == nil && f.cut:
		log.Info("run interrupted while preparing its target", "err", err)
	case res == nil:
		d.lastRuns.set(sh, &lastRun{end: now, runNumber: n})
		log.Debug("run could not start", "err", err)
	case st == result.StatusInterrupted && f.cut:
		// Stopped by us (shutdown, reload, a heavier run): not a result.
		log.Debug("run interrupted", "iops", result.Value(result.FigIOPS, &res.Summary))
	default:
		d.lastRuns.set(sh, &lastRun{success: st == result.StatusOK, end: now, res: res, runNumber: n})
		log.Info("run finished", append(append([]any{"status", st}, logFigures(&res.Summary)...), "message", res.Message)...)
	}
	return res, err
}

func round(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }
