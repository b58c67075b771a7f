package exporter

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/config"
	"github.com/ioprobe/ioprobe/internal/testwait"
)

// The scheduler's timing, on a fake clock with a run function that does
// no I/O: hours of schedules and back-off in milliseconds, and nothing
// that a slow machine can change.

// runCall is one call of the scheduler's run function; the test answers
// it on reply (nil: the run started), unless the run's context ends first.
type runCall struct {
	started func() // the run's I/O is under way
	at      time.Time
	job     string
	trigger string
	ctx     context.Context
	reply   chan error
}

type schedHarness struct {
	s     *scheduler
	clk   *fakeClock
	m     *metrics
	reg   *prometheus.Registry // what /metrics gathers
	calls chan runCall
	logs  *syncBuffer
	cfg   *config.Config
}

// syncBuffer is a bytes.Buffer that the scheduler logs to while a test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// lines are the log lines that contain sub.
func (s *syncBuffer) lines(sub string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s.String()), "\n") {
		if l != "" && strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}

// newSchedHarness starts a scheduler for doc (a config; its paths are
// never opened) at now on a fake clock.
func newSchedHarness(t *testing.T, doc string, now time.Time, rnd func(int64) int64) *schedHarness {
	t.Helper()
	cfg, err := config.Parse("ioprobe.yaml", []byte(doc), config.Options{})
	require.NoError(t, err)
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	reg, m := newRegistry(newLiveStore(), newRunStore(), newDeviceWatch(logger), newDeviceInfo("", ""), "", logger)
	h := &schedHarness{clk: newFakeClock(now), m: m, reg: reg, calls: make(chan runCall), logs: logs, cfg: cfg}
	run := func(ctx context.Context, r *jobRunner, trigger string, started func()) error {
		r.runs.Add(1)
		c := runCall{started: started, at: h.clk.Now(), job: r.job.Name, trigger: trigger, ctx: ctx, reply: make(chan error)}
		select {
		case h.calls <- c:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case err := <-c.reply:
			if err == nil {
				started()
			}
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	h.s = newScheduler(schedDeps{clock: h.clk, devices: newDevices(), m: m, logger: logger, run: run,
		deviceKey: func(p string) string { return p }, rand: rnd})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		h.s.stop()
	})
	h.s.start(ctx, cfg)
	return h
}

// next is the scheduler's next call of its run function.
func (h *schedHarness) next(t *testing.T) runCall {
	t.Helper()
	select {
	case c := <-h.calls:
		return c
	case <-time.After(30 * time.Second): // a hung scheduler, not a timing assertion
		t.Fatal("the scheduler did not run the job")
	}
	return runCall{}
}

// waitTimers waits until n timers are set: the scheduler waits for them.
func (h *schedHarness) waitTimers(t *testing.T, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return h.clk.pending() == n }, testwait.Patience, time.Millisecond)
}

func (h *schedHarness) gauge(t require.TestingT, name, job string) float64 {
	if th, ok := t.(interface{ Helper() }); ok {
		th.Helper()
	}
	switch name {
	case "failures", "next_attempt":
		f, ok := h.m.jobs.get(job)
		require.True(t, ok, "job %s has its streak's series", job)
		if name == "failures" {
			return float64(f.streak)
		}
		if f.next.IsZero() {
			return 0
		}
		return unixSeconds(f.next)
	case "next_run":
		return testutil.ToFloat64(h.m.nextRun.WithLabelValues(job))
	}
	require.FailNow(t, "no gauge "+name)
	return 0
}

var t0 = time.Date(2025, 3, 1, 10, 17, 42, 0, time.UTC)

// errMissingDir is what target.Check says of the shipped config on a
// machine without /var/lib/ioprobe.
var errMissingDir = errors.New("target /var/lib/ioprobe/probe.dat: cannot create it: directory /var/lib/ioprobe does not exist")

const canaryOnly = `
targets:
  data: {path: /var/lib/ioprobe/probe.dat, size: 1GiB}
jobs:
  canary: {target: data, profile: canary, continuous: true}
`

