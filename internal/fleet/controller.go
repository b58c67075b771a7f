package fleet

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// Controller runs one workload on many daemons at once.
type Controller struct {
	// MaxSkew is the largest clock offset a host may have against the
	// controller's clock: the hosts start at one instant of their own
	// clocks, so their measured windows line up only as well as the
	// clocks do.
	MaxSkew time.Duration
	// StartDelay is how far ahead of the posts the common start is
	// picked: long enough for every host to accept the run and prepare
	// its target (a host whose preparation overruns fails).
	StartDelay time.Duration
	// LostAfter: a host that does not answer for this long while its run
	// should be going on is lost (its run is reported unreachable).
	LostAfter time.Duration
	// MaxPoll is the longest wait between two polls of one host.
	MaxPoll time.Duration
	// Late: a run still not finished this long after its planned end is
	// given up (and stopped).
	Late time.Duration
	// StopWait bounds the wait for the hosts' partial results after a
	// stop (Ctrl-C).
	StopWait time.Duration
	// AnswerWithin bounds the requests a daemon answers at once — the
	// clock readings, the dry runs, the POST of a run — and LostAfter
	// bounds it in turn: a host that accepts connections and says
	// nothing fails its pre-check in this time, and nothing starts.
	AnswerWithin time.Duration
	// Log receives progress lines (nil: none).
	Log func(format string, args ...any)
	// Watch, when set, is told every host's state as it changes (host i
	// of Run's clients; from several goroutines at once), with the run's
	// common start and planned end.
	Watch func(startAt, end time.Time, i int, state result.RunState)
}

// Defaults fills the zero fields.
func (c *Controller) defaults() {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&c.MaxSkew, 50*time.Millisecond)
	set(&c.StartDelay, 5*time.Second)
	set(&c.LostAfter, 15*time.Second)
	set(&c.MaxPoll, 2*time.Second)
	set(&c.Late, time.Minute)
	set(&c.StopWait, 30*time.Second)
	set(&c.AnswerWithin, 5*time.Second)
	c.AnswerWithin = min(c.AnswerWithin, c.LostAfter)
}

// quick bounds a request that the daemon answers at once.
func (c *Controller) quick(ctx context.Context) (context.Context, context.CancelFunc) {
	return within(ctx, c.AnswerWithin)
}

func (c *Controller) logf(format string, args ...any) {
	if c.Log != nil {
		c.Log(format, args...)
	}
}

// HostError is what went wrong on one host.
type HostError struct {
	Address string
	Err     error
}

func (e *HostError) Error() string { return e.Address + ": " + e.Err.Error() }
func (e *HostError) Unwrap() error { return e.Err }

// clockSamples is how many clock readings each pre-check takes (the
// shortest round trip wins, as NTP filters).
const clockSamples = 5

// maxRequestsAtOnce bounds the requests of a pre-check or a start in
// flight at once (a thousand hosts should not open a thousand TLS
// handshakes in one instant).
const maxRequestsAtOnce = 64

// parallel runs f on every client, at most limit at once, and waits.
func parallel(clients []*Client, limit int, f func(i int, c *Client)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, limit)
	for i, c := range clients {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(i, c)
		}()
	}
	wg.Wait()
}

// Check is the pre-check of every host, all at once, before anything
// starts anywhere: the daemon answers (its clock), its clock is within
// MaxSkew of ours, and it accepts every request as a dry run (the target
// is configured there, the workload passes its validation and limits).
// It returns each host's clock reading and one error per host that
// failed, in host order.
func (c *Controller) Check(ctx context.Context, clients []*Client, reqs []RunRequest) ([]Skew, []*HostError) {
	c.defaults()
	skews := make([]Skew, len(clients))
	errs := make([]error, len(clients))
	parallel(clients, maxRequestsAtOnce, func(i int, cl *Client) {
		qctx, done := c.quick(ctx) // the readings together
		sk, err := cl.Clock(qctx, clockSamples)
		done()
		if err != nil {
			errs[i] = explain(err, RunRequest{})
			return
		}
		skews[i] = sk
		switch off := sk.Offset.Abs(); {
		case sk.Uncertainty > c.MaxSkew:
			errs[i] = fmt.Errorf("its clock cannot be read within --max-skew %s: the round trip takes %s", c.MaxSkew, 2*sk.Uncertainty)
			return
		case off > c.MaxSkew:
			errs[i] = fmt.Errorf("clock offset %s is over --max-skew %s: fix its NTP", sk, c.MaxSkew)
			return
		}
		for _, req := range reqs {
			req.DryRun, req.StartAt = true, ""
			qctx, done := c.quick(ctx)
			_, err := cl.Post(qctx, req)
			done()
			if err != nil {
				errs[i] = explain(err, req)
				return
			}
		}
	})
	var out []*HostError
	for i, err := range errs {
		if err != nil {
			out = append(out, &HostError{Address: clients[i].Address, Err: err})
		}
	}
	return skews, out
}

