package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ioprobe/ioprobe/internal/config"
	"github.com/ioprobe/ioprobe/internal/fleet"
	"github.com/ioprobe/ioprobe/internal/report"
	"github.com/ioprobe/ioprobe/internal/safefile"
	"github.com/ioprobe/ioprobe/internal/textsafe"
	"github.com/ioprobe/ioprobe/internal/version"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// fleetOptions are the flags of `ioprobe fleet run|suite`: run's (or
// suite's) workload flags, and where and how to reach the daemons.
type fleetOptions struct {
	suiteOptions
	hosts        string
	clientConfig string
	maxSkew      time.Duration
	startDelay   time.Duration
	hostTimeout  time.Duration
}

// fleetLocalOnly are run's flags that a daemon decides for itself: its
// config says whether a target may be written, how often it snapshots
// and when it stops on errors.
var fleetLocalOnly = []string{"allow-destructive", "interval", "max-errors"}

// AddFlags registers the workload flags of run (suite: of suite) and the
// fleet's own.
func (o *fleetOptions) AddFlags(fs *pflag.FlagSet, suite bool) {
	if suite {
		o.suiteOptions.AddFlags(fs)
		fs.Lookup("cycle").Usage += "; hosts=1,2,4 (or 1..32*2) runs every point on the first N hosts of --hosts (scaling over machines)"
		fs.Lookup("output").Usage = report.OutputUsage(report.ForSuite)
		_ = fs.MarkHidden("repeat")
	} else {
		o.runOptions.AddFlags(fs)
		fs.StringVar(&o.out, "out", "", "write the output to this file instead of stdout")
		fs.Lookup("output").Usage = report.OutputUsage(report.ForFleet)
	}
	if f := fs.Lookup("rate-iops"); f != nil {
		f.Usage = "cap the IOPS of each host (0: unlimited): every host runs the workload at this rate, so the fleet's total is hosts × this"
	}
	fs.Lookup("target").Usage = "the NAME of a target configured on every daemon (never a path: each daemon's config says where it is)"
	fs.Lookup("dry-run").Usage = "run the pre-checks on every host (reachable, target configured, workload accepted, clock skew), print them and exit; nothing starts"
	for _, name := range fleetLocalOnly {
		_ = fs.MarkHidden(name)
	}
	fs.StringVar(&o.hosts, "hosts", "", "the daemons: HOST:PORT,HOST:PORT | @FILE (one per line, # comments) | dns+NAME:PORT (every address of NAME, a headless Service)")
	fs.StringVar(&o.clientConfig, "client-config", "", "TLS and basic auth for the daemons: a prometheus/common HTTP client config YAML file (tls_config: ca_file, cert_file, key_file, server_name; basic_auth: username, password_file)")
	fs.DurationVar(&o.maxSkew, "max-skew", 50*time.Millisecond, "refuse a host whose clock differs from this one's by more (hosts start at one instant of their own clocks)")
	fs.DurationVar(&o.startDelay, "start-delay", 5*time.Second, "how far ahead the common start is picked: time for every host to accept the run and prepare its target (a host not ready by then fails)")
	fs.DurationVar(&o.hostTimeout, "host-timeout", 15*time.Second, "a host that does not answer for this long during the run is lost (the result is partial and names it)")
}

func newFleetCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fleet run|suite",
		Short: "Run one workload or suite on many `ioprobe serve` daemons at once, merged exactly",
		Long: `Runs one workload (fleet run) or a suite (fleet suite) on the ioprobe serve
daemons named by --hosts, all starting at one instant, and merges their
results exactly through the histograms: the merged op count is the sum of
the hosts', percentiles are those of every I/O of every host. Each host's
own result stays in the output with its identity.

Before starting anything, every host is checked: it answers, the target
is configured there, it accepts the workload (a dry run of the daemon's
admin API, --web.enable-admin-api) and its clock is within --max-skew of
this one's. Any problem: exit 2, one line per host, nothing started
anywhere. A host that fails during the run leaves a partial result that
names it (exit 1). Ctrl-C stops the run on every host and keeps their
partial results (exit 130). See docs/fleet.md.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("fleet: say run or suite (see 'ioprobe fleet --help')")
			}
			return usagef("fleet: unknown command %q: say run or suite (see 'ioprobe fleet --help')", args[0])
		},
		RunE: func(*cobra.Command, []string) error { return nil },
	}
	cmd.AddCommand(newFleetRunCommand(g), newFleetSuiteCommand(g))
	return cmd
}

func newFleetRunCommand(g *globalOptions) *cobra.Command {
	o := &fleetOptions{}
	cmd := &cobra.Command{
		Use:   "run --hosts HOSTS --target NAME [flags]",
		Short: "Run one access specification on every host at once",
		Example: `  ioprobe fleet run --hosts node1:9816,node2:9816,node3:9816 --target data --bs 8k --qd 32 --duration 60s
  ioprobe fleet run --hosts dns+ioprobe.monitoring.svc:9816 --target data --profile oltp --output json --out oltp.json
  ioprobe report oltp.json --output html --out oltp.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.changed = cmd.Flags().Changed
			return runFleetRun(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd.Flags(), false)
	return cmd
}

// fleetSetup is what both commands check before talking to any host.
type fleetSetup struct {
	target  string
	dryRun  bool
	clients []*fleet.Client
	ctl     *fleet.Controller
}

// setup checks the flags, reads the host list and the client config.
func (o *fleetOptions) setup(ctx context.Context, g *globalOptions) (*fleetSetup, error) {
	for _, name := range fleetLocalOnly {
		if o.changed != nil && o.changed(name) {
			return nil, usagef("--%s is not a fleet flag: each daemon's config decides it", name)
		}
	}
	if o.changed != nil && o.changed("repeat") {
		return nil, usagef("--repeat is not a fleet flag: run the fleet suite again")
	}
	if o.hosts == "" {
		return nil, usagef("fleet: --hosts is required (HOST:PORT,… | @FILE | dns+NAME:PORT)")
	}
	if len(o.targets) != 1 {
		return nil, usagef("fleet: give one --target, the name of a target configured on every daemon")
	}
	name := o.targets[0]
	if !config.ValidName(name) {
		return nil, &workload.FieldError{Field: "--target", Value: name, Reason: "must be the name of a target in the daemons' config (like data), not a path"}
	}
	for flag, d := range map[string]time.Duration{"--max-skew": o.maxSkew, "--start-delay": o.startDelay, "--host-timeout": o.hostTimeout} {
		if d <= 0 {
			return nil, &workload.FieldError{Field: flag, Value: d.String(), Reason: "must be positive"}
		}
	}
	var uses []safefile.InUse
	for _, item := range strings.Split(o.hosts, ",") {
		if file, ok := strings.CutPrefix(strings.TrimSpace(item), "@"); ok {
			uses = append(uses, inUse("the host list", file)...)
		}
	}
	if o.clientConfig != "" {
		uses = append(uses, inUse("the client config", o.clientConfig)...)
	}
	if err := checkOut(o.out, uses...); err != nil {
		return nil, err
	}
	addrs, err := fleet.ParseHosts(ctx, o.hosts, net.DefaultResolver)
	if err != nil {
		return nil, usagef("%v", err)
	}
	hc, tls, err := fleet.NewHTTPClient(o.clientConfig)
	if err != nil {
		return nil, usagef("%v", err)
	}
	s := &fleetSetup{target: name, dryRun: o.dryRun, ctl: &fleet.Controller{MaxSkew: o.maxSkew, StartDelay: o.startDelay, LostAfter: o.hostTimeout,
		Log: func(format string, args ...any) {
			fmt.Fprint(g.stderr, textsafe.Sprintf("ioprobe: fleet: "+format+"\n", args...))
		}}}
	for _, a := range addrs {
		s.clients = append(s.clients, fleet.NewClient(a, hc, tls))
	}
	return s, nil
}