// A canary whose runs cannot start is tried again after 1 s, 2 s, 4 s …
// (each up to a quarter longer at random) up to the cap, logged once, with
// the streak and the next attempt in its gauges; a run that starts ends
// the streak, logs its recovery once, and the next failure starts from 1 s
// again. (Before the back-off, release() ended the run's context before the
// retry wait looked at it, so there was no wait at all: 15,000 log lines a
// second.)
func TestBackoffContinuous(t *testing.T) {
	h := newSchedHarness(t, canaryOnly, t0, rand.New(rand.NewPCG(1, 2)).Int64N)
	c := h.next(t)
	require.Equal(t, t0, c.at)
	require.Equal(t, "continuous", c.trigger)
	c.reply <- errMissingDir
	at, floor := t0, backoffFirst
	var waits []time.Duration
	for i := 1; i <= 14; i++ {
		d := h.clk.fireNext(t)
		require.GreaterOrEqual(t, d, floor, "wait %d", i)
		require.Less(t, d, floor+floor/4, "wait %d", i)
		waits = append(waits, d.Truncate(time.Second))
		at = at.Add(d)
		c = h.next(t)
		require.Equal(t, at, c.at)
		require.Equal(t, float64(i), h.gauge(t, "failures", "canary"))
		require.Equal(t, unixSeconds(at), h.gauge(t, "next_attempt", "canary"))
		require.Equal(t, i, h.s.info(h.cfg.Jobs["canary"]).ConsecutiveFailures)
		c.reply <- errMissingDir
		floor = min(2*floor, backoffCeil)
	}
	t.Logf("waits: %v", waits)
	require.LessOrEqual(t, waits[len(waits)-1], backoffMax)
	require.Len(t, h.logs.lines(""), 1, "one line for 15 failed starts:\n%s", h.logs)
	require.Len(t, h.logs.lines("job cannot start"), 1)
	require.Contains(t, h.logs.String(), errMissingDir.Error())

	// It starts: the streak ends as soon as its I/O is under way (a run
	// lasts a minute), and once.
	h.clk.fireNext(t)
	c = h.next(t)
	c.started()
	require.Equal(t, 0.0, h.gauge(t, "failures", "canary"))
	require.Equal(t, 0.0, h.gauge(t, "next_attempt", "canary"))
	require.Len(t, h.logs.lines("job recovered"), 1)
	require.Contains(t, h.logs.lines("job recovered")[0], "failed_starts=15")
	info := h.s.info(h.cfg.Jobs["canary"])
	require.Equal(t, "running", info.State)
	require.Zero(t, info.ConsecutiveFailures)
	c.reply <- nil
	c = h.next(t)
	require.Equal(t, h.clk.Now(), c.at, "a canary that runs goes on at once")
	require.Len(t, h.logs.lines("job recovered"), 1)

	// A new streak backs off from the start again.
	c.reply <- errMissingDir
	d := h.clk.fireNext(t)
	require.GreaterOrEqual(t, d, backoffFirst)
	require.Less(t, d, backoffFirst+backoffFirst/4)
	h.next(t).reply <- errMissingDir
	require.Len(t, h.logs.lines(""), 3, "%s", h.logs)
}

// The waits themselves: doubling from 1 s, at most 4 min before jitter
// and 5 min after, whatever the streak.
func TestBackoffDelay(t *testing.T) {
	none := func(int64) int64 { return 0 }
	most := func(n int64) int64 { return n - 1 }
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second,
		32 * time.Second, 64 * time.Second, 128 * time.Second, 4 * time.Minute, 4 * time.Minute}
	for i, w := range want {
		require.Equal(t, w, backoffDelay(i+1, none), "streak %d", i+1)
		require.Equal(t, w+w/4-1, backoffDelay(i+1, most), "streak %d", i+1)
	}
	require.Equal(t, 5*time.Minute-1, backoffDelay(1<<20, most), "no overflow on a long streak")
	require.Equal(t, 5*time.Minute, backoffMax)
}

