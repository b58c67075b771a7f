package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Every file in testdata/bad is rejected with exactly this text (all of
// its problems, one per line, in file order).
var badConfigs = map[string]string{
	"align-without-every": `:7: jobs.oltp.align: needs every`,
	"api-limits": `:3: api.runs.max_duration: must be between 1s and 24h (got 0s)
testdata/bad/api-limits.yaml:4: api.runs.max_queue_depth: must be between 1 and 1024 (got 2000)
testdata/bad/api-limits.yaml:5: api.runs.keep: must be between 1 and 1000 (got 0)
testdata/bad/api-limits.yaml:6: api.runs.max_start_delay: must be between 0s and 24h (got 48h)`,
	"allowed-hosts": `:3: http.allowed_hosts[0]: is empty: give a host name (ioprobe.example.com), *.SUFFIX, an IP address, a network (10.0.0.0/8) or *
testdata/bad/allowed-hosts.yaml:4: http.allowed_hosts[1]: "ioprobe.example.com:9816": the Host rule compares names, not ports: give the name without :PORT
testdata/bad/allowed-hosts.yaml:5: http.allowed_hosts[2]: "[2001:db8::1]": give the name alone, as the Host header carries it without a port (ioprobe.example.com, 2001:db8::1)
testdata/bad/allowed-hosts.yaml:6: http.allowed_hosts[3]: "http://ioprobe.example.com": give the name alone, as the Host header carries it without a port (ioprobe.example.com, 2001:db8::1)
testdata/bad/allowed-hosts.yaml:7: http.allowed_hosts[4]: "bad name.example.com": not a DNS name (labels of letters, digits, '-' and '_', 1 to 63 characters each, 253 in all; '*' only as a whole first label, *.example.com)
testdata/bad/allowed-hosts.yaml:8: http.allowed_hosts[5]: "*.com": would match every name under a top-level domain: give a domain of your own after *. (or * for any Host)
testdata/bad/allowed-hosts.yaml:9: http.allowed_hosts[6]: "foo.*.example.com": not a DNS name (labels of letters, digits, '-' and '_', 1 to 63 characters each, 253 in all; '*' only as a whole first label, *.example.com)
testdata/bad/allowed-hosts.yaml:10: http.allowed_hosts[7]: "fe80::1%eth0": an address with a zone (%eth0) names a link, not a host: give it without
testdata/bad/allowed-hosts.yaml:12: http.allowed_hosts[9]: "ioprobe.example.com" is listed twice
testdata/bad/allowed-hosts.yaml:13: http.allowed_hosts[10]: "10.0.0.0/33": not a network (want an address and a prefix length, 10.0.0.0/8, 2001:db8::/32)
testdata/bad/allowed-hosts.yaml:14: http.allowed_hosts[11]: "0.0.0.0/0": every address: give * for any Host`,
	"api-unknown-key":         `:3: api.runs: unknown key "max_durations" (did you mean "max_duration"?)`,
	"api-job-name":            `:4: jobs.api: the name "api" is reserved for runs posted to the run API (POST /api/v1/runs)`,
	"bad-block-size":          `:6: jobs.mix.block_size: size "4x": unknown unit "x" (want k, KiB, M, MiB, G, GiB, T, TiB, or kB, MB, GB, TB)`,
	"bad-engine":              `:6: jobs.mix.engine: must be one of auto, sync, uring (got aio)`,
	"bad-size-unit":           `:4: targets.data.size: size "1XB": unknown unit "XB" (want k, KiB, M, MiB, G, GiB, T, TiB, or kB, MB, GB, TB)`,
	"bad-target-size":         `:4: targets.data.size: must be a positive multiple of 512 bytes (got 1000B)`,
	"continuous-and-every":    `:8: jobs.canary.every: cannot be combined with continuous`,
	"continuous-without-rate": `:7: jobs.canary.continuous: a continuous job needs rate_iops (or profile: canary): it runs all the time and must not saturate the device`,
	"duplicate-key":           `:5: jobs: a key is given twice (first on line 4)`,
	"duration-without-unit":   `:7: jobs.oltp.every: want a duration like 30s or 1h, got 3600`,
	"every-too-short":         `:7: jobs.oltp.every: 1m is not longer than a run of the job (1m10s = ramp 10s + duration 1m)`,
	"jitter-not-shorter":      `:8: jobs.oltp.jitter: must be shorter than every (5m)`,
	"merge-itself":            `:4: jobs: the merge key (<<) merges a mapping that contains it`,
	"missing-path":            `:2: targets.data: path is required`,
	"missing-target":          `:4: jobs.oltp: target is required (the name of one of targets)`,
	"module-suite":            `:5: modules.all: unknown key "suite" (known: block_align, block_size, engine, fdatasync, fsync, lines, max_duration, max_errors, number_ios, profile, queue_depth, ramp, random_pct, rate_iops, read_pct, sync, verify, workers)`,
	"no-value":                `:7: jobs.oltp.every: has no value`,
	"not-a-bool":              `:7: jobs.canary.continuous: want true or false, got "yes"`,
	"not-a-number":            `:7: jobs.oltp.queue_depth: want a whole number, got "sixteen"`,
	"nothing-to-do":           `: nothing to do: define at least one job or module (or an api section, for runs posted to the run API, or devices to watch)`,
	"devices": `:2: devices[0]: is empty: name a block device (sda, nvme0n1) or a glob (nvme*n1)
testdata/bad/devices.yaml:3: devices[1]: must be a block device's kernel name or a glob, not a path (got "/dev/sda")
testdata/bad/devices.yaml:4: devices[2]: bad glob "nvme[0-": syntax error in pattern
testdata/bad/devices.yaml:6: devices[4]: "vda" is listed twice`,
	"probe-too-long":        `:6: modules.long.max_duration: must be between 100ms and 5m (got 10m): /probe is for short probes, use a job for longer runs`,
	"queue-depth-range":     `:7: jobs.oltp.queue_depth: must be between 1 and 1024 (got 2000)`,
	"read-pct-range":        `:6: jobs.mix.read_pct: must be between 0 and 100 (got 120)`,
	"region-too-small":      `:5: jobs.seq.target: the size of target "tiny" must hold at least one transfer of 64KiB (got 4KiB)`,
	"relative-path":         `:3: targets.data.path: must be an absolute path (got "probe.dat")`,
	"section-not-a-mapping": `:3: jobs: want a mapping of names to definitions, got a list`,
	"sync-mode":             `:7: jobs.wal.sync: must be one of none, dsync, sync (got "fsync")`,
	"several-problems": `:6: jobs.a.queue_depth: must be between 1 and 1024 (got 0)
testdata/bad/several-problems.yaml:8: jobs.b.target: unknown target "nowhere" (known: data)`,
	"snapshot-interval":      `:2: global.snapshot_interval: must be between 100ms and 1m (got 10ms)`,
	"suite":                  `:6: jobs.nightly.suite: unknown suite "tpc-c" (known: characterize, protocols, peak-iops, business, scaling)`,
	"suite-custom":           `:6: jobs.nightly.suite: the "custom" suite takes run's flags on the command line; give the job workload fields and a profile instead`,
	"suite-with-workload":    `:7: jobs.nightly.queue_depth: cannot be combined with suite (a suite defines its own workloads)`,
	"unknown-key":            `:7: jobs.oltp: unknown key "evry" (did you mean "every"?)`,
	"unknown-key-no-match":   `:4: targets.data: unknown key (its text is not shown: it is no known key) (known: allow_destructive, path, size)`,
	"unknown-profile":        `:6: jobs.oltp.profile: unknown profile "oltpp" (known: all-in-one, canary, canary-write, cpu-cost, exchange-db, file-server, log, oltp, random-read, random-write, sequential-read, sequential-write, video-on-demand)`,
	"unknown-section":        `:3: unknown key "job" (did you mean "jobs"?)`,
	"unknown-target":         `:6: jobs.oltp.target: unknown target "dta" (known: data, logs)`,
	"uppercase-name":         `:2: targets.Data: bad name: use lowercase letters, digits, '-' and '_', starting with a letter or digit`,
	"yaml-syntax":            `: yaml: line 1: did not find expected ',' or '}'`,
	"lines-bad-line":         `:8: jobs.mixed.lines[1]: unknown key "reply" (keys: share, read, random, align, delay, burst) (got "8k,share=50,reply=512")`,
	"lines-profile-read-pct": `:7: jobs.iometer.read_pct: profile "all-in-one" is written as lines, each with its own: give lines (or block_size with read_pct)`,
	"lines-shares":           `:8: jobs.mixed.lines[1]: must be between 0 and 100 (got read=101)`,
	"lines-sum":              `:6: jobs.mixed.lines: the shares sum to 80, must sum to 100 (% of the specification, as in Iometer) (got share=50+30)`,
	"lines-with-block-size":  `:7: jobs.mixed.lines: cannot be combined with block_size: each line gives its own size, read=, random= and align=`,
}

func TestBadConfigs(t *testing.T) {
	eachFile(t, "testdata/bad", badConfigs, func(t *testing.T, f, name, want string) {
		cfg, err := Load(f, Options{})
		require.Nil(t, cfg)
		require.EqualError(t, err, f+want)
	})
}

func TestGoodConfigs(t *testing.T) {
	files, err := filepath.Glob("testdata/good/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			cfg, err := Load(f, Options{})
			require.NoError(t, err)
			require.Equal(t, f, cfg.File)
			for name, j := range cfg.Jobs {
				require.Equal(t, name, j.Name)
				require.NotNil(t, j.Target)
				require.NotEmpty(t, j.Points)
				for _, p := range j.Points {
					for _, s := range p.Specs {
						require.NoError(t, s.Validate())
					}
				}
			}
			for _, m := range cfg.Modules {
				require.NoError(t, m.Spec.Validate())
			}
		})
	}
}

