package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ioprobe/ioprobe/internal/report"
	"github.com/ioprobe/ioprobe/internal/runner"
	"github.com/ioprobe/ioprobe/internal/suiterun"
	"github.com/ioprobe/ioprobe/internal/version"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// DefaultTarget is the file `ioprobe run` creates and measures when no
// --target is given, in the current directory.
const DefaultTarget = "ioprobe.dat"

// runOptions are the flags of `ioprobe run`.
type runOptions struct {
	targets          []string
	size             string
	bs               string
	lines            []string
	readPct          int
	randomPct        int
	qd               int
	workers          int
	duration         time.Duration
	ramp             time.Duration
	engine           string
	rateIOPS         int
	profile          string
	output           string
	allowDestructive bool
	deviceLatency    bool
	align            string
	seed             uint64
	maxErrors        uint64
	interval         time.Duration
	verify           bool
	fsync            int
	fdatasync        int
	sync             string
	dryRun           bool
	ioSize           string
	numberIOs        int64
	batchSubmit      int
	batchComplete    int
	batchCompleteMax int
	startAt          string
	out              string
	buffered         bool

	changed func(name string) bool
	// beforeUnit, when set, is called before each point of an imported
	// file is measured (a fio job's ioscheduler= switches a device then).
	beforeUnit func(u suiterun.Unit) error
}

// AddFlags registers the flags with their Iometer defaults.
func (o *runOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&o.targets, "target", nil, "file or block device to measure (repeat for several; default ./"+DefaultTarget+", created if missing)")
	fs.StringVar(&o.size, "size", "", "access region: bytes of each target that I/O touches (e.g. 1GiB; default: the whole target, 1GiB for a new file)")
	fs.StringVar(&o.bs, "bs", "4k", "transfer size, or a weighted mix like 4k:70,64k:30 (k/KiB = 1024, kB = 1000)")
	fs.StringArrayVar(&o.lines, "line", nil, "one line of an Iometer access specification, instead of --bs/--read-pct/--random-pct/--align (repeat; shares sum to 100): SIZE,share=%,read=%,random=%[,align=SIZE][,delay=MS][,burst=N], e.g. 4k,share=60,read=67,random=100")
	fs.IntVar(&o.readPct, "read-pct", 100, "percent of I/Os that are reads (the rest are writes)")
	fs.IntVar(&o.randomPct, "random-pct", 100, "percent of I/Os at random offsets (the rest continue sequentially)")
	fs.IntVar(&o.qd, "qd", workload.DefaultQueueDepth, "outstanding I/Os per worker per target")
	fs.IntVar(&o.workers, "workers", workload.DefaultWorkers, "workers (engine loops), each with its own outstanding I/Os")
	fs.DurationVar(&o.duration, "duration", workload.DefaultDuration, "measured run time")
	fs.DurationVar(&o.ramp, "ramp", workload.DefaultRamp, "ramp-up before measuring: I/O runs but is not counted")
	fs.StringVar(&o.engine, "engine", "auto", "I/O engine: auto, sync or uring")
	fs.IntVar(&o.rateIOPS, "rate-iops", 0, "cap total IOPS (0: unlimited)")
	fs.StringVar(&o.profile, "profile", "", "start from a named profile (see 'ioprobe profiles'); explicit flags override it")
	fs.StringVarP(&o.output, "output", "o", "text", report.OutputUsage(report.ForRun))
	fs.BoolVar(&o.allowDestructive, "allow-destructive", false, "allow writes to a block device or an existing file that ioprobe did not create")
	fs.StringVar(&o.align, "align", "", "offset alignment (default: the smallest transfer size)")
	fs.Uint64Var(&o.seed, "seed", 0, "random seed for offsets (0: a new one each run)")
	fs.Uint64Var(&o.maxErrors, "max-errors", 1, "stop after this many failed I/Os (0: never stop, count them)")
	fs.DurationVar(&o.interval, "interval", time.Second, "snapshot period for the interval log and progress")
	fs.IntVar(&o.fsync, "fsync", 0, "fsync a target after every N writes a worker issued there (fio's fsync=N; 0: never)")
	fs.IntVar(&o.fdatasync, "fdatasync", 0, "fdatasync a target after every N writes a worker issued there (fio's fdatasync=N; 0: never)")
	fs.StringVar(&o.sync, "sync", "none", "open targets for synchronous writes: none, dsync (O_DSYNC) or sync (O_SYNC)")
	fs.BoolVar(&o.deviceLatency, "device-latency", true, "time every request of the targets' block devices in the kernel (eBPF; needs root or CAP_BPF and CAP_PERFMON): summary.device.latency, beside ioprobe's own latency; without the privileges the run goes on and says why")
	fs.BoolVar(&o.verify, "verify", false, "write self-checking sectors (offset, run id, CRC-32C) and check every read that can be checked; mismatches are errors of class verify")
	fs.BoolVar(&o.dryRun, "dry-run", false, dryRunUsage)
	fs.StringVar(&o.ioSize, "io-size", "", "each worker stops after issuing this many bytes (fio's io_size without time_based); --duration is then a cap")
	fs.Int64Var(&o.numberIOs, "number-ios", 0, "each worker stops after issuing this many I/Os (fio's number_ios without time_based); --duration is then a cap")
	fs.IntVar(&o.batchSubmit, "batch-submit", 1, "uring engine: hand up to N I/Os to the kernel per call (fio's iodepth_batch_submit; 0: the queue depth); 1 plugs nothing across I/Os, so sequential I/O reaches the device unmerged, more lets the block layer merge contiguous I/Os. Without any --batch-* flag the ring batches only what cannot merge (docs/engines.md); with one, fio's rules apply exactly, fio's defaults (1) for the flags not given")
	fs.IntVar(&o.batchComplete, "batch-complete", 1, "uring engine: with the queue full, wait for N completions before issuing more (fio's iodepth_batch_complete_min; 0: poll without sleeping)")
	fs.IntVar(&o.batchCompleteMax, "batch-complete-max", 0, "uring engine: refill at most N completed slots before submitting again (fio's iodepth_batch_complete_max; 0: --batch-complete's value, fio's default)")
}

