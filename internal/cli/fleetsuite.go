package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ioprobe/ioprobe/internal/fleet"
	"github.com/ioprobe/ioprobe/internal/report"
	"github.com/ioprobe/ioprobe/internal/suiterun"
	"github.com/ioprobe/ioprobe/internal/textsafe"
	"github.com/ioprobe/ioprobe/internal/version"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

func newFleetSuiteCommand(g *globalOptions) *cobra.Command {
	o := &fleetOptions{}
	cmd := &cobra.Command{
		Use:   "suite NAME --hosts HOSTS --target NAME [flags]",
		Short: "Run a suite on every host at once, point by point, each point merged over the hosts",
		Long: `Runs the suite's points one after another; each point runs on every host at
once (a common start per point) and is merged over the hosts. The output is
the suite document, each point carrying its hosts' own results; the tables
are those of 'ioprobe suite', of every host together.

--cycle hosts=1,2,3 | 1..32*2 | 1..8+1 runs every point on the first N hosts
of --hosts for each N: the reports' scaling over machines (esx35 Figure 5),
with hosts down the tables and along the charts' x-axis.`,
		Example: `  ioprobe fleet suite scaling --hosts @hosts.txt --target data --cycle hosts=1..32*2
  ioprobe fleet suite business --hosts dns+ioprobe.monitoring.svc:9816 --target data --output html --out business.html`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("fleet suite: name one suite (%s) (see 'ioprobe fleet suite --help')", strings.Join(workload.SuiteNames(), ", "))
			}
			return nil
		},
		ValidArgs: workload.SuiteNames(),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.changed = cmd.Flags().Changed
			return runFleetSuite(cmd.Context(), g, o, args[0])
		},
	}
	o.AddFlags(cmd.Flags(), true)
	return cmd
}

// hostCounts takes --cycle hosts=… out of the cycles: how many of the
// hosts each point runs on (all of them when not cycled).
func (o *fleetOptions) hostCounts(n int) ([]int, error) {
	var rest []string
	var counts []int
	for _, c := range o.cycles {
		cy, err := workload.ParseCycle(c)
		if err != nil || cy.Dim != workload.CycleHosts {
			rest = append(rest, c) // the suite parses (and refuses) it
			continue
		}
		if counts != nil {
			return nil, &workload.FieldError{Field: "--cycle", Value: c, Reason: "hosts cycled twice; give one --cycle per dimension"}
		}
		for _, v := range cy.Values {
			if v > int64(n) {
				return nil, &workload.FieldError{Field: "--cycle", Value: c, Reason: fmt.Sprintf("%d hosts, but --hosts names %d", v, n)}
			}
			counts = append(counts, int(v))
		}
	}
	o.cycles = rest
	if counts == nil {
		return []int{n}, nil
	}
	return counts, nil
}

// errEarlierHostFailed stops a fleet suite after the point where a host
// failed: the remaining points would not measure the same fleet.
var errEarlierHostFailed = errors.New("not run: a host failed at an earlier point")