// check runs the pre-checks of reqs on every host. A host that fails is
// one line on stderr, and the whole is bad input: nothing started.
func (s *fleetSetup) check(ctx context.Context, g *globalOptions, clients []*fleet.Client, reqs []fleet.RunRequest) ([]fleet.Skew, error) {
	skews, problems := s.ctl.Check(ctx, clients, reqs)
	if ctx.Err() != nil {
		return nil, &exitError{code: ExitInterrupted, err: errors.New("interrupted during the pre-checks: nothing was started")}
	}
	for _, p := range problems {
		fmt.Fprint(g.stderr, textsafe.Sprintf("ioprobe: host %s\n", p))
	}
	if len(problems) > 0 {
		return nil, &exitError{code: ExitBadInput, err: fmt.Errorf("fleet: %d of %d %s failed the pre-checks (above): nothing was started anywhere",
			len(problems), len(clients), plural(len(clients), "host", "hosts"))}
	}
	if s.dryRun {
		fmt.Fprint(g.stdout, textsafe.Sprintf("fleet: %d %s checked, target %q, %d %s, nothing run (--dry-run)\n", len(clients), plural(len(clients), "host", "hosts"),
			s.target, len(reqs), plural(len(reqs), "point", "points")))
		for i, c := range clients {
			fmt.Fprint(g.stdout, textsafe.Sprintf("%s: clock offset %s, every point accepted\n", c.Address, skews[i]))
		}
	}
	worst := fleet.Skew{}
	for _, sk := range skews {
		if sk.Offset.Abs() > worst.Offset.Abs() {
			worst = sk
		}
	}
	fmt.Fprintf(g.stderr, "ioprobe: fleet: %d %s ready, clocks within %s (±%s) of this one's\n", len(clients),
		plural(len(clients), "host", "hosts"), worst.Offset.Abs(), worst.Uncertainty)
	return skews, nil
}

// request is the run API's body for the specs of one point.
func (s *fleetSetup) request(label string, specs []workload.Spec, pattern string, size int64) fleet.RunRequest {
	r := fleet.RunRequest{Target: s.target, Ramp: specs[0].Ramp.String(), Duration: specs[0].Duration.String(),
		Label: label, Pattern: pattern, Size: size}
	if err := r.SetSpecs(specs); err != nil {
		panic(err) // a workload.Spec always encodes
	}
	return r
}

var labelUnsafe = regexp.MustCompile(`[^a-z0-9-]+`)

// runLabel names a run in the daemons' history and metrics:
// fleet-20261201T100000-oltp.
func runLabel(at time.Time, what string) string {
	what = strings.Trim(labelUnsafe.ReplaceAllString(strings.ToLower(what), "-"), "-")
	if len(what) > 40 {
		what = what[:40]
	}
	return "fleet-" + at.UTC().Format("20060102T150405") + "-" + what
}

// fleetHosts completes the hosts of one run: their clock readings, and
// each result without a suite point of its own (stamped by the caller).
func fleetHosts(hosts []result.FleetHost, skews []fleet.Skew, point *result.Point) {
	for i := range hosts {
		h := &hosts[i]
		if i < len(skews) {
			h.ClockOffsetSeconds, h.ClockUncertaintySeconds = skews[i].Offset.Seconds(), skews[i].Uncertainty.Seconds()
		}
		switch h.State {
		case result.RunDone:
			h.State = result.RunDone
		case result.RunStopped:
			h.State = result.RunStopped
		case result.RunFailed, result.RunUnreachable:
		default:
			h.State, h.Error = result.RunFailed, strings.TrimPrefix(h.Error+"; ended while "+string(h.State), "; ")
		}
		if h.Result != nil {
			if point != nil {
				p := *point
				h.Result.Point = &p
			} else {
				h.Result.Point = nil
			}
		}
	}
}