// addStartAtFlag registers the flags of run alone: --start-at (a suite's
// points run one after another) and --out (suite has its own).
func (o *runOptions) addStartAtFlag(fs *pflag.FlagSet) {
	fs.StringVar(&o.startAt, "start-at", "", "prepare the targets, then start the ramp-up at this instant: RFC 3339 (2026-12-01T10:00:00Z) or +DURATION from now (+30s)")
	// A container without a shell (the distroless image, a Kubernetes
	// Job) cannot redirect stdout to a file.
	fs.StringVar(&o.out, "out", "", "write the output to this file instead of stdout")
}

// parseStartAt reads --start-at: an RFC 3339 time or +DURATION from now.
// A time that is not in the future is bad input.
func parseStartAt(v string, now time.Time) (time.Time, error) {
	bad := func(why string) error { return &workload.FieldError{Field: "--start-at", Value: v, Reason: why} }
	var at time.Time
	if rest, ok := strings.CutPrefix(v, "+"); ok {
		d, err := time.ParseDuration(rest)
		if err != nil || d <= 0 {
			return at, bad("want +DURATION (a positive Go duration like +30s) or an RFC 3339 time like 2026-12-01T10:00:00Z")
		}
		return now.Add(d), nil
	}
	at, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return at, bad("want an RFC 3339 time like 2026-12-01T10:00:00Z (with its zone) or +DURATION like +30s")
	}
	if !at.After(now) {
		return at, bad(fmt.Sprintf("is already past (%s ago)", now.Sub(at).Round(time.Millisecond)))
	}
	return at, nil
}