// A scheduled job whose run cannot start is tried again with back-off
// between its starts, never later than its next scheduled start, which
// stays where it was; one log line for the whole streak.
func TestBackoffScheduled(t *testing.T) {
	h := newSchedHarness(t, `
targets:
  data: {path: /var/lib/ioprobe/probe.dat}
jobs:
  hourly: {target: data, profile: oltp, duration: 60s, ramp: 10s, every: 1h}
`, t0, rand.New(rand.NewPCG(3, 4)).Int64N)
	c := h.next(t)
	require.Equal(t, t0, c.at, "unaligned: the first start is now")
	require.Equal(t, "schedule", c.trigger)
	slot := t0.Add(time.Hour)
	floor, retries := backoffFirst, 0
	for c.at.Before(slot) {
		c.reply <- errMissingDir
		d := h.clk.fireNext(t)
		c = h.next(t)
		require.Equal(t, "schedule", c.trigger)
		require.Equal(t, unixSeconds(c.at), h.gauge(t, "next_run", "hourly"))
		if c.at.Equal(slot) {
			require.LessOrEqual(t, d, floor+floor/4, "the slot came before the back-off's wait")
			break
		}
		retries++
		require.GreaterOrEqual(t, d, floor)
		require.Less(t, d, floor+floor/4)
		floor = min(2*floor, backoffCeil)
	}
	require.Equal(t, slot, c.at, "the scheduled start is kept")
	require.Greater(t, retries, 10)
	require.Less(t, retries, 30)
	require.Equal(t, float64(retries+1), h.gauge(t, "failures", "hourly"))
	require.Len(t, h.logs.lines(""), 1, "%s", h.logs)

	c.reply <- nil
	d := h.clk.fireNext(t)
	require.Equal(t, time.Hour, d, "after a run, the next scheduled start")
	require.Equal(t, slot.Add(time.Hour), h.next(t).at)
	require.Equal(t, 0.0, h.gauge(t, "failures", "hourly"))
	require.Len(t, h.logs.lines("job recovered"), 1)
}

// align starts on multiples of every since the epoch, jitter delays each
// start by rand(jitter); the next-run gauge says when.
func TestScheduleAlignJitter(t *testing.T) {
	var asked []int64
	var mu sync.Mutex
	rnd := func(n int64) int64 {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, n)
		return n / 2
	}
	h := newSchedHarness(t, `
targets:
  data: {path: /var/lib/ioprobe/probe.dat}
jobs:
  hourly: {target: data, profile: oltp, duration: 60s, ramp: 10s, every: 1h, align: true, jitter: 10m}
`, t0, rnd)
	first := time.Date(2025, 3, 1, 11, 5, 0, 0, time.UTC)
	require.Equal(t, first.Sub(t0), h.clk.fireNext(t))
	c := h.next(t)
	require.Equal(t, first, c.at)
	c.reply <- nil
	require.Equal(t, time.Hour, h.clk.fireNext(t))
	require.Equal(t, first.Add(time.Hour), h.next(t).at)
	require.Equal(t, unixSeconds(first.Add(time.Hour)), h.gauge(t, "next_run", "hourly"))
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []int64{int64(10 * time.Minute), int64(10 * time.Minute)}, asked)
}

const everyMinute = `
targets:
  data: {path: /var/lib/ioprobe/probe.dat}
jobs:
  tick: {target: data, profile: random-read, duration: 10s, ramp: 0s, every: 1m}
`

// A scheduled job whose device another run holds waits for it until its
// next start is due and counts the start as skipped (device_busy); it
// runs once the device is free. One that outlasts its period skips the
// starts it covered (still_running).
func TestSkips(t *testing.T) {
	h := newSchedHarness(t, everyMinute, t0, rand.Int64N)
	skipped := func(reason string) float64 {
		return testutil.ToFloat64(h.m.jobSkipped.WithLabelValues("tick", reason))
	}
	ctx := context.Background()
	c := h.next(t)
	require.Equal(t, t0, c.at)
	c.reply <- nil
	h.waitTimers(t, 1) // it has set its next start

	// Hold the device before the next start.
	release, err := h.s.devices.heavy(ctx, "/var/lib/ioprobe/probe.dat", "job hog", false, time.Time{})
	require.NoError(t, err)
	require.Equal(t, time.Minute, h.clk.fireNext(t), "the start at t0+1m")
	require.Eventually(t, func() bool { return h.s.runner("tick").state.Load() == stateWaiting }, testwait.Patience, time.Millisecond)
	require.Equal(t, "waiting", h.s.info(h.cfg.Jobs["tick"]).State)
	require.Equal(t, time.Minute, h.clk.fireNext(t), "it waits until t0+2m")
	// The scheduler counts the skip, then logs it: wait for both.
	require.Eventually(t, func() bool {
		return skipped(skipDeviceBusy) == 1 && len(h.logs.lines("its device stayed busy")) == 1
	}, testwait.Patience, time.Millisecond)
	release()
	c = h.next(t)
	require.Equal(t, t0.Add(2*time.Minute), c.at, "it runs as soon as the device is free")

	// This run lasts 2.5 periods: the starts at +3m and +4m are skipped.
	h.clk.advance(150 * time.Second)
	c.reply <- nil
	require.Equal(t, 30*time.Second, h.clk.fireNext(t))
	require.Equal(t, t0.Add(5*time.Minute), h.next(t).at)
	require.Equal(t, 2.0, skipped(skipStillRunning))
	require.Equal(t, 1.0, skipped(skipDeviceBusy))
	require.Equal(t, 0.0, h.gauge(t, "failures", "tick"), "skips are not failures")
}