// Defaults, profiles with overrides, inline workloads, merge keys and the
// schedule all resolve as documented.
func TestFullConfigResolves(t *testing.T) {
	cfg, err := Load("testdata/good/full.yaml", Options{})
	require.NoError(t, err)
	require.Equal(t, Global{SnapshotInterval: 2 * time.Second, KeepFiles: false, RunHistory: 5, MaxConcurrentProbes: 2}, cfg.Global)

	require.Equal(t, &Target{Name: "data", Path: "/var/lib/ioprobe/probe.dat", Size: workload.GiB}, cfg.Targets["data"])
	require.True(t, cfg.Targets["nvme"].AllowDestructive)
	require.Zero(t, cfg.Targets["nvme"].Size)

	canary := cfg.Jobs["canary"]
	require.Equal(t, Continuous, canary.Mode)
	require.Equal(t, "canary", canary.Profile)
	s := canary.Points[0].Specs[0]
	require.Equal(t, 20, s.RateIOPS)
	require.Equal(t, 1, s.QueueDepth)
	require.Equal(t, 30*time.Second, s.Duration)
	require.Zero(t, s.Ramp, "a continuous job does not ramp up by default")
	require.Equal(t, workload.GiB, s.RegionBytes)

	oltp := cfg.Jobs["oltp"]
	require.Equal(t, Scheduled, oltp.Mode)
	require.Equal(t, Schedule{Every: time.Hour, Align: true, Jitter: 30 * time.Second}, oltp.Schedule)
	s = oltp.Points[0].Specs[0]
	require.Equal(t, "oltp", s.Name)
	require.Equal(t, 32, s.QueueDepth, "an explicit field overrides the profile")
	require.Equal(t, 67, s.ReadPct)
	require.Equal(t, 2*time.Minute, s.Duration)
	require.Equal(t, 15*time.Second, s.Ramp)

	log := cfg.Jobs["log"]
	require.Equal(t, oltp.Schedule, log.Schedule, "merged from oltp's anchor")
	require.Equal(t, "log", log.Points[0].Specs[0].Name, "its own profile wins over the merged one")
	require.Equal(t, 4, log.Points[0].Specs[0].QueueDepth)
	require.Equal(t, 2*time.Minute, log.Points[0].Specs[0].Duration)

	mix := cfg.Jobs["mix"].Points[0].Specs[0]
	require.Equal(t, []workload.BlockSize{{Bytes: 4096, Weight: 70}, {Bytes: 65536, Weight: 30}}, mix.BlockSizes)
	require.Equal(t, "4KiB:70,64KiB:30 70% read 100% random", mix.Name)
	require.Equal(t, workload.EngineSync, mix.Engine)
	require.Equal(t, 2, mix.Workers)
	require.EqualValues(t, 10, cfg.Jobs["mix"].MaxErrors)
	require.Equal(t, 16*workload.MiB, mix.RegionBytes)
	require.Equal(t, workload.DefaultDuration, mix.Duration)
	require.Equal(t, workload.DefaultRamp, mix.Ramp)

	wal := cfg.Jobs["wal"].Points[0].Specs[0]
	require.Equal(t, 1, wal.Fdatasync)
	require.Zero(t, wal.Fsync)
	require.Equal(t, workload.SyncNone, wal.Sync, "sync: none is the default")
	dsync := cfg.Jobs["dsync"].Points[0].Specs[0]
	require.Equal(t, workload.SyncDsync, dsync.Sync)
	require.Equal(t, 8, dsync.Fsync)

	require.Equal(t, OnDemand, cfg.Jobs["adhoc"].Mode)
	require.Zero(t, cfg.Jobs["adhoc"].Points[0].Specs[0].Ramp, "ramp: 0 needs no unit")

	q := cfg.Modules["quick"]
	require.Equal(t, 3*time.Second, q.MaxDuration)
	require.Equal(t, 3*time.Second, q.Spec.Duration)
	require.Equal(t, 4, q.Spec.QueueDepth)
	require.Equal(t, "random-read", q.Profile)
	l := cfg.Modules["latency"]
	require.Equal(t, DefaultProbeDuration, l.MaxDuration)
	require.EqualValues(t, 4096, l.Spec.BlockSizes[0].Bytes, "a size given as a YAML number")
	require.Zero(t, l.Spec.Ramp)
}

