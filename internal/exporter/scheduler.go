package exporter

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ioprobe/ioprobe/internal/config"
)

// Job states, as /api/v1/jobs shows them.
const (
	stateIdle    int32 = iota // waiting for its next start or a trigger
	stateWaiting              // due, waiting for its device
	stateRunning
	stateQueued // asked to run through the API, not started yet
	statePaused // continuous, waiting while a heavier run holds its device
)

// stateNames are the states' names in the API; stateWords say them in errors.
var (
	stateNames = map[int32]string{stateIdle: "idle", stateWaiting: "waiting", stateRunning: "running", stateQueued: "queued", statePaused: "paused"}
	stateWords = map[int32]string{stateIdle: "idle", stateWaiting: "waiting for its device", stateRunning: "running", stateQueued: "asked to run", statePaused: "paused"}
)

// jobRunner is the goroutine of one configured job.
type jobRunner struct {
	job     *config.Job
	cancel  context.CancelFunc
	done    chan struct{}
	trigger chan struct{} // buffered 1: a run asked for through the API
	state   atomic.Int32
	paused  atomic.Bool
	runs    atomic.Uint64 // runs started, numbering them
	next    atomic.Int64  // Unix ns of the next scheduled start, 0 if none
	fail    failures      // runs in a row that could not start
}

// runFunc runs every point of a job once. It calls started as soon as the
// run's I/O is under way (a run lasts minutes; the end of a streak of
// failures is news at once); its error says that the run could not start
// (nil: it started, whatever it measured).
type runFunc func(ctx context.Context, r *jobRunner, trigger string, started func()) error

// schedDeps is everything the scheduler uses: time, the device locks, the
// metrics it keeps, and the function that runs a job. The daemon gives it
// the real ones; its tests a fake clock and a run function that does no
// I/O.
type schedDeps struct {
	clock   clock
	devices *devices
	m       *metrics
	logger  *slog.Logger
	run     runFunc
	// deviceKey names the device a target path is on.
	deviceKey func(path string) string
	// rand returns a number in [0, n), for jitter.
	rand func(n int64) int64
}

// scheduler starts, replaces and stops job runners as the configuration
// changes.
type scheduler struct {
	schedDeps
	mu     sync.Mutex
	ctx    context.Context
	jobs   map[string]*jobRunner
	closed bool
}

func newScheduler(deps schedDeps) *scheduler {
	return &scheduler{schedDeps: deps, jobs: map[string]*jobRunner{}}
}

func (s *scheduler) start(ctx context.Context, cfg *config.Config) {
	s.mu.Lock()
	s.ctx = ctx
	s.mu.Unlock()
	s.apply(cfg)
}

// apply makes the running jobs those of cfg: a job whose definition is
// unchanged keeps running undisturbed.
func (s *scheduler) apply(cfg *config.Config) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx == nil || s.closed {
		return
	}
	for name, r := range s.jobs {
		nj := cfg.Jobs[name]
		if nj != nil && reflect.DeepEqual(nj, r.job) {
			continue
		}
		r.cancel()
		<-r.done
		s.dropSeries(r.job)
		delete(s.jobs, name)
		// The streak's ERROR line must not be the job's last word: its
		// failures gauge goes with it, so its log line does too.
		if n := r.fail.reset(); n > 0 {
			how := "removed"
			if nj != nil {
				how = "changed; it starts afresh"
			}
			s.logger.Info("job "+how+" by the reload: its streak of failed starts ends", "job", name, "target", r.job.Target.Name, "failed_starts", n)
		}
	}
	for name, j := range cfg.Jobs {
		if s.jobs[name] != nil {
			continue
		}
		ctx, cancel := context.WithCancel(s.ctx)
		r := &jobRunner{job: j, cancel: cancel, done: make(chan struct{}), trigger: make(chan struct{}, 1)}
		s.jobs[name] = r
		s.m.runActive.WithLabelValues(j.Target.Name, j.Name).Set(0)
		s.m.jobs.add(j.Name, &r.fail)
		// Counters exist from the start, so that rate() and alerts see
		// their first increase.
		s.m.jobs.counters(j.Name)
		if j.Mode == config.Scheduled {
			s.m.jobSkipped.WithLabelValues(j.Name, skipDeviceBusy)
			s.m.jobSkipped.WithLabelValues(j.Name, skipStillRunning)
		}
		if j.Mode == config.Continuous {
			s.m.canaryPaused.WithLabelValues(j.Target.Name, j.Name).Set(0)
		}
		go s.loop(ctx, r)
	}
}

