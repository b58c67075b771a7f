package exporter

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"time"

	"github.com/ioprobe/ioprobe/internal/config"
	"github.com/ioprobe/ioprobe/internal/runapi"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// RunState is a run of the run API as GET /api/v1/runs/ID answers it.
type RunState = runapi.Run

// apiRun is one accepted run.
type apiRun struct {
	id        string
	target    *config.Target // as configured when it was accepted
	label     string
	startAt   time.Time
	createdAt time.Time
	cancel    context.CancelFunc
	done      chan struct{} // closed when it ended and released its device

	mu     sync.Mutex
	st     result.RunState
	err    string
	res    *result.Result
	reason string // why it was stopped
}

func (r *apiRun) setState(s result.RunState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.st = s
}

// prepared: the runner opened the target and set up every worker.
func (r *apiRun) prepared() {
	if r.startAt.IsZero() {
		r.setState(result.RunRunning)
		return
	}
	r.setState(result.RunWaiting)
}

func (r *apiRun) end(state result.RunState, err string, res *result.Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.st, r.err, r.res = state, err, res
}

// stop asks the run to stop; the first reason given is kept.
func (r *apiRun) stop(reason string) {
	r.mu.Lock()
	if r.reason == "" {
		r.reason = reason
	}
	r.mu.Unlock()
	r.cancel()
}

func (r *apiRun) stopReason() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reason == "" {
		return "stopped: the daemon is shutting down"
	}
	return r.reason
}

func (r *apiRun) state(host result.Host) RunState {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := RunState{ID: r.id, State: r.st, Target: r.target.Name, Label: r.label, CreatedAt: r.createdAt,
		Error: r.err, Host: host, Result: r.res}
	if !r.startAt.IsZero() {
		t := r.startAt.UTC()
		s.StartAt = &t
		if s.State == result.RunWaiting && !time.Now().Before(r.startAt) {
			s.State = result.RunRunning // the barrier has opened (or opens now)
		}
	}
	return s
}

// apiRuns keeps the runs of the run API: every unfinished one, and the
// last api.runs.keep finished ones.
type apiRuns struct {
	mu         sync.Mutex
	runs       map[string]*apiRun
	finishedQ  []string // finished runs' ids, oldest first
	unfinished int
	closed     bool // the daemon is stopping: nothing more is accepted
	wg         sync.WaitGroup
	keep       func() int
	limit      int // unfinished runs accepted at most (tests lower it)
}

func newAPIRuns(keep func() int) *apiRuns {
	return &apiRuns{runs: map[string]*apiRun{}, keep: keep, limit: maxUnfinishedAPIRuns}
}

func (a *apiRuns) get(id string) *apiRun {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.runs[id]
}

// start accepts a planned run: it takes a place among the unfinished runs
// (429 beyond the bound), then the target's device (409 when another run
// holds it), and runs it in the background.
func (a *apiRuns) start(d *Daemon, p *plannedRun) (*apiRun, *badRequest) {
	a.mu.Lock()
	switch {
	case a.closed:
		a.mu.Unlock()
		return nil, &badRequest{code: http.StatusServiceUnavailable, msg: "the daemon is stopping"}
	case a.unfinished >= a.limit:
		a.mu.Unlock()
		return nil, &badRequest{code: http.StatusTooManyRequests, msg: fmt.Sprintf("%d API runs are already accepted and not finished", a.limit)}
	}
	a.unfinished++
	a.wg.Add(1)
	a.mu.Unlock()

	ctx, cancel := context.WithCancel(d.runCtx)
	run := &apiRun{id: newRunID(), target: p.target, label: p.label, startAt: p.startAt, createdAt: time.Now().UTC(),
		cancel: cancel, done: make(chan struct{}), st: result.RunAccepted}
	release, err := d.devices.heavy(ctx, deviceKeyOf(p.target.Path), fmt.Sprintf("API run %s (%s)", run.id, run.label), false, time.Time{})
	if err != nil {
		cancel()
		a.mu.Lock()
		a.unfinished--
		a.mu.Unlock()
		a.wg.Done()
		var busy *busyError
		if errors.As(err, &busy) {
			return nil, &badRequest{code: http.StatusConflict, msg: fmt.Sprintf("target %q: %v", p.target.Name, err)}
		}
		return nil, &badRequest{code: http.StatusServiceUnavailable, msg: "the daemon is stopping"}
	}
	a.mu.Lock()
	a.runs[run.id] = run
	a.mu.Unlock()
	go d.runAPI(ctx, run, p, release)
	return run, nil
}

// finished moves a run among the finished ones, dropping the oldest
// beyond keep.
func (a *apiRuns) finished(run *apiRun) {
	run.cancel()
	close(run.done)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.unfinished--
	a.finishedQ = append(a.finishedQ, run.id)
	a.trim()
	a.wg.Done()
}

// trim drops the oldest finished runs beyond keep (callers hold mu).
func (a *apiRuns) trim() {
	keep := a.keep()
	for len(a.finishedQ) > keep {
		delete(a.runs, a.finishedQ[0])
		a.finishedQ = a.finishedQ[1:]
	}
	a.finishedQ = append([]string(nil), a.finishedQ...) // let the dropped head go
}

// reconfigure stops the unfinished runs whose target the new config
// removed or changed, and trims the finished ones to its keep.
func (a *apiRuns) reconfigure(cfg *config.Config) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, run := range a.runs {
		select {
		case <-run.done:
			continue
		default:
		}
		if nt := cfg.Targets[run.target.Name]; nt == nil || !reflect.DeepEqual(nt, run.target) {
			run.stop(fmt.Sprintf("stopped: a reload removed or changed target %q", run.target.Name))
		}
	}
	a.trim()
}

// shutdown refuses new runs and waits for the running ones (the daemon's
// context, which they derive from, has ended).
func (a *apiRuns) shutdown() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.wg.Wait()
}
