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
	dur := func(dst *time.Duration, v *time.Duration, key string, lo, hi time.Duration) {
		if v == nil {
			return
		}
		*dst = *v
		if *v < lo || *v > hi {
			ps.add(APIKey(key), "must be between %s and %s (got %s)", human(lo), human(hi), human(*v))
		}
	}
	num := func(dst *int, v *int, key string, lo, hi int) {
		if v == nil {
			return
		}
		*dst = *v
		if *v < lo || *v > hi {
			ps.add(APIKey(key), "must be between %d and %d (got %d)", lo, hi, *v)
		}
	}
	dur(&l.MaxDuration, rr.MaxDuration, "max_duration", time.Second, maxAPIDuration)
	dur(&l.MaxRamp, rr.MaxRamp, "max_ramp", 0, maxAPIDuration)
	dur(&l.MaxStartDelay, rr.MaxStartDelay, "max_start_delay", 0, maxAPIStartDelay)
	num(&l.MaxQueueDepth, rr.MaxQueueDepth, "max_queue_depth", 1, workload.MaxQueueDepth)
	num(&l.MaxWorkers, rr.MaxWorkers, "max_workers", 1, workload.MaxWorkers)
	num(&l.Keep, rr.Keep, "keep", 1, maxAPIKeep)
	if rr.AllowWrites != nil {
		l.AllowWrites = *rr.AllowWrites
	}
	return API{Runs: l}
}
