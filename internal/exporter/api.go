package exporter

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/ioprobe/ioprobe/internal/config"
)

// The run API. GET endpoints are always on; POST /api/v1/jobs/NAME/run
// starts I/O and needs --web.enable-admin-api.
//
//	GET  /api/v1/runs[?job=NAME][&limit=N]  finished runs, newest first
//	GET  /api/v1/jobs                       configured jobs and their state
//	POST /api/v1/jobs/NAME/run              run a job now:
//	     202 accepted: it runs as soon as its device is free
//	     404 no such job
//	     409 it is running, waiting for its device, already asked for, or continuous
//	     403 the admin API is disabled

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

type apiError struct {
	Error string `json:"error"`
}

func (d *Daemon) handleRuns(w http.ResponseWriter, r *http.Request) {
	limit := 0
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeJSON(w, http.StatusBadRequest, apiError{fmt.Sprintf("bad limit %q: want a whole number", v)})
			return
		}
		limit = n
	}
	if !d.api.acquire(maxAPIRequests) {
		busy(w, "1", "%d requests already in flight", maxAPIRequests)
		return
	}
	defer d.api.release()
	runs := d.history.list(r.URL.Query().Get("job"), limit)
	if runs == nil {
		runs = []*Run{}
	}
	writeJSON(w, http.StatusOK, struct {
		Runs []*Run `json:"runs"`
	}{runs})
}

// JobInfo is one job as GET /api/v1/jobs lists it.
type JobInfo struct {
	Name   string   `json:"name"`
	Target string   `json:"target"`
	Mode   string   `json:"mode"`
	Every  string   `json:"every,omitempty"`
	Points []string `json:"points"`
	// State is idle, queued (asked to run through the API), waiting (for
	// its device), running, paused (a continuous job while a heavier run
	// holds its device: PausedBy says which), retrying (waiting to try
	// again after runs that could not start) or stopped.
	State       string     `json:"state"`
	Paused      bool       `json:"paused,omitempty"`
	PausedBy    string     `json:"paused_by,omitempty"`
	NextRun     *time.Time `json:"next_run,omitempty"`
	RunsStarted uint64     `json:"runs_started"`
	// ConsecutiveFailures counts its runs in a row that could not start,
	// LastError says why the last one could not, NextAttempt is when it
	// tries again by itself.
	ConsecutiveFailures int        `json:"consecutive_failures,omitempty"`
	LastError           string     `json:"last_error,omitempty"`
	NextAttempt         *time.Time `json:"next_attempt,omitempty"`
}

// info describes job j and the state of its runner, if it has one.
func (s *scheduler) info(j *config.Job) JobInfo {
	info := JobInfo{Name: j.Name, Target: j.Target.Name, Mode: string(j.Mode), State: "stopped"}
	if j.Mode == config.Scheduled {
		info.Every = j.Schedule.Every.String()
	}
	for _, p := range j.Points {
		info.Points = append(info.Points, p.Name)
	}
	jr := s.runner(j.Name)
	if jr == nil {
		return info
	}
	st := jr.state.Load()
	info.State = stateNames[st]
	info.Paused = jr.paused.Load()
	if st == statePaused {
		info.PausedBy = s.devices.holderOf(s.deviceKey(j.Target.Path))
	}
	info.RunsStarted = jr.runs.Load()
	if ns := jr.next.Load(); ns != 0 && j.Mode == config.Scheduled {
		t := time.Unix(0, ns).UTC()
		info.NextRun = &t
	}
	if f := jr.fail.get(); f.streak > 0 {
		info.ConsecutiveFailures, info.LastError = f.streak, f.err
		if !f.next.IsZero() {
			t := f.next.UTC()
			info.NextAttempt = &t
			if st == stateIdle {
				info.State = "retrying"
			}
		}
	}
	return info
}

func (d *Daemon) handleJobs(w http.ResponseWriter, r *http.Request) {
	cfg := d.cfg.Load()
	out := []JobInfo{}
	for _, j := range cfg.Jobs {
		out = append(out, d.sched.info(j))
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	writeJSON(w, http.StatusOK, struct {
		Jobs []JobInfo `json:"jobs"`
	}{out})
}

func (d *Daemon) handleTrigger(w http.ResponseWriter, r *http.Request) {
	if !d.opts.Web.EnableAdminAPI {
		writeJSON(w, http.StatusForbidden, apiError{"the admin API is disabled: start ioprobe serve with --web.enable-admin-api"})
		return
	}
	name := r.PathValue("name")
	if d.cfg.Load().Jobs[name] == nil {
		writeJSON(w, http.StatusNotFound, apiError{fmt.Sprintf("no job %q", name)})
		return
	}
	found, err := d.sched.trigger(name)
	switch {
	case !found:
		writeJSON(w, http.StatusNotFound, apiError{fmt.Sprintf("no job %q", name)})
		return
	case err != nil:
		writeJSON(w, http.StatusConflict, apiError{err.Error()})
		return
	}
	writeJSON(w, http.StatusAccepted, struct {
		Job    string `json:"job"`
		Status string `json:"status"`
		Runs   string `json:"runs"`
	}{name, "accepted", "/api/v1/runs?job=" + name})
}