// A run asked for through the API runs between scheduled starts and does
// not move them; a second ask while it is asked or running is refused; a
// continuous job and an unknown one cannot be asked.
func TestTriggers(t *testing.T) {
	h := newSchedHarness(t, everyMinute+`
  adhoc: {target: data, profile: random-read, duration: 10s, ramp: 0s}
  canary: {target: data, profile: canary, continuous: true}
`, t0, rand.Int64N)
	// The canary runs whenever nothing heavier holds the device.
	take := func(job string) runCall {
		for {
			c := h.next(t)
			if c.job == job {
				return c
			}
			go func() { <-c.ctx.Done() }() // a canary's run: it ends when a heavy run needs the device
		}
	}
	c := take("tick")
	require.Equal(t, t0, c.at)
	c.reply <- nil
	h.waitTimers(t, 1)

	h.clk.advance(20 * time.Second)
	found, err := h.s.trigger("tick")
	require.True(t, found)
	require.NoError(t, err)
	// The second ask is refused whichever step the first has reached by
	// now: asked, waiting for the device, or running.
	_, err = h.s.trigger("tick")
	require.Error(t, err)
	require.Regexp(t, `^job "tick" is already (asked to run|waiting for its device|running)$`, err.Error())
	c = take("tick")
	require.Equal(t, "api", c.trigger)
	require.Equal(t, t0.Add(20*time.Second), c.at)
	_, err = h.s.trigger("tick")
	require.EqualError(t, err, `job "tick" is already running`)
	c.reply <- nil
	require.Eventually(t, func() bool { return h.s.runner("tick").state.Load() == stateIdle }, testwait.Patience, time.Millisecond)
	require.Equal(t, 40*time.Second, h.clk.fireNext(t), "the schedule did not move")
	c = take("tick")
	require.Equal(t, "schedule", c.trigger)
	c.reply <- nil

	// An on-demand job that cannot start is not retried by itself.
	_, err = h.s.trigger("adhoc")
	require.NoError(t, err)
	c = take("adhoc")
	c.reply <- errMissingDir
	require.Eventually(t, func() bool { return h.s.runner("adhoc").state.Load() == stateIdle }, testwait.Patience, time.Millisecond)
	info := h.s.info(h.cfg.Jobs["adhoc"])
	require.Equal(t, "idle", info.State)
	require.Equal(t, 1, info.ConsecutiveFailures)
	require.Equal(t, errMissingDir.Error(), info.LastError)
	require.Nil(t, info.NextAttempt)
	require.Len(t, h.logs.lines("job could not start"), 1)
	_, err = h.s.trigger("adhoc")
	require.NoError(t, err)
	take("adhoc").reply <- nil
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Zero(c, h.gauge(c, "failures", "adhoc")) }, testwait.Patience, time.Millisecond)

	_, err = h.s.trigger("canary")
	require.EqualError(t, err, `job "canary" is continuous: it is always running`)
	found, _ = h.s.trigger("nope")
	require.False(t, found)
}

// A canary stopped for a heavier run on its device says so: paused, and by
// what, in the API and its gauge; the pause is not a failure; it resumes
// when the device is free.
func TestCanaryPause(t *testing.T) {
	h := newSchedHarness(t, canaryOnly, t0, rand.Int64N)
	c := h.next(t)
	require.Equal(t, "running", h.s.info(h.cfg.Jobs["canary"]).State)
	got := make(chan func(), 1)
	go func() {
		release, err := h.s.devices.heavy(context.Background(), "/var/lib/ioprobe/probe.dat", "probe randread", true, time.Time{})
		if err == nil {
			got <- release
		}
	}()
	<-c.ctx.Done() // the heavy run stops the canary's
	release := <-got
	require.Eventually(t, func() bool { return h.s.runner("canary").state.Load() == statePaused }, testwait.Patience, time.Millisecond)
	info := h.s.info(h.cfg.Jobs["canary"])
	require.Equal(t, "paused", info.State)
	require.True(t, info.Paused)
	require.Equal(t, "probe randread", info.PausedBy)
	require.Zero(t, info.ConsecutiveFailures, "an interrupted run is not a failure")
	require.Equal(t, 1.0, testutil.ToFloat64(h.m.canaryPaused.WithLabelValues("data", "canary")))
	// The same through GET /api/v1/jobs.
	d := &Daemon{sched: h.s}
	d.cfg.Store(h.cfg)
	w := httptest.NewRecorder()
	d.handleJobs(w, httptest.NewRequest(http.MethodGet, "/api/v1/jobs", nil))
	require.Equal(t, http.StatusOK, w.Code)
	require.JSONEq(t, `{"jobs": [{"name": "canary", "target": "data", "mode": "continuous", "points": ["canary"],
		"state": "paused", "paused": true, "paused_by": "probe randread", "runs_started": 1}]}`, w.Body.String())

	release()
	c = h.next(t)
	require.Equal(t, t0, c.at, "it resumes at once")
	info = h.s.info(h.cfg.Jobs["canary"])
	require.Equal(t, "running", info.State)
	require.False(t, info.Paused)
	require.Empty(t, info.PausedBy)
	require.Equal(t, 0.0, testutil.ToFloat64(h.m.canaryPaused.WithLabelValues("data", "canary")))
	require.Zero(t, h.clk.pending(), "no retry was set")
}