// dropSeries removes the gauges of a job that was removed or changed.
func (s *scheduler) dropSeries(j *config.Job) {
	s.m.runActive.DeleteLabelValues(j.Target.Name, j.Name)
	s.m.canaryPaused.DeleteLabelValues(j.Target.Name, j.Name)
	s.m.nextRun.DeleteLabelValues(j.Name)
	s.m.jobs.remove(j.Name)
}

// stop ends every job and waits for them.
func (s *scheduler) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for _, r := range s.jobs {
		r.cancel()
	}
	for _, r := range s.jobs {
		<-r.done
	}
}

// runner returns the runner of a job, or nil.
func (s *scheduler) runner(name string) *jobRunner {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.jobs[name]
}

// triggerError is why a job cannot be asked to run now (409).
type triggerError struct{ msg string }

func (e *triggerError) Error() string { return e.msg }

// trigger asks job name to run as soon as its device is free. It returns
// false when there is no such job, and a *triggerError when the job is
// continuous, running, waiting or already asked.
func (s *scheduler) trigger(name string) (bool, error) {
	r := s.runner(name)
	if r == nil {
		return false, nil
	}
	if r.job.Mode == config.Continuous {
		return true, &triggerError{fmt.Sprintf("job %q is continuous: it is always running", name)}
	}
	// Claim the job before handing it the trigger: between the send and
	// the moment its loop marks itself waiting, a second request would
	// otherwise find it idle with an empty trigger and be accepted too.
	if !r.state.CompareAndSwap(stateIdle, stateQueued) {
		return true, &triggerError{fmt.Sprintf("job %q is already %s", name, stateWords[r.state.Load()])}
	}
	select {
	case r.trigger <- struct{}{}:
		return true, nil
	default:
		// A scheduled start took the job after an earlier trigger was
		// sent; that trigger is still pending.
		return true, &triggerError{fmt.Sprintf("job %q has already been asked to run", name)}
	}
}

func (s *scheduler) loop(ctx context.Context, r *jobRunner) {
	defer close(r.done)
	switch r.job.Mode {
	case config.Continuous:
		s.continuous(ctx, r)
	case config.Scheduled:
		s.scheduled(ctx, r)
	default:
		for {
			select {
			case <-ctx.Done():
				return
			case <-r.trigger:
				// Asked for once: a run that cannot start is not retried.
				s.runHeavy(ctx, r, "api", time.Time{}, nil)
			}
		}
	}
}

// firstBase is the first scheduled start (before jitter) at or after now:
// now itself, or with align the next multiple of every since the Unix
// epoch, so that every host with the same schedule starts together.
func firstBase(now time.Time, sc config.Schedule) time.Time {
	if !sc.Align {
		return now
	}
	e, n := sc.Every.Nanoseconds(), now.UnixNano()
	b := n / e * e
	if b < n {
		b += e
	}
	return time.Unix(0, b)
}

func (s *scheduler) jitter(sc config.Schedule) time.Duration {
	if sc.Jitter <= 0 {
		return 0
	}
	return time.Duration(s.rand(int64(sc.Jitter)))
}