func newRunCommand(g *globalOptions) *cobra.Command {
	o := &runOptions{}
	fio := &fioJobOptions{}
	ini := &icfOptions{}
	cmd := &cobra.Command{
		Use:   "run [flags]",
		Short: "Run one access specification against one or more targets",
		Example: `  ioprobe run --target /data/probe.dat --size 1GiB --bs 4k --read-pct 100 --random-pct 100 --qd 16 --duration 60s --ramp 10s
  ioprobe run --target /dev/nvme1n1 --profile oltp --output json > oltp.json
  ioprobe run --duration 10s --ramp 2s          # ./ioprobe.dat, created on first use
  ioprobe run --icf oltp.icf --target /dev/sdb --dry-run   # an Iometer configuration file's runs`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.changed = cmd.Flags().Changed
			if ini.file != "" {
				if fio.file != "" || fio.section != "" || o.startAt != "" {
					return usagef("--icf runs an Iometer file on its own: not with --fio-job, --section or --start-at")
				}
				return runICF(cmd.Context(), g, o, ini)
			}
			if fio.file != "" || fio.section != "" {
				if o.startAt != "" {
					return usagef("--start-at works with the run flags, not with a fio job file")
				}
				return runFioJob(cmd.Context(), g, o, fio)
			}
			return runRun(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd.Flags())
	o.addStartAtFlag(cmd.Flags())
	cmd.Flags().BoolVar(&o.buffered, "buffered", false, "run through the page cache, not O_DIRECT (fio's direct=0): the cache is dropped first, any transfer size goes; every output says \"buffered\"")
	fio.AddFlags(cmd.Flags())
	ini.AddFlags(cmd.Flags())
	return cmd
}

// spec builds the access specification: the profile first, then every
// flag the user gave explicitly.
func (o *runOptions) spec() (workload.Spec, error) {
	changed := o.changed
	if changed == nil {
		changed = func(string) bool { return true }
	}
	s := workload.Spec{ReadPct: 100, RandomPct: 100}
	if o.profile != "" {
		p, err := workload.LookupPreset(o.profile)
		if err != nil {
			return s, err
		}
		s = p.Spec
	}
	// Defaults first, so that an explicit flag is validated as given
	// (--qd 0 is an error, not "the default").
	s = s.WithDefaults()
	if err := o.pattern(&s, changed); err != nil {
		return s, err
	}
	if changed("qd") || o.profile == "" {
		s.QueueDepth = o.qd
	}
	if changed("workers") || o.profile == "" {
		s.Workers = o.workers
	}
	if changed("rate-iops") {
		s.RateIOPS = o.rateIOPS
	}
	s.Duration, s.Ramp, s.Seed, s.Verify = o.duration, o.ramp, o.seed, o.verify
	s.Buffered = o.buffered
	if changed("engine") || o.profile == "" || s.Engine == workload.EngineAuto {
		s.Engine = workload.EngineName(o.engine) // a profile may name its engine (canary-write: sync)
	}
	o.flushAndBatch(&s, changed)
	if o.size != "" {
		n, err := parseRegion(o.size)
		if err != nil {
			return s, err
		}
		s.RegionBytes = n
	}
	if err := o.budget(&s, changed); err != nil {
		return s, err
	}
	if o.align != "" {
		n, err := workload.ParseSize(o.align)
		if err != nil {
			return s, &workload.FieldError{Field: "--align", Value: o.align, Reason: err.Error()}
		}
		s.Align = n
	}
	return s, s.Validate()
}

// flushAndBatch sets the run parameters that apply to any access
// specification, run's and every point of a suite alike: the flushes
// (--fsync, --fdatasync, --sync) and fio's batch sizes (--batch-*).
// --batch-submit 0 is the queue depth: a suite's points each take
// their own (see suiteOptions.suite).
func (o *runOptions) flushAndBatch(s *workload.Spec, changed func(string) bool) {
	if changed("fsync") {
		s.Fsync = o.fsync
	}
	if changed("fdatasync") {
		s.Fdatasync = o.fdatasync
	}
	if changed("sync") {
		s.Sync = workload.NormalizeSync(o.sync)
	}
	if changed("batch-submit") || changed("batch-complete") || changed("batch-complete-max") {
		// Any of fio's batch sizes given: fio's rules, exactly, with
		// fio's defaults for the others (not the adaptive rule).
		s.SubmitMode = workload.SubmitFio
	}
	if changed("batch-submit") {
		s.SubmitBatch = o.batchSubmit
		if o.batchSubmit == 0 {
			s.SubmitBatch = s.QueueDepth // fio's iodepth_batch_submit=0
		}
	}
	if changed("batch-complete") {
		s.CompleteMin, s.CompletePoll = o.batchComplete, o.batchComplete == 0
	}
	if changed("batch-complete-max") {
		s.CompleteMax = o.batchCompleteMax
	}
}

// pattern sets the access specification's pattern from the flags: the
// lines of --line, or --bs with --read-pct and --random-pct (today's
// one-line form). A profile written as lines (all-in-one) is replaced
// whole by --bs or --line; --read-pct alone cannot say which line it means.
func (o *runOptions) pattern(s *workload.Spec, changed func(string) bool) error {
	if len(o.lines) > 0 {
		for _, f := range []string{"bs", "read-pct", "random-pct", "align"} {
			if changed(f) {
				return &workload.FieldError{Field: "--line", Value: o.lines[0], Reason: "cannot be combined with --" + f + ": a line gives its own size, read=, random= and align="}
			}
		}
		s.Lines = s.Lines[:0]
		for _, v := range o.lines {
			l, err := workload.ParseLine(v)
			if err != nil {
				return err
			}
			s.Lines = append(s.Lines, l)
		}
		s.BlockSizes, s.ReadPct, s.RandomPct, s.Align = nil, 0, 0, 0
		return nil
	}
	if len(s.Lines) > 0 && !changed("bs") {
		for _, f := range []string{"read-pct", "random-pct", "align"} {
			if changed(f) {
				return &workload.FieldError{Field: "--" + f, Value: "with --profile " + o.profile, Reason: "the profile is written as lines, each with its own; replace it with --line or --bs"}
			}
		}
		return nil
	}
	if changed("bs") || o.profile == "" {
		bs, err := workload.ParseBlockSizes(o.bs)
		if err != nil {
			return err
		}
		if len(s.Lines) > 0 { // --bs replaces a profile's lines: the flags' pattern
			s.Lines, s.ReadPct, s.RandomPct = nil, o.readPct, o.randomPct
		}
		s.BlockSizes = bs
	}
	if changed("read-pct") {
		s.ReadPct = o.readPct
	}
	if changed("random-pct") {
		s.RandomPct = o.randomPct
	}
	return nil
}

// checkInterval refuses an --interval under 10ms (run, --icf and
// --fio-job alike).
func (o *runOptions) checkInterval() error {
	if o.interval < 10*time.Millisecond {
		return &workload.FieldError{Field: "--interval", Value: o.interval.String(), Reason: "must be at least 10ms"}
	}
	return nil
}

// importRefusal says which of a file's runs a refusal is about, in the
// file's own terms ("fio job F, job randwrite"); run has no --read-only,
// so none is offered.
func importRefusal(title string, u suiterun.Unit, err error) error {
	what := "run"
	if strings.HasPrefix(title, "fio job ") {
		what = "job"
	}
	return fmt.Errorf("%s, %s %s: %w; nothing was run", title, what, u.Point.Name, err)
}

// settings are what every run shares.
func (o *runOptions) settings(g *globalOptions) suiterun.Settings {
	return suiterun.Settings{AllowDestructive: o.allowDestructive, MaxErrors: o.maxErrors, Interval: o.interval, Engines: g.engines,
		NoDeviceLatency: !o.deviceLatency,
		Note:            func(note string) { fmt.Fprintf(g.stderr, "ioprobe: note: %s\n", note) }}
}

// runImported runs the units an importer read from a file (--icf,
// --fio-job) as a suite of one repeat: with --dry-run it prints the plan
// (title names the file); otherwise every unit is checked before the
// first runs, the units run into a suite document, and finish (given
// the results' document only when there are results) adds the
// importer's notes and writes it. The runs' error follows finish's.
func (o *runOptions) runImported(ctx context.Context, g *globalOptions, title string, s *workload.Suite, units []suiterun.Unit,
	options *result.SuiteOptions, finish func(doc *result.Suite) error) error {
	settings := o.settings(g)
	if o.dryRun {
		if u, err := dryRun(g.stdout, title, settings, units); err != nil {
			return importRefusal(title, u, err)
		}
		return nil
	}
	if u, err := settings.Check(units); err != nil {
		return importRefusal(title, u, err)
	}
	doc := &result.Suite{Schema: result.SuiteSchema, Suite: s.Name, Title: s.Title, Source: s.Source,
		Version: version.Version, StartedAt: time.Now().UTC(), Results: []*result.Result{}, Options: options}
	so := &suiteOptions{runOptions: *o, repeat: 1}
	runErr := so.runUnits(ctx, g, s, units, doc)
	if len(doc.Results) > 0 {
		if err := finish(doc); err != nil {
			return err
		}
	}
	return runErr
}

// runRun is `ioprobe run`.
func runRun(ctx context.Context, g *globalOptions, o *runOptions) error {
	var startAt time.Time
	if o.startAt != "" {
		var err error
		if startAt, err = parseStartAt(o.startAt, time.Now()); err != nil {
			return err
		}
	}
	write, err := report.Writer(o.output, report.ForRun)
	if err != nil {
		return err
	}
	if err := checkOut(o.out, inUse("a target of the run", targetsOr(o.targets)...)...); err != nil {
		return err
	}
	spec, err := o.spec()
	if err != nil {
		return err
	}
	if err := o.checkInterval(); err != nil {
		return err
	}
	targets := o.targets
	if len(targets) == 0 {
		targets = []string{DefaultTarget}
		fmt.Fprintf(g.stderr, "ioprobe: no --target given: measuring ./%s (created and filled on first use)\n", DefaultTarget)
	}
	unit := suiterun.Unit{Point: workload.SuitePoint{Name: spec.Describe(), Specs: []workload.Spec{spec}}, Targets: targets}
	if o.dryRun {
		_, err := dryRun(g.stdout, "run", o.settings(g), []suiterun.Unit{unit})
		return err
	}
	var pr *progress
	if g.stderrTTY {
		pr = newProgress(g.terminal())
		defer pr.clear()
	}
	plan := o.settings(g).Plan(unit)
	plan.StartAt = startAt
	if !startAt.IsZero() {
		plan.Prepared = func() {
			if pr != nil {
				pr.clear()
			}
			fmt.Fprintf(g.stderr, "ioprobe: prepared; the ramp-up starts at %s\n", startAt.UTC().Format(time.RFC3339Nano))
		}
	}
	res, err := measure(ctx, plan, pr)
	if err != nil {
		if errors.Is(err, runner.ErrStartAtInterrupted) {
			return &exitError{code: ExitInterrupted, err: err}
		}
		if ctx.Err() != nil {
			return &exitError{code: ExitInterrupted, err: errors.New("interrupted while preparing")}
		}
		return err
	}
	if err := writeOut(g, o.out, func(w io.Writer) error { return write(w, res) }); err != nil {
		return err
	}
	switch {
	case ctx.Err() != nil:
		where := "on stdout"
		if o.out != "" {
			where = "in " + o.out
		}
		return &exitError{code: ExitInterrupted, err: errors.New("interrupted: the result " + where + " is partial")}
	case res.Status == result.StatusErrors:
		return &exitError{code: ExitIOErrors, err: errors.New(res.Message)}
	}
	return nil
}

// budget sets the stop-after budget of --io-size and --number-ios (fio's
// io_size and number_ios without time_based): one loop of either or
// both, whichever comes first.
func (o *runOptions) budget(s *workload.Spec, changed func(string) bool) error {
	if changed("number-ios") {
		if o.numberIOs < 1 {
			return &workload.FieldError{Field: "--number-ios", Value: fmt.Sprint(o.numberIOs), Reason: "must be at least 1"}
		}
		s.StopAfterIOs(o.numberIOs)
	}
	if o.ioSize != "" {
		n, err := workload.ParseSize(o.ioSize)
		if err != nil || n < 1 {
			reason := "must be at least 1 byte"
			if err != nil {
				reason = err.Error()
			}
			return &workload.FieldError{Field: "--io-size", Value: o.ioSize, Reason: reason}
		}
		s.StopAfterBytes(n)
	}
	return nil
}

// parseRegion reads --size: a region of at least one byte. 0 would mean
// "the whole target" inside (the default), which a user who typed it did
// not ask for.
func parseRegion(v string) (int64, error) {
	n, err := workload.ParseSize(v)
	if err != nil {
		return 0, &workload.FieldError{Field: "--size", Value: v, Reason: err.Error()}
	}
	if n < 1 {
		return 0, &workload.FieldError{Field: "--size", Value: v, Reason: "must be more than 0 (leave --size out to use the whole target)"}
	}
	return n, nil
}