// runFleetSuite is `ioprobe fleet suite`.
func runFleetSuite(ctx context.Context, g *globalOptions, o *fleetOptions, name string) error {
	write, err := report.Writer(o.output, report.ForSuite)
	if err != nil {
		return err
	}
	s, err := o.setup(ctx, g)
	if err != nil {
		return err
	}
	cycles := slices.Clone(o.cycles)
	counts, err := o.hostCounts(len(s.clients))
	if err != nil {
		return err
	}
	cycled := len(o.cycles) < len(cycles)
	suite, err := o.suite(name, 1)
	if err != nil {
		return err
	}
	began := time.Now().UTC()
	// A unit per point and host count; its targets are the hosts it runs
	// on, so that the measured-once rule never pairs two host counts.
	var units []suiterun.Unit
	var reqs []fleet.RunRequest
	for _, u := range suiterun.Units(suite, []string{s.target}) {
		p := u.Point
		reqs = append(reqs, s.request(runLabel(began, p.Name), p.Specs, p.Pattern, p.Size))
		for _, n := range counts {
			var addrs []string
			for _, c := range s.clients[:n] {
				addrs = append(addrs, c.Address)
			}
			units = append(units, suiterun.Unit{Index: u.Index, Point: p, Targets: addrs})
		}
	}
	skews, err := s.check(ctx, g, s.clients, reqs)
	if err != nil || o.dryRun {
		return err
	}
	doc := &result.Suite{Schema: result.SuiteSchema, Suite: suite.Name, Title: suite.Title, Source: suite.Source,
		Version: version.Version, StartedAt: began, Results: []*result.Result{},
		Options: &result.SuiteOptions{Targets: []string{s.target}, DurationSeconds: o.duration.Seconds(), RampSeconds: o.ramp.Seconds(),
			Cycles: cycles, ReadOnly: o.readOnly, Engine: o.engine},
		Fleet: &result.FleetSuite{Target: s.target, FailedHosts: []string{}}}
	for _, c := range s.clients {
		doc.Fleet.Hosts = append(doc.Fleet.Hosts, c.Address)
	}
	var failed []string
	point := func(u suiterun.Unit) *result.Point {
		p := &result.Point{Suite: suite.Name, Name: u.Point.Name, Section: u.Point.Section, Pattern: u.Point.Pattern, SizeBytes: u.Point.Size, Index: u.Index}
		if cycled {
			p.Hosts = len(u.Targets)
		}
		return p
	}
	ex := suiterun.Executor{
		Suite: suite.Name,
		Run: func(ctx context.Context, u suiterun.Unit, _ int) (*result.Result, error) {
			if len(failed) > 0 {
				return nil, errEarlierHostFailed
			}
			label := u.Point.Name
			if cycled {
				label += fmt.Sprintf(" on %d %s", len(u.Targets), plural(len(u.Targets), "host", "hosts"))
			}
			fmt.Fprint(g.stderr, textsafe.Sprintf("ioprobe: fleet: point %s\n", label))
			req := s.request(runLabel(time.Now(), u.Point.Name), u.Point.Specs, u.Point.Pattern, u.Point.Size)
			_, hosts, runErr := s.runWithProgress(ctx, g, s.clients[:len(u.Targets)], req)
			p := point(u)
			var he *fleet.HostError
			if errors.As(runErr, &he) {
				failed = append(failed, he.Address)
				doc.Fleet.Failures = append(doc.Fleet.Failures, result.FleetFailure{Address: he.Address, Point: p.Name, Hosts: p.Hosts,
					State: result.RunUnreachable, Error: he.Err.Error()})
				return nil, fmt.Errorf("host %s; %s", he.Error(), cancelledRuns(g, runErr))
			}
			if hosts == nil {
				return nil, runErr
			}
			fleetHosts(hosts, skews, p)
			merged, _, err := result.MergeFleet(hosts)
			for _, h := range hosts {
				if h.Failed() && !slices.Contains(failed, h.Address) {
					failed = append(failed, h.Address)
					doc.Fleet.Failures = append(doc.Fleet.Failures, result.FleetFailure{Address: h.Address, Point: p.Name, Hosts: p.Hosts,
						State: h.State, Error: h.Error})
				}
			}
			if err != nil {
				return nil, err
			}
			if merged == nil {
				return nil, errors.New("no host measured anything: " + strings.Join(failedLines(hosts), "; "))
			}
			return merged, nil
		},
		Kept: func(u suiterun.Unit, res *result.Result) {
			res.Point = point(u)
			doc.Results = append(doc.Results, res)
		},
	}
	runErr := ex.Execute(ctx, units)
	doc.Fleet.FailedHosts = append(doc.Fleet.FailedHosts, failed...)
	doc.Fleet.Partial = len(failed) > 0
	if len(doc.Results) > 0 {
		if err := writeOut(g, o.out, func(w io.Writer) error { return write(w, doc) }); err != nil {
			return err
		}
	}
	var st *suiterun.Stopped
	if errors.As(runErr, &st) && st.Err != nil && !st.Interrupted && !errors.Is(st.Err, errEarlierHostFailed) {
		if len(doc.Results) == 0 {
			return &exitError{code: ExitIOErrors, err: fmt.Errorf("fleet suite %s, point %s: %w; nothing was measured", suite.Name, st.Unit.Point.Name, st.Err)}
		}
		return &exitError{code: ExitIOErrors, err: fmt.Errorf("fleet suite %s stopped at point %s: %w (%s)", suite.Name, st.Unit.Point.Name, st.Err, o.partial())}
	}
	var lines []string
	for _, r := range doc.Results {
		if p := r.Point; p != nil && len(r.Hosts) > 0 {
			for _, l := range failedLines(r.Hosts) {
				lines = append(lines, "point "+p.Name+": "+l)
			}
		}
	}
	var last *result.Result
	if n := len(doc.Results); n > 0 {
		last = doc.Results[n-1]
	}
	return fleetExit(ctx, o.out, doc.Fleet.Partial, lines, last)
}

// cancelledRuns says what became of the runs accepted at a start called
// off, a line on stderr for each host that had started.
func cancelledRuns(g *globalOptions, err error) string {
	var se *fleet.StartError
	if !errors.As(err, &se) || len(se.Measured()) == 0 {
		return "the runs already accepted were stopped before their start"
	}
	for _, h := range se.Measured() {
		fmt.Fprint(g.stderr, textsafe.Sprintf("ioprobe: fleet: host %s\n", h))
	}
	return fmt.Sprintf("the runs already accepted were stopped, but %d had started (above)", len(se.Measured()))
}