// scheduled runs a job every Schedule.Every. A start that finds the device
// busy waits for it until the following start is due, and is then skipped
// (device_busy); starts that come due while the job itself runs are
// skipped (still_running). A run asked for through the API runs between
// scheduled starts and does not move them. A run that could not start is
// tried again with back-off, but never later than the next scheduled
// start.
func (s *scheduler) scheduled(ctx context.Context, r *jobRunner) {
	sc := r.job.Schedule
	name := r.job.Name
	defer s.m.nextRun.DeleteLabelValues(name)
	base := firstBase(s.clock.Now(), sc) // the next scheduled start, before jitter
	start := base.Add(s.jitter(sc))
	retry := false // start is a retry of a run that could not start, not base's
	for {
		r.next.Store(start.UnixNano())
		s.m.nextRun.WithLabelValues(name).Set(unixSeconds(start))
		timer := s.clock.NewTimer(start.Sub(s.clock.Now()))
		// A run that could not start plans its next attempt as the
		// failure is counted (outcome): the back-off's (again), but never
		// later than the next scheduled start after now, planBase.
		planned, planBase := false, base
		plan := func(again time.Time) time.Time {
			planned, planBase = true, base
			for now := s.clock.Now(); !planBase.After(now); planBase = planBase.Add(sc.Every) {
			}
			start, retry = planBase.Add(s.jitter(sc)), false
			if again.Before(start) {
				start, retry = again, true
			}
			return start
		}
		var ran bool
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-r.trigger:
			timer.Stop()
			ran, _ = s.runHeavy(ctx, r, "api", time.Time{}, plan)
		case <-timer.C():
			if !retry {
				base = base.Add(sc.Every)
			}
			ran, _ = s.runHeavy(ctx, r, "schedule", base, plan)
			if !ran && !retry && ctx.Err() == nil {
				s.m.jobSkipped.WithLabelValues(name, skipDeviceBusy).Inc()
				s.logger.Warn("skipped a scheduled run: its device stayed busy until the next start", "job", name, "start", start.Format(time.RFC3339))
			}
		}
		if ctx.Err() != nil {
			return
		}
		if ran {
			// The starts the run covered: up to now, or to the one its
			// retry planned.
			for now := s.clock.Now(); planned && base.Before(planBase) || !planned && !base.After(now); base = base.Add(sc.Every) {
				s.m.jobSkipped.WithLabelValues(name, skipStillRunning).Inc()
				s.logger.Warn("skipped a scheduled run: the previous one was still running", "job", name, "start", base.Format(time.RFC3339))
			}
		}
		if planned {
			continue // start and retry are the plan's
		}
		start, retry = base.Add(s.jitter(sc)), false
		if r.fail.get().streak > 0 {
			s.retryAt(r, start) // still failing (its start found the device busy): the scheduled start is the next attempt
		}
	}
}

// continuous runs a job over and over as a light run: it pauses (and says
// so in ioprobe_canary_paused and the API) while a heavy run holds its
// device, and backs off while its runs cannot start.
func (s *scheduler) continuous(ctx context.Context, r *jobRunner) {
	j := r.job
	paused := func(p bool) {
		if p {
			r.state.Store(statePaused)
		}
		if r.paused.Swap(p) != p {
			v := 0.0
			if p {
				v = 1
				s.logger.Info("canary paused: a heavier run holds its device", "job", j.Name, "target", j.Target.Name)
			} else {
				s.logger.Info("canary resumed", "job", j.Name, "target", j.Target.Name)
			}
			s.m.canaryPaused.WithLabelValues(j.Target.Name, j.Name).Set(v)
		}
	}
	for ctx.Err() == nil {
		lctx, release, err := s.devices.light(ctx, s.deviceKey(j.Target.Path), paused)
		if err != nil {
			return
		}
		r.state.Store(stateRunning)
		s.m.runActive.WithLabelValues(j.Target.Name, j.Name).Set(1)
		err = s.run(lctx, r, "continuous", func() { s.recovered(r) })
		s.m.runActive.WithLabelValues(j.Target.Name, j.Name).Set(0)
		// Before release, which ends lctx: a run stopped for a heavier
		// one is not a failure.
		again := s.outcome(lctx, r, err, func(again time.Time) time.Time { return again })
		release()
		r.state.Store(stateIdle)
		if again.IsZero() {
			continue
		}
		if !sleep(ctx, s.clock, again.Sub(s.clock.Now())) {
			return
		}
	}
}

