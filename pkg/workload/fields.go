package workload

// SpecField is a field of an access specification. The command line, the
// daemon's config and its run API name it each in their own words
// ("--qd", "queue_depth", "queue_depth"; "--align", "block_align",
// "align_bytes"); Validate and the parsers name it by SpecField in a
// FieldError, and each says it in its own.
type SpecField string

// Fields of an access specification.
const (
	FieldBlockSizes SpecField = "block_sizes"
	FieldReadPct    SpecField = "read_pct"
	FieldRandomPct  SpecField = "random_pct"
	FieldAlign      SpecField = "align"
	FieldQueueDepth SpecField = "queue_depth"
	FieldWorkers    SpecField = "workers"
	FieldDuration   SpecField = "duration"
	FieldRamp       SpecField = "ramp"
	FieldRateIOPS   SpecField = "rate_iops"
	FieldEngine     SpecField = "engine"
	FieldFsync      SpecField = "fsync"
	FieldFdatasync  SpecField = "fdatasync"
	FieldSync       SpecField = "sync"
	FieldRegion     SpecField = "region"
	FieldLines      SpecField = "lines"
	FieldLoops      SpecField = "loops"
	FieldStreams    SpecField = "sequential_streams"
)

// spelling is a field's name in each language.
type spelling struct{ flag, config, api string }

var spellings = map[SpecField]spelling{
	FieldBlockSizes: {"--bs", "block_size", "block_sizes"},
	FieldReadPct:    {"--read-pct", "read_pct", "read_pct"},
	FieldRandomPct:  {"--random-pct", "random_pct", "random_pct"},
	FieldAlign:      {"--align", "block_align", "align_bytes"},
	FieldQueueDepth: {"--qd", "queue_depth", "queue_depth"},
	FieldWorkers:    {"--workers", "workers", "workers"},
	FieldDuration:   {"--duration", "duration", "duration_seconds"},
	FieldRamp:       {"--ramp", "ramp", "ramp_seconds"},
	FieldRateIOPS:   {"--rate-iops", "rate_iops", "rate_iops"},
	FieldEngine:     {"--engine", "engine", "engine"},
	FieldFsync:      {"--fsync", "fsync", "fsync"},
	FieldFdatasync:  {"--fdatasync", "fdatasync", "fdatasync"},
	FieldSync:       {"--sync", "sync", "sync"},
	// The config sets a job's region with its target's size.
	FieldRegion:  {"--size", "size", "region_bytes"},
	FieldLines:   {"--line", "lines", "lines"},
	FieldLoops:   {"--loops", "loops", "loops"},
	FieldStreams: {"sequential_streams", "sequential_streams", "sequential_streams"},
}

// SpecFields lists every field.
func SpecFields() []SpecField {
	return []SpecField{FieldBlockSizes, FieldReadPct, FieldRandomPct, FieldAlign, FieldQueueDepth, FieldWorkers, FieldDuration,
		FieldRamp, FieldRateIOPS, FieldEngine, FieldFsync, FieldFdatasync, FieldSync, FieldRegion, FieldLines, FieldLoops, FieldStreams}
}

// Flag is the field's command-line flag ("--qd").
func (f SpecField) Flag() string { return spellings[f].flag }

// ConfigKey is the field's key in a job of the daemon's config
// ("queue_depth").
func (f SpecField) ConfigKey() string { return spellings[f].config }

// APIKey is the field's key in a spec of the run API (and a result's
// workload entry): "queue_depth", "align_bytes".
func (f SpecField) APIKey() string { return spellings[f].api }

// specErr is a FieldError of spec field f.
func specErr(f SpecField, value any, format string, args ...any) error {
	e := fieldErr(f.Flag(), value, format, args...).(*FieldError)
	e.Spec = f
	return e
}