// explain adds what a refusal of the run API means for the fleet.
func explain(err error, req RunRequest) error {
	var (
		ae    *APIError
		redir *RedirectError
		bad   *AnswerError
	)
	if errors.As(err, &redir) || errors.As(err, &bad) {
		return err
	}
	if !errors.As(err, &ae) {
		return fmt.Errorf("unreachable: %w", err)
	}
	switch ae.Status {
	case 403:
		return fmt.Errorf("refused: %w: start its daemon with --web.enable-admin-api", err)
	case 404:
		return fmt.Errorf("target %q: %w", req.Target, err)
	case 401:
		return fmt.Errorf("%w: give the credentials in --client-config", err)
	}
	return err
}

// Run posts req to every client with a common start StartDelay ahead and
// follows each run to its end. A POST that fails stops the runs already
// accepted (before their start: nothing is measured) and returns a
// *HostError naming the host. When ctx ends (Ctrl-C), every run is
// stopped and its partial result collected; Run then returns the hosts
// and ctx's error.
func (c *Controller) Run(ctx context.Context, clients []*Client, req RunRequest) (time.Time, []result.FleetHost, error) {
	c.defaults()
	startAt := time.Now().Add(c.StartDelay).UTC().Truncate(time.Millisecond)
	req.DryRun = false
	req.SetStartAt(startAt)
	ids := make([]string, len(clients))
	errs := make([]error, len(clients))
	parallel(clients, maxRequestsAtOnce, func(i int, cl *Client) {
		qctx, done := c.quick(ctx)
		defer done()
		ids[i], errs[i] = cl.Post(qctx, req)
	})
	var postErr error
	for i, err := range errs {
		if err != nil && ctx.Err() == nil { // interrupted: not the host's fault
			postErr = &HostError{Address: clients[i].Address, Err: explain(err, req)}
			break
		}
	}
	if postErr != nil || ctx.Err() != nil {
		if postErr == nil {
			postErr = ctx.Err()
		}
		return startAt, nil, &StartError{Cause: postErr, Hosts: c.cancel(ctx, clients, ids, req.Planned())}
	}
	c.logf("started %q on %d %s at %s", req.Label, len(clients), plural(len(clients), "host", "hosts"), startAt.Format(time.RFC3339Nano))
	hosts := make([]result.FleetHost, len(clients))
	end := startAt.Add(req.Planned())
	// Every run is followed at once: each must notice its host's loss
	// and a stop while it runs (a poll is one small GET at most every
	// MaxPoll).
	parallel(clients, len(clients), func(i int, cl *Client) {
		var watch func(result.RunState)
		if c.Watch != nil {
			watch = func(state result.RunState) { c.Watch(startAt, end, i, state) }
		}
		hosts[i] = c.follow(ctx, cl, ids[i], end, req.Planned(), watch)
	})
	// A host's result must be of the run posted to it, which started at
	// startAt: another (an earlier run's, replayed) would be merged as a
	// measurement of this one.
	for i := range hosts {
		if r := hosts[i].Result; r != nil && !r.StartAt.Equal(startAt) {
			hosts[i].State, hosts[i].Result = result.RunFailed, nil
			hosts[i].Error = fmt.Sprintf("answered the result of another run: it was to start at %s, this run at %s",
				r.StartAt.UTC().Format(time.RFC3339Nano), startAt.Format(time.RFC3339Nano))
		}
	}
	return startAt, hosts, ctx.Err()
}

// cancel stops the runs already accepted and says what each had done:
// most were stopped before their start, but a host whose POST took long
// may have let the others start, even finish.
func (c *Controller) cancel(ctx context.Context, clients []*Client, ids []string, planned time.Duration) []Cancelled {
	sctx, done := within(withResultLimit(context.WithoutCancel(ctx), planned), c.StopWait)
	defer done()
	out := make([]Cancelled, len(clients))
	parallel(clients, maxRequestsAtOnce, func(i int, cl *Client) {
		out[i] = Cancelled{Address: cl.Address, RunID: ids[i]}
		if ids[i] == "" {
			return
		}
		st, err := cl.Delete(sctx, ids[i])
		if err != nil {
			out[i].Err = err.Error()
			c.logf("%s: could not stop run %s: %v", cl.Address, ids[i], err)
			return
		}
		out[i].State, out[i].Measured = st.State, st.Result != nil
	})
	return out
}

// Cancelled is what one host's run did when the start was called off.
type Cancelled struct {
	Address string
	RunID   string          // "": the host accepted no run
	State   result.RunState // its state once stopped ("": unknown, Err says why)
	// Measured: the run had started, and its result (partial when it
	// was stopped) is kept on the daemon under RunID.
	Measured bool
	Err      string // the stop failed: the run may still start
}

