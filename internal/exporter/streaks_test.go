package exporter

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testwait"
)

// failureScrape is what one gather shows of a job's failure series (-1:
// absent).
type failureScrape struct {
	failed, streak, next float64 // runs_total{status="failed"}, consecutive failures, next attempt
}

// scrapeFailures gathers g once and reads job's failure series.
func scrapeFailures(g prometheus.Gatherer, job string) (failureScrape, error) {
	s := failureScrape{-1, -1, -1}
	fams, err := g.Gather()
	if err != nil {
		return s, err
	}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels[jobLabel] != job {
				continue
			}
			switch {
			case f.GetName() == "ioprobe_job_runs_total" && labels["status"] == "failed":
				s.failed = m.GetCounter().GetValue()
			case f.GetName() == "ioprobe_job_consecutive_failures":
				s.streak = m.GetGauge().GetValue()
			case f.GetName() == "ioprobe_job_next_attempt_timestamp_seconds":
				s.next = m.GetGauge().GetValue()
			}
		}
	}
	return s, nil
}

// torn says what is false in s of a continuous job (always retried while
// it fails), or "".
func (s failureScrape) torn() string {
	switch {
	case s.failed < 0 || s.streak < 0 || s.next < 0:
		return "a series is missing"
	case s.streak > 0 && s.next == 0:
		return "a failing job with no retry planned"
	case s.failed < s.streak:
		return "fewer failed runs counted than the streak"
	case s.streak == 0 && s.next != 0:
		return "a recovered job still waiting to try again"
	}
	return ""
}

// Every scrape shows one instant of a job's failures: a run that could not
// start is counted in ioprobe_job_runs_total{status="failed"}, in the
// streak and with its retry at once, and a run that starts ends the streak
// and the retry at once. Alerts and dashboards read the three together
// (docs/metrics.md): a failing job with no retry planned, a streak longer
// than the failed runs counted, a failed run counted without its streak,
// or a recovered job still in back-off are states the daemon never was
// in. (The counter was incremented as the
// run's point ended, the streak after it, and the retry after that: a
// scrape in between showed each; the e2e TestServeBacksOffAMissingDirectory
// had to await the three together.) Here the daemon's own run function
// meets a missing directory, fails over and over (the back-off's waits on
// a fake clock), starts for real once the directory is there, and fails
// again once it is gone, while the registry is gathered without pause;
// every scrape is checked.
func TestFailureSeriesScrapedAtOnce(t *testing.T) {
	d, dir := newDaemon(t, `
global: {snapshot_interval: 100ms}
targets:
  data: {path: DIR/gone/probe.dat, size: 16MiB}
jobs:
  canary: {target: data, profile: canary, continuous: true, duration: 300ms, ramp: 0s}
`, WebOptions{})
	gone := filepath.Join(dir, "gone")
	clk := newFakeClock(time.Now())
	s := newScheduler(schedDeps{clock: clk, devices: d.devices, m: d.m, logger: d.logger, run: d.runPoints,
		deviceKey: func(p string) string { return p }, rand: rand.Int64N})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		s.stop()
	})
	s.start(ctx, d.cfg.Load())
	r := s.runner("canary")
	require.NotNil(t, r)

	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		scrapes int
		bad     = map[string]int{}
		first   = map[string]failureScrape{}
	)
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Failed runs counted before the streak began: a run of the
		// canary (one point) that could not start adds one to both; a
		// recovery moves the streak's failures into it. It never goes down; a failed run counted
		// before its streak made it.
		before := 0.0
		for {
			select {
			case <-stop:
				return
			default:
			}
			got, err := scrapeFailures(d.Registry(), "canary")
			mu.Lock()
			scrapes++
			if err != nil {
				bad["gather: "+err.Error()]++
			} else {
				why := got.torn()
				if why == "" && got.failed-got.streak < before {
					why = "a failed run counted without its streak"
				}
				if why != "" {
					if bad[why] == 0 {
						first[why] = got
					}
					bad[why]++
				}
				before = got.failed - got.streak
			}
			mu.Unlock()
		}
	}()

	const recoveries, failsEach = 4, 400
	for i := range recoveries {
		for range failsEach {
			clk.fireNext(t) // its back-off ends: it tries again, and cannot start
		}
		// The last attempt has failed and set its retry (fireNext returns
		// once it fires the timer, not once the attempt is over).
		require.Eventually(t, func() bool { return clk.pending() == 1 }, testwait.Patience, time.Millisecond)
		require.Positive(t, r.fail.get().streak)
		require.NoError(t, os.Mkdir(gone, 0o755))
		clk.fireNext(t) // this one starts
		require.Eventually(t, func() bool { return r.fail.get().streak == 0 }, runPatience, 10*time.Millisecond, "recovery %d", i)
		require.NoError(t, os.RemoveAll(gone)) // its next run cannot start
	}
	// The last streak's first failure and its retry.
	require.Eventually(t, func() bool { return clk.pending() == 1 }, testwait.Patience, time.Millisecond)
	for range failsEach {
		clk.fireNext(t)
	}
	require.Eventually(t, func() bool { return clk.pending() == 1 }, testwait.Patience, time.Millisecond)
	close(stop)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	report := fmt.Sprintf("%d scrapes; false states: %v; the first of each: %+v", scrapes, bad, first)
	t.Log(report)
	require.Empty(t, bad, report)
	final, err := scrapeFailures(d.Registry(), "canary")
	require.NoError(t, err)
	require.GreaterOrEqual(t, final.failed, float64(recoveries*(failsEach+1)), "every failed run was counted")
}
