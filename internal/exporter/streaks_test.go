package exporter

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

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
		h.s.retryAt(r, h.s.outcome(ctx, r, errMissingDir, true))
		h.s.recovered(r)
	}
	close(stop)
	wg.Wait()
	require.Zero(t, torn, "scrapes that showed a recovered job still waiting to try again")
}