func TestMinimalDefaults(t *testing.T) {
	cfg, err := Load("testdata/good/minimal.yaml", Options{})
	require.NoError(t, err)
	require.Equal(t, Global{SnapshotInterval: DefaultSnapshotInterval, KeepFiles: true, RunHistory: DefaultRunHistory, MaxConcurrentProbes: DefaultMaxConcurrentProbes}, cfg.Global)
	require.Equal(t, DefaultContinuousDuration, cfg.Jobs["canary"].Points[0].Specs[0].Duration)
}

// A suite job has one point per run of the suite, each with the job's
// durations and the target's region; the schedule must fit all of them.
// twoPoints is a suite "two" of two points: random and sequential reads.
func twoPoints(t *testing.T) func(string) ([]Point, error) {
	return func(name string) ([]Point, error) {
		require.Equal(t, "two", name)
		a, _ := workload.LookupPreset("random-read")
		b, _ := workload.LookupPreset("sequential-read")
		return []Point{{Name: "a", Specs: []workload.Spec{a.Spec}}, {Name: "b", Specs: []workload.Spec{b.Spec}}}, nil
	}
}

func TestSuiteJob(t *testing.T) {
	suites := twoPoints(t)
	doc := `
targets:
  data: {path: /srv/p.dat, size: 64MiB}
jobs:
  two:
    target: data
    suite: two
    duration: 10s
    ramp: 1s
    every: %s
`
	cfg, err := Parse("suite.yaml", []byte(strings.Replace(doc, "%s", "1m", 1)), Options{Suites: suites})
	require.NoError(t, err)
	j := cfg.Jobs["two"]
	require.Equal(t, "two", j.Suite)
	require.Len(t, j.Points, 2)
	for _, p := range j.Points {
		require.Equal(t, 10*time.Second, p.Specs[0].Duration)
		require.Equal(t, time.Second, p.Specs[0].Ramp)
		require.Equal(t, 64*workload.MiB, p.Specs[0].RegionBytes)
		require.Equal(t, workload.DefaultQueueDepth, p.Specs[0].QueueDepth)
	}
	_, err = Parse("suite.yaml", []byte(strings.Replace(doc, "%s", "20s", 1)), Options{Suites: suites})
	require.EqualError(t, err, "suite.yaml:10: jobs.two.every: 20s is not longer than a run of the job (22s = 2 points × (ramp 1s + duration 10s))")
}

