package check

import (
	"context"
	"time"
)

// Schema names the JSON document of `ioprobe check NAME --output json`.
const Schema = "ioprobe.check/v2"

// Check is one question and how to answer it.
type Check struct {
	Name string // the subcommand: ioprobe check NAME
	// Short says what it answers; Source where its workload and
	// thresholds come from; Long what it does, for --help.
	Short, Source, Long string
	// DefaultDuration is long enough for every stream to reach its
	// minimum of samples on storage that passes (see each check).
	DefaultDuration time.Duration
	// Run measures and judges. Bad input and refusals come back as
	// errors before anything is created; an interrupted or failed
	// measurement as a report without a verdict.
	Run func(ctx context.Context, o Options) (*Report, error)
}

// Options are what a check's command line sets.
type Options struct {
	Target   string        // a directory on the storage to judge
	Duration time.Duration // measured time of each repeat
	Repeat   int           // measurements, one after another (1: one)
	// Rate caps the main stream's operations a second (the etcd WAL's
	// appends); 0 is a closed loop, each one issued when the last ended.
	Rate float64
	// Backend adds the etcd backend's commit stream beside the WAL.
	Backend bool
	// Progress, when set, is called about once a second while measuring.
	Progress func(Progress)
}

// Progress is where a measurement is.
type Progress struct {
	Repeat, Repeats   int
	Elapsed, Duration time.Duration
	Samples           []uint64 // per stream, in the report's order
}

// All lists the checks, by name.
func All() []Check { return []Check{Etcd()} }

// Lookup finds a check by name.
func Lookup(name string) (Check, bool) {
	for _, c := range All() {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}
