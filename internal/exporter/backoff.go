package exporter

import (
	"sync"
	"time"
)

// A job whose runs cannot start (its directory is missing, its target is on
// tmpfs, its device vanished or is refused) is tried again after 1 s, then
// after twice as long each time, up to a few minutes; a start that succeeds
// ends the streak. Each wait is lengthened by up to a quarter at random, so
// that jobs which failed together do not retry together.
const (
	backoffFirst = time.Second
	backoffCeil  = 4 * time.Minute             // the longest wait before jitter
	backoffMax   = backoffCeil + backoffCeil/4 // and after it: 5 min
)

// backoffDelay is the wait after the streak-th failed start in a row
// (streak ≥ 1): backoffFirst × 2^(streak−1), at most backoffCeil, plus
// rnd(a quarter of it). rnd(n) returns a number in [0, n).
func backoffDelay(streak int, rnd func(n int64) int64) time.Duration {
	d := backoffFirst
	for i := 1; i < streak && d < backoffCeil; i++ {
		d *= 2
	}
	d = min(d, backoffCeil)
	return d + time.Duration(rnd(int64(d/4)))
}

// failures is a job's streak of runs that could not start.
type failures struct {
	mu     sync.Mutex
	streak int
	err    string    // why the last one could not start
	next   time.Time // when the job tries again by itself (zero: not retrying)
	// held counts the points of the run under way that could not start,
	// not yet in ioprobe_job_runs_total: they are counted with the run's
	// outcome (jobCollector.failed or started), in one step with the
	// streak.
	held int
}

// failureInfo is a copy of a job's streak, for the API.
type failureInfo struct {
	streak int
	err    string
	next   time.Time
}

func (f *failures) get() failureInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	return failureInfo{streak: f.streak, err: f.err, next: f.next}
}

// fail counts one more failed start, whose next attempt is next (zero:
// none), and returns the streak.
func (f *failures) fail(err error, next time.Time) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.streak++
	f.err = err.Error()
	f.next = next
	return f.streak
}

// hold keeps one point that could not start, of a run whose outcome is
// not known yet.
func (f *failures) hold() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held++
}

// takeHeld returns the points held and holds none.
func (f *failures) takeHeld() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.held
	f.held = 0
	return n
}

// retryAt records when the job tries again.
func (f *failures) retryAt(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next = t
}

// reset ends the streak and returns how long it was.
func (f *failures) reset() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.streak
	f.streak, f.err, f.next = 0, "", time.Time{}
	return n
}

// probeStreaks keeps, for each module and target, the streak of probes
// that could not start, so that the daemon's log says once that they fail
// and once that they start again. Probes are not held back: Prometheus
// paces them, and each scrape is a fresh measurement (blackbox style), so
// a target that comes back shows at the next one.
type probeStreaks struct {
	mu sync.Mutex
	m  map[[2]string]*failures
}

func (p *probeStreaks) get(module, target string) *failures {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[[2]string]*failures{}
	}
	k := [2]string{module, target}
	if p.m[k] == nil {
		p.m[k] = &failures{}
	}
	return p.m[k]
}
