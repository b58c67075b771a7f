package result

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"
)

// RunRef identifies one run: the host it ran on, when it started, and the
// run id the runner gave it. Merges record the runs they hold, so that a
// run counted once already is not counted again.
type RunRef struct {
	Host      string    `json:"host"`
	StartedAt time.Time `json:"started_at"`
	// RunID is the run's id; for a result written before run ids,
	// LegacyRunIDPrefix and a digest of its host, start and what it
	// measured (two runs of one host at one instant, one machine's network
	// namespaces, measured different I/Os).
	RunID string `json:"run_id"`
}

// LegacyRunIDPrefix starts the run id a merge gives a run whose result has
// none (written before run ids).
const LegacyRunIDPrefix = "legacy-"

// Runs lists the runs r holds: itself, or for a merged result the runs
// merged into it. A merged result written before merges recorded their
// runs holds itself, as far as anyone can tell.
func (r *Result) Runs() []RunRef {
	if r.Merged != nil && len(r.Merged.Of) > 0 {
		return r.Merged.Of
	}
	id := r.RunID
	if id == "" {
		s := &r.Summary
		sum := sha256.Sum256([]byte(r.Host.Hostname + "\x00" + r.StartedAt.UTC().Format(time.RFC3339Nano) + "\x00" +
			strconv.FormatUint(s.Ops, 10) + "\x00" + strconv.FormatUint(s.Bytes, 10) + "\x00" + Float(s.ElapsedSeconds) + "\x00" +
			Float(s.Latency.MeanSeconds) + "\x00" + Float(s.Latency.MaxSeconds)))
		id = LegacyRunIDPrefix + hex.EncodeToString(sum[:8])
	}
	return []RunRef{{Host: r.Host.Hostname, StartedAt: r.StartedAt, RunID: id}}
}

// DuplicateRunError is a merge given the same run twice: as the same file
// twice, or as a merged result and one of the results it was made of.
// Merging it would count its I/Os twice.
type DuplicateRunError struct {
	// First and Second are the results that both hold Run.
	First, Second *Result
	Run           RunRef
}

func (e *DuplicateRunError) Error() string {
	return fmt.Sprintf("the same run is given twice (%s): merging it would count its I/Os twice", e.Run)
}

// String names the run: its host, its start and its run id.
func (r RunRef) String() string {
	s := "host " + r.Host
	if !r.StartedAt.IsZero() {
		s += ", started " + r.StartedAt.UTC().Format(time.RFC3339Nano)
	}
	s += ", run id " + r.RunID
	return s
}

// runsOf lists the runs rs hold, each once, or the first run two of them
// share.
func runsOf(rs []*Result) ([]RunRef, error) {
	seen := map[string]*Result{}
	var out []RunRef
	for _, r := range rs {
		for _, ref := range r.Runs() {
			k := ref.RunID
			if prev, dup := seen[k]; dup {
				return nil, &DuplicateRunError{First: prev, Second: r, Run: ref}
			}
			seen[k] = r
			out = append(out, ref)
		}
	}
	return out, nil
}