// Merge keys are expanded once per mapping: a few hundred bytes that
// merge 8 copies of a mapping 12 levels deep (8^12 expansions done
// naively) are refused at once, as YAML's decoder refuses excessive
// aliasing; a few levels resolve with YAML's meaning.
func TestNestedMerges(t *testing.T) {
	doc := func(levels, copies int) []byte {
		var b strings.Builder
		b.WriteString("targets:\n  data: {path: /srv/p.dat}\njobs:\n  j0: &m0 {target: data, profile: oltp}\n")
		for i := 1; i <= levels; i++ {
			fmt.Fprintf(&b, "  j%d: &m%d {<<: [%s]}\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*m%d, ", i-1), copies), ", "))
		}
		return []byte(b.String())
	}
	done := make(chan error, 1)
	go func() {
		_, err := Parse("bomb.yaml", doc(12, 8), Options{})
		done <- err
	}()
	select {
	case err := <-done:
		require.EqualError(t, err, "bomb.yaml: reading YAML: While parsing config: yaml: document contains excessive aliasing")
	case <-time.After(time.Minute):
		t.Fatal("nested merge keys are expanded exponentially")
	}

	cfg, err := Parse("merges.yaml", doc(3, 2), Options{})
	require.NoError(t, err)
	require.Len(t, cfg.Jobs, 4)
	require.Equal(t, cfg.Jobs["j0"].Points, cfg.Jobs["j3"].Points)
	require.Equal(t, cfg.Jobs["j0"].Target, cfg.Jobs["j3"].Target)
}