// runFleetRun is `ioprobe fleet run`.
func runFleetRun(ctx context.Context, g *globalOptions, o *fleetOptions) error {
	write, err := report.Writer(o.output, report.ForFleet)
	if err != nil {
		return err
	}
	spec, err := o.spec()
	if err != nil {
		return err
	}
	s, err := o.setup(ctx, g)
	if err != nil {
		return err
	}
	began := time.Now().UTC()
	req := s.request(runLabel(began, spec.Describe()), []workload.Spec{spec}, "", 0)
	skews, err := s.check(ctx, g, s.clients, []fleet.RunRequest{req})
	if err != nil || o.dryRun {
		return err
	}
	startAt, hosts, runErr := s.runWithProgress(ctx, g, s.clients, req)
	var se *fleet.StartError
	if errors.As(runErr, &se) {
		return startFailed(g, se)
	}
	fleetHosts(hosts, skews, nil)
	merged, failed, err := result.MergeFleet(hosts)
	if err != nil {
		return fmt.Errorf("fleet: merging the hosts' results: %w", err)
	}
	doc := &result.Fleet{Schema: result.FleetSchema, Version: version.Version, StartedAt: began, StartAt: startAt,
		Target: s.target, Hosts: hosts, Partial: len(failed) > 0, FailedHosts: failed}
	if merged != nil {
		m := *merged
		m.Hosts = nil // the document lists them once, at the top
		doc.Merged = &m
	}
	if err := writeOut(g, o.out, func(w io.Writer) error { return write(w, doc) }); err != nil {
		return err
	}
	return fleetExit(ctx, o.out, doc.Partial, failedLines(hosts), merged)
}

// startFailed is the end of a start called off (a host refused its run,
// or Ctrl-C during the posts): what each host had done, one line each
// when a host had started, and the exit status: 2 (130 interrupted)
// when nothing was measured anywhere, else 1.
func startFailed(g *globalOptions, se *fleet.StartError) error {
	measured := se.Measured()
	for _, h := range measured {
		fmt.Fprint(g.stderr, textsafe.Sprintf("ioprobe: fleet: host %s\n", h))
	}
	var he *fleet.HostError
	interrupted := !errors.As(se, &he)
	what := "fleet: host " + se.Error()
	if interrupted {
		what = "interrupted while starting"
	}
	if len(measured) == 0 {
		code := ExitBadInput
		if interrupted {
			code = ExitInterrupted
		}
		return &exitError{code: code, err: fmt.Errorf("%s; the runs already accepted were stopped before their start: nothing was measured", what)}
	}
	code := ExitIOErrors
	if interrupted {
		code = ExitInterrupted
	}
	return &exitError{code: code, err: fmt.Errorf("%s; the runs already accepted were stopped, but %d of %d %s had started (above): no fleet result",
		what, len(measured), len(se.Hosts), plural(len(se.Hosts), "host", "hosts"))}
}

// failedLines names each host that did not complete and why.
func failedLines(hosts []result.FleetHost) []string {
	var out []string
	for _, h := range hosts {
		if h.Failed() {
			out = append(out, fmt.Sprintf("%s (%s): %s", h.Address, h.State, h.Error))
		}
	}
	return out
}

// fleetExit is the exit status of a fleet command whose output was
// written: interrupted 130, a host that did not complete or I/O errors 1.
func fleetExit(ctx context.Context, out string, partial bool, failed []string, merged *result.Result) error {
	where := "on stdout"
	if out != "" {
		where = "in " + out
	}
	switch {
	case ctx.Err() != nil:
		return &exitError{code: ExitInterrupted, err: errors.New("interrupted: stopped on every host; the results " + where + " are partial")}
	case partial:
		return &exitError{code: ExitIOErrors, err: fmt.Errorf("fleet: partial result %s: %s", where, strings.Join(failed, "; "))}
	case merged != nil && merged.Status == result.StatusErrors:
		return &exitError{code: ExitIOErrors, err: errors.New(merged.Message)}
	}
	return nil
}
