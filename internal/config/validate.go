package config

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Limits of the global section.
const (
	minSnapshotInterval = 100 * time.Millisecond
	maxSnapshotInterval = time.Minute
	maxRunHistory       = 1000
	maxProbes           = 64
	minEvery            = time.Second
	// DefaultContinuousDuration is how long each run of a continuous job
	// lasts before the next one starts (its last-run gauges update then).
	DefaultContinuousDuration = time.Minute
)

func validate(cfg *Config, raw *rawConfig, names map[string][]string, ps *problems, opts Options) {
	cfg.Global = validateGlobal(raw.Global, ps)
	cfg.Targets = map[string]*Target{}
	for _, name := range names["targets"] {
		if t := validateTarget(name, raw.Targets[name], ps); t != nil {
			cfg.Targets[name] = t
		}
	}
	cfg.Jobs = map[string]*Job{}
	for _, name := range names["jobs"] {
		if name == APIJobName {
			ps.add("jobs."+name, "the name %q is reserved for runs posted to the run API (POST /api/v1/runs)", name)
			continue
		}
		if j := validateJob(name, raw.Jobs[name], cfg.Targets, ps, opts); j != nil {
			cfg.Jobs[name] = j
		}
	}
	cfg.Modules = map[string]*Module{}
	for _, name := range names["modules"] {
		if m := validateModule(name, raw.Modules[name], ps); m != nil {
			cfg.Modules[name] = m
		}
	}
	cfg.API = validateAPI(raw.API, ps)
	_, cfg.API.Given = ps.lines["api"]
	cfg.Devices = validateDevices(raw.Devices, ps)
	cfg.HTTP = validateHTTP(raw.HTTP, ps)
	if !cfg.API.Given && len(names["jobs"]) == 0 && len(names["modules"]) == 0 && len(cfg.Devices) == 0 {
		ps.add("", "nothing to do: define at least one job or module (or an api section, for runs posted to the run API, or devices to watch)")
	}
}