// Each alias of a mapping walks it again: a thousand aliases of a
// thousand unknown keys (19 KB) were a million problems, 222 MB of error
// text and 11 s. The expanded file is bounded, and so is the list.
func TestAnchorsCannotAmplify(t *testing.T) {
	for _, use := range []string{"*x", "{<<: *x}"} {
		var b strings.Builder
		b.WriteString("x: &x {")
		for i := 0; i < 1000; i++ {
			fmt.Fprintf(&b, "k%d: 1, ", i)
		}
		b.WriteString("}\njobs: {")
		for i := 0; i < 1000; i++ {
			fmt.Fprintf(&b, "j%d: %s, ", i, use)
		}
		b.WriteString("}\n")
		_, err := Parse("big.yaml", []byte(b.String()), Options{})
		var ce *Error
		require.ErrorAs(t, err, &ce)
		require.Len(t, ce.Problems, maxProblems+1, use)
		require.Contains(t, err.Error(), "big.yaml: the file holds more than 10000 keys once its anchors and merge keys are expanded")
		require.Regexp(t, `\nbig.yaml: \d+ more problems not shown$`, err.Error())
	}
}

func TestMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "none.yaml"), Options{})
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestCharacterizeSuiteJob(t *testing.T) {
	cfg, err := Load("testdata/good/suite.yaml", Options{})
	require.NoError(t, err)
	j := cfg.Jobs["characterize"]
	require.Len(t, j.Points, 20, "esx2 Table 1: 4 patterns × 5 sizes")
	cells := map[string]bool{}
	for _, p := range j.Points {
		require.NotEmpty(t, p.Pattern)
		require.Equal(t, p.Pattern, p.Label())
		require.Equal(t, 2*time.Second, p.Specs[0].Duration)
		require.EqualValues(t, 256*workload.MiB, p.Specs[0].RegionBytes)
		cells[fmt.Sprintf("%s/%d", p.Pattern, p.Size)] = true
	}
	require.Len(t, cells, 20, "every (pattern, size) cell once")
}

