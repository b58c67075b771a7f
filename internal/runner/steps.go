package runner

import (
	"sort"
	"sync"
	"time"
)

// Step is a step of a run in progress that a signal may have to wait
// for: what it is and how long it has been running.
type Step struct {
	What string
	For  time.Duration
}

// steps are the steps in progress of the process's runs (a suite's and
// a daemon's too), for the backstop to say what a run slow to stop was
// doing rather than guess.
var steps struct {
	mu  sync.Mutex
	seq int
	m   map[int]step
}

type step struct {
	what    string
	started time.Time
}

// BeginStep marks what as in progress until the returned func is called
// (a command that wraps a run marks its own steps: a scheduler put back).
func BeginStep(what string) (end func()) {
	steps.mu.Lock()
	defer steps.mu.Unlock()
	if steps.m == nil {
		steps.m = map[int]step{}
	}
	steps.seq++
	id := steps.seq
	steps.m[id] = step{what: what, started: time.Now()}
	return func() {
		steps.mu.Lock()
		defer steps.mu.Unlock()
		delete(steps.m, id)
	}
}

// Busy lists the steps of runs in progress, the latest begun first (a
// step within another before it).
func Busy() []Step {
	steps.mu.Lock()
	defer steps.mu.Unlock()
	now := time.Now()
	out := make([]Step, 0, len(steps.m))
	for _, s := range steps.m {
		out = append(out, Step{What: s.what, For: now.Sub(s.started)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].For < out[j].For })
	return out
}
