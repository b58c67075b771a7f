package runapi

import (
	"encoding/json"
	"time"

	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// RunRequest is the body of POST /api/v1/runs. Its fields are as the
// daemon reads them, strictly: each spec is checked on its own (an
// unknown field is named with its index) and start_at is RFC 3339 text,
// so that a bad value is named as given.
type RunRequest struct {
	Target string `json:"target"`
	// Specs are access specifications in workload.Spec's JSON (the
	// fields of a result's workload entry), run at once.
	Specs    []json.RawMessage `json:"specs"`
	Ramp     string            `json:"ramp"`
	Duration string            `json:"duration"`
	// StartAt is the instant the ramp-up starts (RFC 3339, UTC); "" as
	// soon as the target is prepared.
	StartAt string `json:"start_at,omitempty"`
	Label   string `json:"label,omitempty"`
	Pattern string `json:"pattern,omitempty"`
	Size    int64  `json:"size,omitempty"`
	// DryRun checks the request without running it (200 and the specs
	// as the daemon would run them).
	DryRun bool `json:"dry_run,omitempty"`
}

// SetSpecs writes specs as the request's.
func (r *RunRequest) SetSpecs(specs []workload.Spec) error {
	r.Specs = make([]json.RawMessage, len(specs))
	for i, s := range specs {
		b, err := json.Marshal(s)
		if err != nil {
			return err
		}
		r.Specs[i] = b
	}
	return nil
}

// SetStartAt sets the instant the run is to start (the zero time: none).
func (r *RunRequest) SetStartAt(t time.Time) {
	r.StartAt = ""
	if !t.IsZero() {
		r.StartAt = t.UTC().Format(time.RFC3339Nano)
	}
}

// Planned is the run's ramp-up plus its measured time.
func (r RunRequest) Planned() time.Duration {
	ramp, _ := time.ParseDuration(r.Ramp)
	d, _ := time.ParseDuration(r.Duration)
	return ramp + d
}

// Accepted is the answer to an accepted POST /api/v1/runs (202).
type Accepted struct {
	ID    string          `json:"id"`
	State result.RunState `json:"state"`
	URL   string          `json:"url"`
}

// SpecOut is a spec as a dry run answers it: workload.Spec's own JSON and
// its times.
type SpecOut struct {
	workload.Spec
	RampSeconds     float64 `json:"ramp_seconds"`
	DurationSeconds float64 `json:"duration_seconds"`
}

// Checked is the answer to a dry run (200): the specs as the daemon would
// run them.
type Checked struct {
	OK    bool      `json:"ok"`
	Specs []SpecOut `json:"specs"`
}

// Run is a run of the run API as GET (and DELETE) /api/v1/runs/ID answer
// it: its state, and its result once it has one.
type Run struct {
	ID        string          `json:"id"`
	State     result.RunState `json:"state"`
	Target    string          `json:"target"`
	Label     string          `json:"label"`
	StartAt   *time.Time      `json:"start_at,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
	Error     string          `json:"error,omitempty"`
	Host      result.Host     `json:"host"`
	Result    *result.Result  `json:"result,omitempty"`
}

// Error is the body of every answer with an error status.
type Error struct {
	Error string `json:"error"`
}

// Clock is the answer to GET /api/v1/clock.
type Clock struct {
	UnixNano int64  `json:"unix_nano"`
	Time     string `json:"time"`
}