// validateDevices checks the devices to watch: kernel block device names
// or shell globs over them (path.Match's syntax), without a '/'.
func validateDevices(raw []string, ps *problems) []string {
	var out []string
	seen := map[string]bool{}
	for i, d := range raw {
		key := fmt.Sprintf("devices[%d]", i)
		switch _, err := path.Match(d, ""); {
		case d == "":
			ps.add(key, "is empty: name a block device (sda, nvme0n1) or a glob (nvme*n1)")
		case strings.ContainsRune(d, '/') || d == "." || d == "..":
			ps.add(key, "must be a block device's kernel name or a glob, not a path (got %q)", d)
		case err != nil:
			ps.add(key, "bad glob %q: %v", d, err)
		case seen[d]:
			ps.add(key, "%q is listed twice", d)
		default:
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

func validateGlobal(r rawGlobal, ps *problems) Global {
	g := Global{
		SnapshotInterval:    DefaultSnapshotInterval,
		KeepFiles:           true,
		RunHistory:          DefaultRunHistory,
		MaxConcurrentProbes: DefaultMaxConcurrentProbes,
	}
	durIn(ps, "global.snapshot_interval", &g.SnapshotInterval, r.SnapshotInterval, minSnapshotInterval, maxSnapshotInterval)
	if r.KeepFiles != nil {
		g.KeepFiles = *r.KeepFiles
	}
	intIn(ps, "global.run_history", &g.RunHistory, r.RunHistory, 1, maxRunHistory)
	intIn(ps, "global.max_concurrent_probes", &g.MaxConcurrentProbes, r.MaxConcurrentProbes, 1, maxProbes)
	return g
}

// durIn sets *dst to *v when the file gives the key, and reports a value
// outside lo..hi.
func durIn(ps *problems, key string, dst, v *time.Duration, lo, hi time.Duration) {
	if v == nil {
		return
	}
	*dst = *v
	if *v < lo || *v > hi {
		ps.add(key, "must be between %s and %s (got %s)", human(lo), human(hi), human(*v))
	}
}

// intIn is durIn for a count.
func intIn(ps *problems, key string, dst, v *int, lo, hi int) {
	if v == nil {
		return
	}
	*dst = *v
	if *v < lo || *v > hi {
		ps.add(key, "must be between %d and %d (got %d)", lo, hi, *v)
	}
}

func validateTarget(name string, r rawTarget, ps *problems) *Target {
	path := "targets." + name
	t := &Target{Name: name}
	ok := true
	switch {
	case r.Path == nil || *r.Path == "":
		ps.add(path, "path is required")
		ok = false
	case !filepath.IsAbs(*r.Path):
		ps.add(path+".path", "must be an absolute path (got %q)", *r.Path)
		ok = false
	default:
		t.Path = filepath.Clean(*r.Path)
	}
	if r.Size != nil {
		n, err := workload.ParseSize(fmt.Sprint(r.Size))
		switch {
		case err != nil:
			ps.add(path+".size", "%v", err)
			ok = false
		case n <= 0 || n%512 != 0:
			ps.add(path+".size", "must be a positive multiple of 512 bytes (got %s)", workload.FormatSize(n))
			ok = false
		default:
			t.Size = n
		}
	}
	if r.AllowDestructive != nil {
		t.AllowDestructive = *r.AllowDestructive
	}
	if !ok {
		return nil
	}
	return t
}

// fieldProblem reports a workload.FieldError under the config key it
// stands for; a region error is about the job's target.
func fieldProblem(ps *problems, path string, err error, target *Target, durationKey string) {
	var fe *workload.FieldError
	if !errors.As(err, &fe) {
		ps.add(path, "%v", err)
		return
	}
	if fe.Spec == workload.FieldRegion && target != nil {
		ps.add(path+".target", "the size of target %q %s (got %s)", target.Name, fe.Reason, fe.Value)
		return
	}
	key := fe.Spec.ConfigKey()
	if fe.Spec == workload.FieldDuration {
		key = durationKey
	}
	if fe.Line > 0 {
		key = fmt.Sprintf("lines[%d]", fe.Line-1) // Validate numbers lines from 1
	}
	if key == "" {
		key = strings.TrimPrefix(fe.Field, "--")
	}
	if strings.HasPrefix(fe.Value, `"`) && strings.Contains(fe.Reason, fe.Value) {
		ps.add(path+"."+key, "%s", fe.Reason)
		return
	}
	ps.add(path+"."+key, "%s (got %s)", fe.Reason, fe.Value)
}

// workloadFields names the explicit workload keys a raw workload sets.
func workloadFields(r rawWorkload) []string {
	var out []string
	add := func(set bool, key string) {
		if set {
			out = append(out, key)
		}
	}
	add(r.BlockSize != nil, "block_size")
	add(r.Lines != nil, "lines")
	add(r.ReadPct != nil, "read_pct")
	add(r.RandomPct != nil, "random_pct")
	add(r.QueueDepth != nil, "queue_depth")
	add(r.Workers != nil, "workers")
	add(r.RateIOPS != nil, "rate_iops")
	add(r.BlockAlign != nil, "block_align")
	add(r.Fsync != nil, "fsync")
	add(r.Fdatasync != nil, "fdatasync")
	add(r.Sync != nil, "sync")
	return out
}

// buildSpec makes the access specification of a job or module: the
// profile's, then every field given explicitly (as on the command line).
// It returns false when something was reported.
func buildSpec(path string, r rawWorkload, ps *problems) (workload.Spec, bool) {
	s := workload.Spec{ReadPct: 100, RandomPct: 100}
	if r.Profile != nil {
		p, err := workload.LookupPreset(*r.Profile)
		if err != nil {
			ps.add(path+".profile", "unknown profile %q (known: %s)", *r.Profile, strings.Join(presetNames(), ", "))
			return s, false
		}
		s = p.Spec
	}
	s = s.WithDefaults()
	ok := buildLines(path, r, &s, ps)
	if r.BlockSize != nil {
		bs, err := workload.ParseBlockSizes(fmt.Sprint(r.BlockSize))
		if err != nil {
			fieldProblem(ps, path, err, nil, "duration")
			ok = false
		}
		s.BlockSizes = bs
	}
	setInt := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	setInt(&s.ReadPct, r.ReadPct)
	setInt(&s.RandomPct, r.RandomPct)
	setInt(&s.QueueDepth, r.QueueDepth)
	setInt(&s.Workers, r.Workers)
	setInt(&s.RateIOPS, r.RateIOPS)
	setInt(&s.Fsync, r.Fsync)
	setInt(&s.Fdatasync, r.Fdatasync)
	if r.Sync != nil {
		s.Sync = workload.NormalizeSync(*r.Sync)
	}
	if r.BlockAlign != nil {
		n, err := workload.ParseSize(fmt.Sprint(r.BlockAlign))
		if err != nil {
			ps.add(path+".block_align", "%v", err)
			ok = false
		}
		s.Align = n
	}
	if r.Engine != nil {
		s.Engine = *r.Engine
	}
	if r.Verify != nil {
		s.Verify = *r.Verify
	}
	if r.MaxErrors != nil && *r.MaxErrors < 0 {
		ps.add(path+".max_errors", "must not be negative (got %d)", *r.MaxErrors)
		ok = false
	}
	return s, ok
}

// buildLines sets the lines of a spec from `lines` (each entry in
// --line's syntax), which replace a profile's pattern and cannot be
// combined with block_size, read_pct, random_pct or block_align. A
// profile written as lines is replaced by block_size; read_pct alone is
// refused (which line would it mean?). It returns false when something
// was reported.
func buildLines(path string, r rawWorkload, s *workload.Spec, ps *problems) bool {
	oneLine := map[string]bool{"block_size": r.BlockSize != nil, "read_pct": r.ReadPct != nil, "random_pct": r.RandomPct != nil, "block_align": r.BlockAlign != nil}
	if r.Lines == nil {
		if len(s.Lines) == 0 {
			return true
		}
		if r.BlockSize != nil { // the one-line form replaces the profile's lines
			s.Lines, s.ReadPct, s.RandomPct = nil, 100, 100
			return true
		}
		for _, k := range []string{"read_pct", "random_pct", "block_align"} {
			if oneLine[k] {
				ps.add(path+"."+k, "profile %q is written as lines, each with its own: give lines (or block_size with %s)", s.Name, k)
				return false
			}
		}
		return true
	}
	for _, k := range []string{"block_size", "read_pct", "random_pct", "block_align"} {
		if oneLine[k] {
			ps.add(path+".lines", "cannot be combined with %s: each line gives its own size, read=, random= and align=", k)
			return false
		}
	}
	if len(r.Lines) == 0 {
		ps.add(path+".lines", "is empty: give at least one line like 4k,share=100,read=67,random=100")
		return false
	}
	s.Lines = s.Lines[:0]
	for i, v := range r.Lines {
		l, err := workload.ParseLine(v)
		if err != nil {
			var fe *workload.FieldError
			if errors.As(err, &fe) {
				err = errors.New(fe.Reason)
			}
			ps.add(fmt.Sprintf("%s.lines[%d]", path, i), "%v (got %q)", err, v)
			return false
		}
		s.Lines = append(s.Lines, l)
	}
	s.BlockSizes, s.ReadPct, s.RandomPct, s.Align = nil, 0, 0, 0
	return true
}

func maxErrors(r rawWorkload) uint64 {
	if r.MaxErrors == nil || *r.MaxErrors < 0 {
		return 0
	}
	return uint64(*r.MaxErrors)
}

func presetNames() []string {
	var names []string
	for _, p := range workload.Presets() {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return names
}

func validateJob(name string, r rawJob, targets map[string]*Target, ps *problems, opts Options) *Job {
	path := "jobs." + name
	j := &Job{Name: name, MaxErrors: maxErrors(r.rawWorkload), Mode: OnDemand}
	ok := true
	switch {
	case r.Target == nil:
		ps.add(path, "target is required (the name of one of targets)")
		ok = false
	case targets[*r.Target] == nil:
		ps.add(path+".target", "unknown target %q (known: %s)", *r.Target, strings.Join(targetNames(targets), ", "))
		ok = false
	default:
		j.Target = targets[*r.Target]
	}

	// When.
	continuous := r.Continuous != nil && *r.Continuous
	switch {
	case continuous && r.Every != nil:
		ps.add(path+".every", "cannot be combined with continuous")
		ok = false
	case continuous:
		j.Mode = Continuous
	case r.Every != nil:
		j.Mode = Scheduled
		j.Schedule.Every = *r.Every
		if j.Schedule.Every < minEvery {
			ps.add(path+".every", "must be at least %s (got %s)", human(minEvery), human(j.Schedule.Every))
			ok = false
		}
	}
	if r.Align != nil && j.Mode != Scheduled {
		ps.add(path+".align", "needs every")
		ok = false
	} else if r.Align != nil {
		j.Schedule.Align = *r.Align
	}
	if r.Jitter != nil {
		j.Schedule.Jitter = *r.Jitter
		switch {
		case j.Mode != Scheduled:
			ps.add(path+".jitter", "needs every")
			ok = false
		case j.Schedule.Jitter < 0:
			ps.add(path+".jitter", "must not be negative (got %s)", human(j.Schedule.Jitter))
			ok = false
		case j.Schedule.Jitter >= j.Schedule.Every:
			ps.add(path+".jitter", "must be shorter than every (%s)", human(j.Schedule.Every))
			ok = false
		}
	}

	// How long.
	duration, ramp := workload.DefaultDuration, workload.DefaultRamp
	if j.Mode == Continuous {
		duration, ramp = DefaultContinuousDuration, 0
	}
	if r.Duration != nil {
		duration = *r.Duration
	}
	if r.Ramp != nil {
		ramp = *r.Ramp
	}
	budget, bok := numberIOs(path, r.NumberIOs, ps)
	ok = ok && bok

	// What.
	var size int64
	if j.Target != nil {
		size = j.Target.Size
	}
	if r.Suite != nil {
		j.Suite = *r.Suite
		if !suiteOnly(path, r, continuous, ps) {
			return nil
		}
		points, err := opts.Suites(*r.Suite)
		if err != nil {
			ps.add(path+".suite", "%v", err)
			return nil
		}
		for _, p := range points {
			pt := Point{Name: p.Name, Pattern: p.Pattern, Size: p.Size}
			for _, s := range p.Specs {
				s = s.WithDefaults()
				s.Duration, s.Ramp, s.RegionBytes = duration, ramp, size
				budget(&s)
				if r.Engine != nil {
					s.Engine = *r.Engine
				}
				if r.Verify != nil {
					s.Verify = *r.Verify
				}
				if err := s.Validate(); err != nil {
					var fe *workload.FieldError
					if errors.As(err, &fe) && (fe.Spec == workload.FieldDuration || fe.Spec == workload.FieldRamp || fe.Spec == workload.FieldEngine || fe.Spec == workload.FieldRegion) {
						fieldProblem(ps, path, err, j.Target, "duration")
					} else {
						ps.add(path+".suite", "point %q: %v", p.Name, err)
					}
					return nil
				}
				pt.Specs = append(pt.Specs, s)
			}
			j.Points = append(j.Points, pt)
		}
	} else {
		s, sok := buildSpec(path, r.rawWorkload, ps)
		if !sok {
			return nil
		}
		if r.Profile != nil {
			j.Profile = s.Name
		}
		s.Duration, s.Ramp, s.RegionBytes = duration, ramp, s.RegionWithin(size)
		budget(&s)
		if err := s.Validate(); err != nil {
			fieldProblem(ps, path, err, j.Target, "duration")
			return nil
		}
		if s.Name == "" {
			s.Name = s.Describe()
		}
		if j.Mode == Continuous && s.RateIOPS == 0 {
			ps.add(path+".continuous", "a continuous job needs rate_iops (or profile: canary): it runs all the time and must not saturate the device")
			ok = false
		}
		j.Points = []Point{{Name: s.Name, Specs: []workload.Spec{s}}}
	}
	if j.Mode == Scheduled && ok {
		run := time.Duration(len(j.Points)) * (ramp + duration)
		if run >= j.Schedule.Every {
			how := fmt.Sprintf("ramp %s + duration %s", human(ramp), human(duration))
			if len(j.Points) > 1 {
				how = fmt.Sprintf("%d points × (%s)", len(j.Points), how)
			}
			ps.add(path+".every", "%s is not longer than a run of the job (%s = %s)", human(j.Schedule.Every), human(run), how)
			ok = false
		}
	}
	if !ok {
		return nil
	}
	return j
}

// suiteOnly reports the keys that cannot be combined with suite.
func suiteOnly(path string, r rawJob, continuous bool, ps *problems) bool {
	ok := true
	if r.Profile != nil {
		ps.add(path+".profile", "cannot be combined with suite")
		ok = false
	}
	for _, k := range workloadFields(r.rawWorkload) {
		ps.add(path+"."+k, "cannot be combined with suite (a suite defines its own workloads)")
		ok = false
	}
	if continuous {
		ps.add(path+".continuous", "cannot be combined with suite")
		ok = false
	}
	return ok
}

// numberIOs reads number_ios (run's --number-ios) and returns what sets
// it on a spec: a run (each point of a suite, a probe) ends after that
// many I/Os of each worker, its duration only the cap.
func numberIOs(path string, n *int, ps *problems) (budget func(*workload.Spec), ok bool) {
	switch {
	case n == nil:
		return func(*workload.Spec) {}, true
	case *n < 1:
		ps.add(path+".number_ios", "must be at least 1 (got %d)", *n)
		return func(*workload.Spec) {}, false
	}
	return func(s *workload.Spec) { s.StopAfterIOs(int64(*n)) }, true
}

func validateModule(name string, r rawModule, ps *problems) *Module {
	path := "modules." + name
	m := &Module{Name: name, MaxDuration: DefaultProbeDuration, MaxErrors: maxErrors(r.rawWorkload)}
	s, ok := buildSpec(path, r.rawWorkload, ps)
	if !ok {
		return nil
	}
	if r.Profile != nil {
		m.Profile = s.Name
	}
	if r.MaxDuration != nil {
		m.MaxDuration = *r.MaxDuration
		if m.MaxDuration < MinProbeDuration || m.MaxDuration > MaxProbeDuration {
			ps.add(path+".max_duration", "must be between %s and %s (got %s): /probe is for short probes, use a job for longer runs", human(MinProbeDuration), human(MaxProbeDuration), human(m.MaxDuration))
			return nil
		}
	}
	s.Duration = m.MaxDuration
	if r.Ramp != nil {
		s.Ramp = *r.Ramp
	}
	budget, bok := numberIOs(path, r.NumberIOs, ps)
	if !bok {
		return nil
	}
	budget(&s)
	if err := s.Validate(); err != nil {
		fieldProblem(ps, path, err, nil, "max_duration")
		return nil
	}
	if s.Name == "" {
		s.Name = s.Describe()
	}
	m.Spec = s
	return m
}

func targetNames(targets map[string]*Target) []string {
	names := make([]string, 0, len(targets))
	for n := range targets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
