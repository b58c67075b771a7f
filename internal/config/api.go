package config

import (
	"time"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// API is the `api` section: the bounds of the daemon's run API (POST
// /api/v1/runs). A run asked for outside them is refused (400) with the
// key that bounds it.
type API struct {
	// Given: the file has an api section, so that runs may be posted for
	// any of its targets (--config.check checks each one for them).
	Given bool
	Runs  APIRuns
}

// APIRuns bounds one run posted to the run API and how many are kept.
type APIRuns struct {
	MaxDuration   time.Duration // ramp + duration of one run
	MaxRamp       time.Duration
	MaxQueueDepth int // per worker per target
	MaxWorkers    int // per access specification
	// MaxStartDelay is how far ahead start_at may be.
	MaxStartDelay time.Duration
	// AllowWrites false accepts read-only specifications only (read_pct 100).
	AllowWrites bool
	// Keep is how many finished API runs GET /api/v1/runs/ID still answers.
	Keep int
}

// Defaults and bounds of api.runs.
const (
	DefaultAPIMaxDuration   = 10 * time.Minute
	DefaultAPIMaxRamp       = 2 * time.Minute
	DefaultAPIMaxQueueDepth = 256
	DefaultAPIMaxWorkers    = 64
	DefaultAPIMaxStartDelay = 10 * time.Minute
	DefaultAPIKeep          = 50
	maxAPIKeep              = 1000
	maxAPIDuration          = 24 * time.Hour
	maxAPIStartDelay        = 24 * time.Hour
)

// APIJobName is the ioprobe_job label of runs posted to the run API; no
// job may be called so.
const APIJobName = "api"

// APIKey is the config key of a run API limit, as refusals name it.
func APIKey(field string) string { return "api.runs." + field }

func validateAPI(r rawAPI, ps *problems) API {
	l := APIRuns{
		MaxDuration:   DefaultAPIMaxDuration,
		MaxRamp:       DefaultAPIMaxRamp,
		MaxQueueDepth: DefaultAPIMaxQueueDepth,
		MaxWorkers:    DefaultAPIMaxWorkers,
		MaxStartDelay: DefaultAPIMaxStartDelay,
		AllowWrites:   true,
		Keep:          DefaultAPIKeep,
	}
	rr := r.Runs
	durIn(ps, APIKey("max_duration"), &l.MaxDuration, rr.MaxDuration, time.Second, maxAPIDuration)
	durIn(ps, APIKey("max_ramp"), &l.MaxRamp, rr.MaxRamp, 0, maxAPIDuration)
	durIn(ps, APIKey("max_start_delay"), &l.MaxStartDelay, rr.MaxStartDelay, 0, maxAPIStartDelay)
	intIn(ps, APIKey("max_queue_depth"), &l.MaxQueueDepth, rr.MaxQueueDepth, 1, workload.MaxQueueDepth)
	intIn(ps, APIKey("max_workers"), &l.MaxWorkers, rr.MaxWorkers, 1, workload.MaxWorkers)
	intIn(ps, APIKey("keep"), &l.Keep, rr.Keep, 1, maxAPIKeep)
	if rr.AllowWrites != nil {
		l.AllowWrites = *rr.AllowWrites
	}
	return API{Runs: l}
}
