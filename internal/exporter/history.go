package exporter

import (
	"sort"
	"sync"
	"time"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// Run is one finished run as GET /api/v1/runs lists it: which job, point
// and trigger, and the ioprobe.result/v1 document (absent when the run
// could not start; Error says why).
type Run struct {
	ID      uint64        `json:"id"`
	Job     string        `json:"job"`
	Target  string        `json:"target"`
	Point   string        `json:"point"`
	Trigger string        `json:"trigger"` // schedule, continuous, api
	Status  result.Status `json:"status"`  // ok, errors, interrupted, failed
	Error   string        `json:"error,omitempty"`
	// Label and RunID: a run posted to the run API (Job is then "api").
	Label      string         `json:"label,omitempty"`
	RunID      string         `json:"run_id,omitempty"`
	FinishedAt time.Time      `json:"finished_at"`
	Result     *result.Result `json:"result,omitempty"`
}

// history keeps the last runs of each job (a bounded ring per job, so a
// canary's frequent runs never push a nightly job's result out).
type history struct {
	mu    sync.Mutex
	seq   uint64
	byJob map[string][]*Run
}

func newHistory() *history { return &history{byJob: map[string][]*Run{}} }

func (h *history) add(r *Run, keep int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	r.ID = h.seq
	runs := append(h.byJob[r.Job], r)
	if keep > 0 && len(runs) > keep {
		runs = append([]*Run(nil), runs[len(runs)-keep:]...)
	}
	h.byJob[r.Job] = runs
}

// list returns the runs of job ("" for every job), newest first, at most
// limit of them (0: all).
func (h *history) list(job string, limit int) []*Run {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*Run
	for j, runs := range h.byJob {
		if job == "" || j == job {
			out = append(out, runs...)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID > out[b].ID })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// forget keeps the last keep(job) runs of each job: it drops the runs of
// the jobs it says 0 for (a reload removed them) and trims the others, so
// that renaming jobs or lowering run_history frees what it should.
func (h *history) forget(keep func(job string) int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for job, runs := range h.byJob {
		switch keepRuns := keep(job); {
		case keepRuns <= 0:
			delete(h.byJob, job)
		case len(runs) > keepRuns:
			h.byJob[job] = append([]*Run(nil), runs[len(runs)-keepRuns:]...)
		}
	}
}