// The api section: defaults when absent, every key when given; a file
// with targets and an api section needs no job.
func TestAPIRunLimits(t *testing.T) {
	cfg, err := Load("testdata/good/minimal.yaml", Options{})
	require.NoError(t, err)
	require.False(t, cfg.API.Given)
	require.Equal(t, APIRuns{MaxDuration: 10 * time.Minute, MaxRamp: 2 * time.Minute, MaxQueueDepth: 256, MaxWorkers: 64,
		MaxStartDelay: 10 * time.Minute, AllowWrites: true, Keep: 50}, cfg.API.Runs)

	cfg, err = Load("testdata/good/api-only.yaml", Options{})
	require.NoError(t, err)
	require.True(t, cfg.API.Given)
	require.Empty(t, cfg.Jobs)
	require.Equal(t, APIRuns{MaxDuration: 30 * time.Minute, MaxRamp: time.Minute, MaxQueueDepth: 64, MaxWorkers: 8,
		MaxStartDelay: 2 * time.Minute, AllowWrites: false, Keep: 10}, cfg.API.Runs)
}

// The write canary keeps its small region on a large target (it rewrites
// the same blocks), runs continuously on its profile's rate, and flushes
// after each write; on a target smaller than its region it uses the target.
func TestCanaryWriteJob(t *testing.T) {
	doc := `
targets:
  data: {path: /srv/p.dat, size: 1GiB}
  tiny: {path: /srv/t.dat, size: 256KiB}
jobs:
  canary-write: {target: data, profile: canary-write, continuous: true}
  small: {target: tiny, profile: canary-write, continuous: true}
`
	cfg, err := Parse("canary.yaml", []byte(doc), Options{})
	require.NoError(t, err)
	s := cfg.Jobs["canary-write"].Points[0].Specs[0]
	require.Equal(t, workload.CanaryWriteRegion, s.RegionBytes)
	require.Equal(t, workload.CanaryWriteIOPS, s.RateIOPS)
	require.Equal(t, 1, s.Fdatasync)
	require.Equal(t, 0, s.ReadPct)
	require.Equal(t, 1, s.QueueDepth)
	require.Equal(t, workload.EngineSync, s.Engine)
	require.Equal(t, Continuous, cfg.Jobs["canary-write"].Mode)
	require.Equal(t, 256*workload.KiB, cfg.Jobs["small"].Points[0].Specs[0].RegionBytes)
}

// TestJobNumberIOs: number_ios is run's --number-ios for a job and a
// module: every spec of the job (each point of a suite) and the probe
// stop after that many I/Os of each worker, the duration the cap; less
// than one is refused.
func TestJobNumberIOs(t *testing.T) {
	suites := twoPoints(t)
	doc := `
targets:
  data: {path: /srv/p.dat, size: 64MiB}
jobs:
  one: {target: data, profile: oltp, duration: 1m, ramp: 0s, number_ios: %s}
  two: {target: data, suite: two, duration: 1m, ramp: 0s, number_ios: %s}
modules:
  quick: {profile: random-read, max_duration: 5s, number_ios: %s}
`
	cfg, err := Parse("n.yaml", []byte(strings.ReplaceAll(doc, "%s", "500")), Options{Suites: suites})
	require.NoError(t, err)
	for _, name := range []string{"one", "two"} {
		for _, p := range cfg.Jobs[name].Points {
			s := p.Specs[0]
			require.EqualValues(t, 500, s.IOCount, name)
			require.Equal(t, 1, s.Loops, name)
			require.Equal(t, time.Minute, s.Duration, name)
		}
	}
	q := cfg.Modules["quick"].Spec
	require.EqualValues(t, 500, q.IOCount)
	require.Equal(t, 5*time.Second, q.Duration)
	_, err = Parse("n.yaml", []byte(strings.ReplaceAll(doc, "%s", "0")), Options{Suites: suites})
	require.EqualError(t, err, "n.yaml:5: jobs.one.number_ios: must be at least 1 (got 0)\nn.yaml:6: jobs.two.number_ios: must be at least 1 (got 0)\nn.yaml:8: modules.quick.number_ios: must be at least 1 (got 0)")
}