// A reload that changes or removes a failing job ends its streak in the
// log as a run that starts does: the ERROR line is never the last word
// on a job whose failures gauge the reload reset or removed.
func TestReloadEndsFailureStreak(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"changed", `
targets:
  data: {path: /tmp/elsewhere/probe.dat, size: 1GiB}
jobs:
  canary: {target: data, profile: canary, continuous: true}
`, "job changed; it starts afresh by the reload"},
		{"removed", `
targets:
  data: {path: /var/lib/ioprobe/probe.dat, size: 1GiB}
jobs:
  hourly: {target: data, profile: oltp, every: 1h}
`, "job removed by the reload"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newSchedHarness(t, canaryOnly, t0, rand.New(rand.NewPCG(1, 2)).Int64N)
			for range 3 {
				h.next(t).reply <- errMissingDir
				h.clk.fireNext(t)
			}
			require.Len(t, h.logs.lines("job cannot start"), 1)
			cfg, err := config.Parse("ioprobe.yaml", []byte(tc.doc), config.Options{})
			require.NoError(t, err)
			h.s.apply(cfg)
			ended := h.logs.lines(tc.want)
			require.Len(t, ended, 1, "%s", h.logs)
			require.Contains(t, ended[0], "job=canary")
			require.Contains(t, ended[0], "failed_starts=3")
		})
	}
}

// One scrape shows one state of a job's streak: a job whose run started
// (consecutive failures 0) is never still waiting to try again. The two
// gauges were set one after the other and gathered at different instants,
// so a scrape during a recovery could show the streak ended and the next
// attempt still set (seen by the e2e TestServeBacksOffAMissingDirectory on
// a loaded machine; an alert on the next attempt would see a recovered job
// in back-off). Here a job fails, is given its retry and recovers as fast
// as it can while the registry is gathered again and again: before the
// fix about 1 scrape in 100 was torn so, and 1,000 scrapes are made.
func TestStreakScrapedAtOnce(t *testing.T) {
	h := newSchedHarness(t, canaryOnly, t0, rand.New(rand.NewPCG(1, 2)).Int64N)
	h.next(t) // the canary's loop waits in its first run, and leaves its streak alone
	r := h.s.jobs["canary"]
	require.NotNil(t, r)

	var wg sync.WaitGroup
	stop := make(chan struct{})
	const want = 1000 // scrapes
	var scrapes atomic.Int64
	torn := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			fams, err := h.reg.Gather()
			if err != nil {
				continue
			}
			streak, next := -1.0, -1.0
			for _, f := range fams {
				for _, m := range f.GetMetric() {
					if len(m.GetLabel()) != 1 || m.GetLabel()[0].GetValue() != "canary" {
						continue
					}
					switch f.GetName() {
					case "ioprobe_job_consecutive_failures":
						streak = m.GetGauge().GetValue()
					case "ioprobe_job_next_attempt_timestamp_seconds":
						next = m.GetGauge().GetValue()
					}
				}
			}
			scrapes.Add(1)
			if streak == 0 && next != 0 {
				torn++
			}
		}
	}()
	ctx := context.Background()
	for scrapes.Load() < want {
		h.s.outcome(ctx, r, errMissingDir, func(again time.Time) time.Time { return again })
		h.s.recovered(r)
	}
	close(stop)
	wg.Wait()
	require.Zero(t, torn, "scrapes that showed a recovered job still waiting to try again")
}