// runHeavy runs a job holding its device alone. It waits for the device
// until deadline (zero: as long as it takes) and returns false if it never
// got it. again is when it tries once more (zero: the run started, was
// interrupted, or plan is nil: outcome).
func (s *scheduler) runHeavy(ctx context.Context, r *jobRunner, trigger string, deadline time.Time, plan func(time.Time) time.Time) (ran bool, again time.Time) {
	j := r.job
	r.state.Store(stateWaiting)
	defer r.state.Store(stateIdle)
	wctx, stop := ctx, func() {}
	if !deadline.IsZero() {
		wctx, stop = until(ctx, s.clock, deadline)
	}
	release, err := s.devices.heavy(wctx, s.deviceKey(j.Target.Path), "job "+j.Name, true, time.Time{})
	stop()
	if err != nil {
		return false, time.Time{}
	}
	defer release()
	r.state.Store(stateRunning)
	s.m.runActive.WithLabelValues(j.Target.Name, j.Name).Set(1)
	defer s.m.runActive.WithLabelValues(j.Target.Name, j.Name).Set(0)
	err = s.run(ctx, r, trigger, func() { s.recovered(r) })
	return true, s.outcome(ctx, r, err, plan)
}

// outcome keeps a job's streak of runs that could not start: it logs the
// first failure of a streak and its end, not each attempt, and returns
// when the job tries again (zero: no retry). plan (nil: the job is not
// retried) turns the back-off's next attempt into the job's, which is
// recorded with the failure, in one step (jobCollector.failed).
func (s *scheduler) outcome(ctx context.Context, r *jobRunner, err error, plan func(again time.Time) time.Time) time.Time {
	j := r.job
	log := s.logger.With("job", j.Name, "target", j.Target.Name)
	switch {
	case err == nil:
		s.recovered(r)
		return time.Time{}
	case ctx.Err() != nil:
		// Stopped (shutdown, reload, a heavier run): says nothing of the
		// target; the points that could not start before are counted.
		s.m.jobs.settle(j.Name, &r.fail)
		return time.Time{}
	}
	// Only the job's own loop changes its streak: this is the streak
	// the failure makes.
	prev := r.fail.get()
	var next time.Time
	if plan != nil {
		next = plan(s.clock.Now().Add(backoffDelay(prev.streak+1, s.rand)))
	}
	n := s.m.jobs.failed(j.Name, &r.fail, err, next)
	switch {
	case n == 1 && plan != nil:
		log.Error(fmt.Sprintf("job cannot start: trying again after %s, then twice as long each time up to %s; only its recovery is logged", backoffFirst, strings.TrimSuffix(backoffMax.String(), "0s")), "err", err)
	case n == 1:
		log.Error("job could not start", "err", err)
	case err.Error() != prev.err:
		log.Error("job still cannot start, now for another reason", "failed_starts", n, "err", err)
	default:
		log.Debug("job still cannot start", "failed_starts", n, "err", err)
	}
	return next
}

// recovered ends a job's streak of runs that could not start, if it had
// one: its run started.
func (s *scheduler) recovered(r *jobRunner) {
	// The streak and the next attempt end together, and the points
	// that could not start before are counted (the metrics read them at
	// once: jobCollector).
	if n := s.m.jobs.started(r.job.Name, &r.fail); n > 0 {
		s.logger.Info("job recovered: its run started", "job", r.job.Name, "target", r.job.Target.Name, "failed_starts", n)
	}
}

// retryAt records when a failing job tries again.
func (s *scheduler) retryAt(r *jobRunner, t time.Time) {
	r.fail.retryAt(t)
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
