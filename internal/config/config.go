package config

import (
	"bytes"
	"fmt"
	"reflect"
	"time"

	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"

	"github.com/ioprobe/ioprobe/internal/safefile"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Config is a loaded, defaulted and validated daemon configuration. It is
// never modified after Load returns it.
type Config struct {
	File    string
	Global  Global
	Targets map[string]*Target
	Jobs    map[string]*Job
	Modules map[string]*Module
	// API bounds what clients of the daemon's run API may ask for.
	API API
	// Devices are the block devices whose every request the daemon times
	// in the kernel (ioprobe_device_latency_seconds): kernel names or
	// shell globs ("nvme*n1"), matched against /sys/class/block when the
	// daemon starts and at every reload. None: off.
	Devices []string
	// HTTP says which Host names the daemon answers besides its own.
	HTTP HTTP

	lines map[string]int // dotted key path → its line in File, for CheckRuns
}

// Global holds the settings that apply to the whole daemon.
type Global struct {
	// SnapshotInterval is how often running jobs publish their counters
	// to the live metrics.
	SnapshotInterval time.Duration
	// KeepFiles keeps the target files the daemon created when it stops,
	// so the next start reuses them without refilling; false removes them.
	KeepFiles bool
	// RunHistory is how many finished runs of each job /api/v1/runs keeps.
	RunHistory int
	// MaxConcurrentProbes bounds /probe; more at once are answered 503.
	MaxConcurrentProbes int
}

// Defaults of the global section.
const (
	DefaultSnapshotInterval    = time.Second
	DefaultRunHistory          = 20
	DefaultMaxConcurrentProbes = 1
)

// Target is something the daemon may measure. Nothing else is ever touched:
// jobs and probes name targets, never paths.
type Target struct {
	Name string
	Path string
	// Size is the access region (and the size of a file ioprobe creates);
	// 0: the whole target, or workload.DefaultRegion for a new file.
	Size             int64
	AllowDestructive bool
}

// Mode says when a job runs.
type Mode string

// Job modes.
const (
	OnDemand   Mode = "on-demand"  // only when triggered through the API
	Scheduled  Mode = "scheduled"  // every Schedule.Every
	Continuous Mode = "continuous" // all the time (a low-rate canary), pausing for heavier runs
)

// Schedule is when a scheduled job starts.
type Schedule struct {
	Every time.Duration
	// Align starts runs on multiples of Every since the Unix epoch, so
	// that every host with the same schedule starts at the same moment.
	Align bool
	// Jitter delays each start by a random time in [0, Jitter).
	Jitter time.Duration
}

// Point is one run of a job: one or more access specifications run at once
// on their own workers (a suite's mixed run has several).
type Point struct {
	Name string
	// Pattern is the reports' column for a suite point ("Random Read",
	// "File Server"); "" for a job that is not a suite.
	Pattern string
	// Size is the reports' row: the data size in bytes (0 when none).
	Size  int64
	Specs []workload.Spec // defaults applied, validated, RegionBytes = the target's Size (or the profile's, if smaller)
}

// Label is what the point's runs are called in metrics: the reports'
// pattern for a suite point (so that dashboards pivot sizes against
// patterns as the reports' tables do), else the point's name.
func (p Point) Label() string {
	if p.Pattern != "" {
		return p.Pattern
	}
	return p.Name
}

// Job is a named, configured run (or series of runs, for a suite) on one
// target.
type Job struct {
	Name   string
	Target *Target
	// Profile, Suite: what the job was defined from (both "" for inline fields).
	Profile string
	Suite   string
	// Points run one after another; a job that is not a suite has one.
	Points    []Point
	MaxErrors uint64 // stop a run after this many failed I/Os (0: never)
	Mode      Mode
	Schedule  Schedule // Mode == Scheduled
}

// Module is a short workload that /probe may run on any configured target.
type Module struct {
	Name    string
	Profile string
	Spec    workload.Spec // Duration is MaxDuration; RegionBytes is set per target
	// MaxDuration is the longest a probe measures; a shorter scrape
	// timeout cuts it.
	MaxDuration time.Duration
	MaxErrors   uint64
}

// Module defaults and limits.
const (
	DefaultProbeDuration = 5 * time.Second
	MaxProbeDuration     = 5 * time.Minute
	MinProbeDuration     = 100 * time.Millisecond
)

// SuiteFunc resolves a suite name to its points (each with its specs,
// before job-level durations are applied).
type SuiteFunc func(name string) ([]Point, error)

// Options adjust Load.
type Options struct {
	// Suites resolves `suite:` names; nil uses the suites pkg/workload defines.
	Suites SuiteFunc
}

// Load reads, checks and validates the config file at path: a regular
// file of at most safefile.Config.Max bytes that only this user and root
// can change (safefile.CheckConfig).
func Load(path string, opts Options) (*Config, error) {
	data, err := safefile.Config.Read(path)
	if err != nil {
		return nil, err
	}
	if err := safefile.CheckConfig(safefile.Config.What, path); err != nil {
		return nil, err
	}
	return Parse(path, data, opts)
}

// Parse checks and validates a config file's contents; file names it in
// errors.
func Parse(file string, data []byte, opts Options) (*Config, error) {
	if opts.Suites == nil {
		opts.Suites = builtinSuites
	}
	ps := &problems{file: file, lines: map[string]int{}}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(file, err)
	}
	w := newWalker(ps)
	if len(doc.Content) > 0 {
		w.structure("", doc.Content[0], reflect.TypeOf(rawConfig{}))
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	raw, err := decode(data)
	if err != nil {
		return nil, &Error{Problems: []Problem{{File: file, Msg: err.Error()}}}
	}
	cfg := &Config{File: file, lines: ps.lines}
	validate(cfg, raw, w.names, ps, opts)
	if err := ps.err(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// decode reads the file with a viper instance of its own. The key
// delimiter is one no name may contain, so that viper never splits a key.
func decode(data []byte) (*rawConfig, error) {
	v := viper.NewWithOptions(viper.KeyDelimiter("::"))
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("reading YAML: %w", err)
	}
	var raw rawConfig
	if err := v.UnmarshalExact(&raw); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	return &raw, nil
}
