package exporter

import (
	"context"
	"math/rand/v2"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ioprobe/ioprobe/internal/config"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// Job states, as /api/v1/jobs shows them.
const (
	stateIdle    int32 = iota // waiting for its next start or a trigger
	stateWaiting              // due, waiting for its device
	stateRunning
	stateQueued // asked to run through the API, not started yet
)

// stateNames are the states' names in the API; stateWords say them in errors.
var (
	stateNames = map[int32]string{stateIdle: "idle", stateWaiting: "waiting", stateRunning: "running", stateQueued: "queued"}
	stateWords = map[int32]string{stateIdle: "idle", stateWaiting: "waiting for its device", stateRunning: "running", stateQueued: "asked to run"}
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
}

// scheduler starts, replaces and stops job runners as the configuration
// changes.
type scheduler struct {
	d      *Daemon
	mu     sync.Mutex
	ctx    context.Context
	jobs   map[string]*jobRunner
	rand   func(n int64) int64
	now    func() time.Time
	closed bool
}

func newScheduler(d *Daemon) *scheduler {
	return &scheduler{d: d, jobs: map[string]*jobRunner{}, rand: rand.Int64N, now: time.Now}
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
		if nj := cfg.Jobs[name]; nj != nil && reflect.DeepEqual(nj, r.job) {
			continue
		}
		r.cancel()
		<-r.done
		s.d.dropJobSeries(r.job)
		delete(s.jobs, name)
	}
	for name, j := range cfg.Jobs {
		if s.jobs[name] != nil {
			continue
		}
		ctx, cancel := context.WithCancel(s.ctx)
		r := &jobRunner{job: j, cancel: cancel, done: make(chan struct{}), trigger: make(chan struct{}, 1)}
		s.jobs[name] = r
		s.d.m.runActive.WithLabelValues(j.Target.Name, j.Name).Set(0)
		// Counters exist from the start, so that rate() and alerts see
		// their first increase.
		for _, st := range []string{result.StatusOK, result.StatusErrors, result.StatusInterrupted, statusFailed} {
			s.d.m.jobRuns.WithLabelValues(j.Name, st)
		}
		if j.Mode == config.Scheduled {
			s.d.m.jobSkipped.WithLabelValues(j.Name, skipDeviceBusy)
			s.d.m.jobSkipped.WithLabelValues(j.Name, skipStillRunning)
		}
		if j.Mode == config.Continuous {
			s.d.m.canaryPaused.WithLabelValues(j.Target.Name, j.Name).Set(0)
		}
		go s.loop(ctx, r)
	}
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
				s.d.runHeavy(ctx, r, "api", time.Time{})
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
// scheduled starts and does not move them.
func (s *scheduler) scheduled(ctx context.Context, r *jobRunner) {
	sc := r.job.Schedule
	name := r.job.Name
	defer s.d.m.nextRun.DeleteLabelValues(name)
	base := firstBase(s.now(), sc)
	for {
		start := base.Add(s.jitter(sc))
		r.next.Store(start.UnixNano())
		s.d.m.nextRun.WithLabelValues(name).Set(float64(start.UnixNano()) / 1e9)
		timer := time.NewTimer(time.Until(start))
		ran := false
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-r.trigger:
			timer.Stop()
			ran = s.d.runHeavy(ctx, r, "api", time.Time{})
		case <-timer.C:
			next := base.Add(sc.Every)
			ran = s.d.runHeavy(ctx, r, "schedule", next)
			if !ran && ctx.Err() == nil {
				s.d.m.jobSkipped.WithLabelValues(name, skipDeviceBusy).Inc()
				s.d.logger.Warn("skipped a scheduled run: its device stayed busy until the next start", "job", name, "start", start.Format(time.RFC3339))
			}
			base = next
		}
		if ctx.Err() != nil {
			return
		}
		if !ran {
			continue
		}
		for now := s.now(); !base.After(now); base = base.Add(sc.Every) {
			s.d.m.jobSkipped.WithLabelValues(name, skipStillRunning).Inc()
			s.d.logger.Warn("skipped a scheduled run: the previous one was still running", "job", name, "start", base.Format(time.RFC3339))
		}
	}
}

// continuousRetry is how long a continuous job waits after a run that
// could not start (a missing device, a refusal) before trying again.
const continuousRetry = 10 * time.Second

// continuous runs a job over and over as a light run: it pauses (and says
// so in ioprobe_canary_paused) while a heavy run holds its device.
func (s *scheduler) continuous(ctx context.Context, r *jobRunner) {
	j := r.job
	paused := func(p bool) {
		if r.paused.Swap(p) != p {
			v := 0.0
			if p {
				v = 1
				s.d.logger.Info("canary paused: a heavier run holds its device", "job", j.Name, "target", j.Target.Name)
			} else {
				s.d.logger.Info("canary resumed", "job", j.Name, "target", j.Target.Name)
			}
			s.d.m.canaryPaused.WithLabelValues(j.Target.Name, j.Name).Set(v)
		}
	}
	for ctx.Err() == nil {
		lctx, release, err := s.d.devices.light(ctx, deviceKeyOf(j.Target.Path), paused)
		if err != nil {
			return
		}
		r.state.Store(stateRunning)
		s.d.m.runActive.WithLabelValues(j.Target.Name, j.Name).Set(1)
		started := s.d.runPoints(lctx, r, "continuous")
		s.d.m.runActive.WithLabelValues(j.Target.Name, j.Name).Set(0)
		r.state.Store(stateIdle)
		release()
		if !started && lctx.Err() == nil {
			select {
			case <-ctx.Done():
			case <-time.After(continuousRetry):
			}
		}
	}
}
