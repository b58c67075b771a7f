package config

import (
	"time"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// The raw types mirror the file: what viper decodes into, before defaults
// and validation. Pointers tell "not given" from a zero the user wrote
// (queue_depth: 0 is an error, not "the default"). Sizes are `any` because
// YAML gives 4096 as an int and 4k as a string; both are accepted.

type rawConfig struct {
	Global  rawGlobal            `mapstructure:"global"`
	Targets map[string]rawTarget `mapstructure:"targets"`
	Jobs    map[string]rawJob    `mapstructure:"jobs"`
	Modules map[string]rawModule `mapstructure:"modules"`
	API     rawAPI               `mapstructure:"api"`
	Devices []string             `mapstructure:"devices"`
	HTTP    rawHTTP              `mapstructure:"http"`
}

type rawHTTP struct {
	AllowedHosts []string `mapstructure:"allowed_hosts"`
}

type rawAPI struct {
	Runs rawAPIRuns `mapstructure:"runs"`
}

type rawAPIRuns struct {
	MaxDuration   *time.Duration `mapstructure:"max_duration"`
	MaxRamp       *time.Duration `mapstructure:"max_ramp"`
	MaxQueueDepth *int           `mapstructure:"max_queue_depth"`
	MaxWorkers    *int           `mapstructure:"max_workers"`
	MaxStartDelay *time.Duration `mapstructure:"max_start_delay"`
	AllowWrites   *bool          `mapstructure:"allow_writes"`
	Keep          *int           `mapstructure:"keep"`
}

type rawGlobal struct {
	SnapshotInterval    *time.Duration `mapstructure:"snapshot_interval"`
	KeepFiles           *bool          `mapstructure:"keep_files"`
	RunHistory          *int           `mapstructure:"run_history"`
	MaxConcurrentProbes *int           `mapstructure:"max_concurrent_probes"`
}

type rawTarget struct {
	Path             *string `mapstructure:"path"`
	Size             any     `mapstructure:"size" kind:"size"`
	AllowDestructive *bool   `mapstructure:"allow_destructive"`
}

// rawWorkload is an access specification: a profile and/or explicit
// fields that override it, as on the command line.
type rawWorkload struct {
	Profile    *string              `mapstructure:"profile"`
	BlockSize  any                  `mapstructure:"block_size" kind:"size"`
	Lines      []string             `mapstructure:"lines"` // --line's syntax, one per entry
	ReadPct    *int                 `mapstructure:"read_pct"`
	RandomPct  *int                 `mapstructure:"random_pct"`
	QueueDepth *int                 `mapstructure:"queue_depth"`
	Workers    *int                 `mapstructure:"workers"`
	RateIOPS   *int                 `mapstructure:"rate_iops"`
	BlockAlign any                  `mapstructure:"block_align" kind:"size"`
	Engine     *workload.EngineName `mapstructure:"engine"`
	Verify     *bool                `mapstructure:"verify"`
	Fsync      *int                 `mapstructure:"fsync"`
	Fdatasync  *int                 `mapstructure:"fdatasync"`
	Sync       *string              `mapstructure:"sync"`
	Ramp       *time.Duration       `mapstructure:"ramp"`
	MaxErrors  *int                 `mapstructure:"max_errors"`
}

type rawJob struct {
	Target      *string `mapstructure:"target"`
	rawWorkload `mapstructure:",squash"`
	Suite       *string        `mapstructure:"suite"`
	Duration    *time.Duration `mapstructure:"duration"`
	NumberIOs   *int           `mapstructure:"number_ios"` // run's --number-ios: each worker stops after N I/Os; duration is then a cap
	Every       *time.Duration `mapstructure:"every"`
	Align       *bool          `mapstructure:"align"`
	Jitter      *time.Duration `mapstructure:"jitter"`
	Continuous  *bool          `mapstructure:"continuous"`
}

type rawModule struct {
	rawWorkload `mapstructure:",squash"`
	MaxDuration *time.Duration `mapstructure:"max_duration"`
	NumberIOs   *int           `mapstructure:"number_ios"` // as a job's: max_duration is then a cap
}