// String says what the host did.
func (h Cancelled) String() string {
	switch {
	case h.RunID == "":
		return h.Address + ": no run accepted"
	case h.Err != "":
		return fmt.Sprintf("%s: run %s could not be stopped (%s): it may still run", h.Address, h.RunID, h.Err)
	case h.Measured && h.State == result.RunDone:
		return fmt.Sprintf("%s: run %s had finished: its result is kept there (GET /api/v1/runs/%s)", h.Address, h.RunID, h.RunID)
	case h.Measured:
		return fmt.Sprintf("%s: run %s had started: stopped (%s), its partial result is kept there (GET /api/v1/runs/%s)", h.Address, h.RunID, h.State, h.RunID)
	}
	return fmt.Sprintf("%s: run %s stopped before its start (%s): nothing measured", h.Address, h.RunID, h.State)
}

// StartError is a start called off: a host refused its run (Cause is
// its *HostError) or the start was interrupted (ctx's error). Every run
// already accepted was stopped; Hosts says what each had done.
type StartError struct {
	Cause error
	Hosts []Cancelled
}

func (e *StartError) Error() string { return e.Cause.Error() }
func (e *StartError) Unwrap() error { return e.Cause }

// Measured lists the hosts whose run had started, or whose stop failed:
// something may have been measured there.
func (e *StartError) Measured() []Cancelled {
	var out []Cancelled
	for _, h := range e.Hosts {
		if h.Measured || h.Err != "" {
			out = append(out, h)
		}
	}
	return out
}

// follow polls one run until it ends, with back-off: quickly while it
// prepares, then at most every MaxPoll. It never reads samples, only the
// run's state and, at the end, its result.
func (c *Controller) follow(ctx context.Context, cl *Client, id string, end time.Time, planned time.Duration, watch func(state result.RunState)) result.FleetHost {
	h := result.FleetHost{Address: cl.Address, RunID: id, State: result.RunAccepted}
	var told result.RunState
	if watch != nil {
		defer func() {
			if h.State != told {
				watch(h.State)
			}
		}()
	}
	lastOK := time.Now()
	wait := 100 * time.Millisecond
	pctx := ctx
	var stopDone context.CancelFunc
	defer func() {
		if stopDone != nil {
			stopDone()
		}
	}()
	apply := func(st *RunState) bool {
		h.State, h.Error = st.State, st.Error
		if st.State == result.RunDone && st.Result == nil {
			// Done is a result: without one the host measured nothing
			// the fleet can show.
			h.State, h.Error = result.RunFailed, "answered done without a result"
		}
		if watch != nil && h.State != told && !h.State.Terminal() {
			told = h.State
			watch(told)
		}
		if st.Host.Hostname != "" {
			h.Identity = st.Host
		}
		if st.Result != nil {
			h.Result = st.Result
			if h.Identity.Hostname == "" {
				h.Identity = st.Result.Host
			}
		}
		return st.State.Terminal()
	}
	stopping := false
	stop := func() bool {
		stopping = true
		pctx, stopDone = within(withResultLimit(context.WithoutCancel(ctx), planned), c.StopWait)
		st, err := cl.Delete(pctx, id)
		return err == nil && apply(st)
	}
	var redir *RedirectError
	var bad *AnswerError
	for {
		rctx, done := within(withResultLimit(pctx, planned), c.LostAfter)
		st, err := cl.Get(rctx, id)
		done()
		switch {
		case err == nil:
			lastOK = time.Now()
			if apply(st) {
				return h
			}
		case errors.As(err, &redir) || errors.As(err, &bad):
			// Not a daemon's answer: the host has failed, whatever
			// answered in its place; its run is stopped if it can be.
			if !stopping {
				stop()
			}
			h.State, h.Error = result.RunFailed, err.Error()
			return h
		case IsStatus(err, 404):
			h.State, h.Error = result.RunFailed, "the daemon no longer knows run "+id+" (restarted?)"
			return h
		case stopping && pctx.Err() != nil:
			h.State, h.Error = result.RunUnreachable, fmt.Sprintf("no answer within %s of the stop: %v", c.StopWait, err)
			return h
		case !stopping && ctx.Err() != nil:
			// Interrupted during the request: stop below.
		case time.Since(lastOK) > c.LostAfter:
			h.State, h.Error = result.RunUnreachable, fmt.Sprintf("lost during the run: no answer for %s: %v", time.Since(lastOK).Round(time.Second), err)
			return h
		}
		if !stopping && ctx.Err() == nil && time.Now().After(end.Add(c.Late)) {
			was := h.State
			stop()
			h.State, h.Error = result.RunFailed, fmt.Sprintf("still %s %s after its planned end: stopped", was, c.Late)
			return h
		}
		wait = min(2*wait, c.MaxPoll)
		if u := time.Until(end); u > 0 && u < wait {
			wait = u + 20*time.Millisecond
		}
		if !stopping && ctx.Err() != nil {
			if stop() {
				return h
			}
			continue
		}
		interrupt := ctx.Done()
		if stopping {
			interrupt = nil // stopped already: poll for the partial result
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-interrupt:
			t.Stop()
			if stop() {
				return h
			}
		}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
