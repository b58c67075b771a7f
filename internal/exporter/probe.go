package exporter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/ioprobe/ioprobe/internal/config"
	"github.com/ioprobe/ioprobe/internal/runner"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// /probe runs a configured module on a configured target, blackbox
// style: a fresh registry per request, the time budget from the scrape
// timeout, a failed probe reported as ioprobe_probe_success 0. It never
// touches a path the config does not name, and it needs no flag: the
// config's modules section is the opt-in.

// probeSetup is kept out of the budget for opening the target and
// stopping the workers: on a quiet host. The measurement is cut further
// when they take longer (probe).
const probeSetup = 250 * time.Millisecond

// probeTeardown is kept out of the budget after the measured window, for
// stopping the workers and summing up.
const probeTeardown = probeSetup / 2

// defaultProbeSlack is added to a module's duration when a request has no
// scrape timeout header.
const defaultProbeSlack = 5 * time.Second

// lookupTarget finds a configured target by name, or by its exact path.
func lookupTarget(cfg *config.Config, s string) *config.Target {
	if t := cfg.Targets[s]; t != nil {
		return t
	}
	for _, t := range cfg.Targets {
		if t.Path == s {
			return t
		}
	}
	return nil
}

// maxScrapeTimeout caps X-Prometheus-Scrape-Timeout-Seconds: the budget
// only ever shortens a module's max_duration (5 minutes at most), and a
// cap keeps absurd values (1e300) from overflowing a time.Duration.
const maxScrapeTimeout = time.Hour

// probeRequest is what a /probe request asks for, checked against the
// configuration: nothing in it names anything the config does not.
type probeRequest struct {
	module *config.Module
	target *config.Target
	// budget is the time the probe may take: the scrape timeout minus the
	// offset (possibly too short to measure, even negative: that is a
	// failed probe, not a bad request), else the module's duration plus
	// some slack.
	budget time.Duration
	// deadline is when the budget ends, set when the probe starts.
	deadline time.Time
	debug    bool
}

// measure is how long the probe measures: the module's max_duration, cut
// to what the budget leaves after ramp-up and setup.
func (p *probeRequest) measure() time.Duration {
	return min(p.module.MaxDuration, p.budget-p.module.Spec.Ramp-probeSetup)
}

// parseProbe reads a /probe request: its raw query (target, module,
// debug) and its X-Prometheus-Scrape-Timeout-Seconds header. An error is
// the client's (400): a malformed query, a missing or unknown module or
// target, a timeout that is not a positive number of seconds.
func parseProbe(cfg *config.Config, rawQuery string, h http.Header, offset time.Duration) (probeRequest, error) {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return probeRequest{}, fmt.Errorf("malformed query string: %v", err)
	}
	modName, tgtName := q.Get("module"), q.Get("target")
	if modName == "" {
		return probeRequest{}, errors.New("module parameter is missing")
	}
	mod := cfg.Modules[modName]
	if mod == nil {
		return probeRequest{}, fmt.Errorf("unknown module %q", modName)
	}
	if tgtName == "" {
		return probeRequest{}, errors.New("target parameter is missing")
	}
	tgt := lookupTarget(cfg, tgtName)
	if tgt == nil {
		return probeRequest{}, fmt.Errorf("unknown target %q: /probe measures only targets named in the config", tgtName)
	}
	p := probeRequest{module: mod, target: tgt, debug: q.Get("debug") == "true"}
	v := h.Get("X-Prometheus-Scrape-Timeout-Seconds")
	if v == "" {
		p.budget = mod.Spec.Ramp + mod.MaxDuration + defaultProbeSlack
		return p, nil
	}
	secs, err := strconv.ParseFloat(v, 64)
	if err != nil || !(secs > 0) || math.IsInf(secs, 0) {
		return probeRequest{}, fmt.Errorf("bad X-Prometheus-Scrape-Timeout-Seconds %q: want a positive number of seconds", v)
	}
	secs = min(secs, maxScrapeTimeout.Seconds()) // before the conversion, which would overflow
	p.budget = time.Duration(secs*float64(time.Second)) - offset
	return p, nil
}

func (d *Daemon) handleProbe(w http.ResponseWriter, r *http.Request) {
	cfg := d.cfg.Load()
	p, err := parseProbe(cfg, r.URL.RawQuery, r.Header, d.opts.ProbeTimeoutOffset)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !d.probes.acquire(cfg.Global.MaxConcurrentProbes) {
		d.m.probesRejected.WithLabelValues("concurrency").Inc()
		busy(w, "1", "%d probe(s) already running (global.max_concurrent_probes)", cfg.Global.MaxConcurrentProbes)
		return
	}
	defer d.probes.release()

	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	reg := prometheus.NewRegistry()
	start := time.Now()
	var res *result.Result
	if p.measure() < config.MinProbeDuration {
		// Said before the device is taken: a scrape timeout too short
		// for the module must not stop the canary for nothing.
		err = fmt.Errorf("the time budget (%s: the scrape timeout minus the offset) leaves less than %s to measure after ramp-up and setup", p.budget, config.MinProbeDuration)
	} else {
		// The budget bounds the wait for the device and the preparation
		// (probe: the window ends before it); the run itself may take the
		// offset too to stop its workers, as long as the scrape waits: a
		// measurement made in full is not thrown away because stopping
		// took a loaded host longer than a quiet one.
		p.deadline = start.Add(p.budget)
		ctx, cancel := context.WithDeadline(r.Context(), p.deadline)
		defer cancel()
		runCtx, cancelRun := context.WithDeadline(r.Context(), p.deadline.Add(d.opts.ProbeTimeoutOffset))
		defer cancelRun()
		stop := context.AfterFunc(d.runCtx, func() { cancel(); cancelRun() })
		defer stop()
		var release func()
		release, err = d.devices.heavy(ctx, deviceKeyOf(p.target.Path), "probe "+p.module.Name, false, time.Time{})
		var devErr *busyError
		if errors.As(err, &devErr) {
			d.m.probesRejected.WithLabelValues("device_busy").Inc()
			busy(w, "10", "%s", devErr)
			return
		}
		if err != nil {
			err = fmt.Errorf("the light runs on the device (canaries) did not stop within the probe's time budget (%s): %w", p.budget, err)
		} else {
			res, err = d.probe(runCtx, log, &p)
			release()
			d.recordRun(finished{res: res, err: err, cut: runCtx.Err() != nil}, nil, 0, nil)
		}
		// Cut short by the client or by shutdown, a probe says nothing
		// of the target; cut by its own budget, it says that the budget
		// is too short for this host as it is now: that is logged.
		cut := (res == nil && ctx.Err() != nil) || runCtx.Err() != nil
		aborted := cut && (r.Context().Err() != nil || d.runCtx.Err() != nil)
		if cut && !aborted && err != nil {
			err = fmt.Errorf("its time budget (%s: the scrape timeout minus the offset) ran out: %w", p.budget, err)
		}
		d.noteProbe(&p, res, err, aborted, cut)
	}
	success := err == nil && res != nil && res.Status == result.StatusOK
	elapsed := time.Since(start)
	if success {
		log.Info("probe succeeded", "duration_seconds", elapsed.Seconds())
	} else {
		log.Error("probe failed", "duration_seconds", elapsed.Seconds(), "err", err)
	}
	d.logger.Debug("probe done", "module", p.module.Name, "target", p.target.Name, "success", success, "duration", elapsed)
	var totals map[result.LatencyKind]*latencyTotal
	if res != nil {
		totals = d.probeTotals.add(p.module.Name, p.target.Name, &res.Summary)
	}
	probeMetrics(reg, success, elapsed, res, totals)

	if p.debug {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "Logs for the probe:\n%s\n\nMetrics that would have been returned:\n", logs.String())
		mfs, gerr := reg.Gather()
		if gerr != nil {
			fmt.Fprintf(w, "gathering: %v\n", gerr)
			return
		}
		enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
		for _, mf := range mfs {
			_ = enc.Encode(mf)
		}
		return
	}
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true}).ServeHTTP(w, r)
}

// probe runs the requested module on its target for as long as the
// budget allows, at most the module's duration.
func (d *Daemon) probe(ctx context.Context, log *slog.Logger, r *probeRequest) (*result.Result, error) {
	m, t := r.module, r.target
	spec := m.Spec
	spec.Duration = r.measure()
	log.Info("beginning probe", "module", m.Name, "workload", spec.Name, "target", t.Name, "path", t.Path,
		"budget_seconds", r.budget.Seconds(), "ramp_seconds", spec.Ramp.Seconds(), "measure_seconds", spec.Duration.Seconds())
	p := d.settings(t, m.MaxErrors).Plan(targetUnit(t, spec.Name, []workload.Spec{spec}))
	// The measurement is what the budget leaves once the probe is ready,
	// not what it would leave on a quiet host: waiting for canaries to
	// stop and opening the target take seconds on a loaded one, and a
	// probe that measured its full time then overran its budget and was
	// cut, every time (ioprobe_probe_success 0 and no reason given).
	// Nor does a probe load the BPF programs that time the device: its
	// metrics do not carry the device's figures, and the load (40 ms of
	// CPU on a quiet host, seconds on a loaded one, not cancellable) was
	// taken from the budget before the first I/O.
	p.NoDeviceLatency = true
	p.NoDeviceLatencyWhy = "not measured by /probe (its metrics do not carry it; list the device under devices: to watch it)"
	if !r.deadline.IsZero() {
		p.MeasureBy, p.MinMeasure = r.deadline.Add(-probeTeardown), config.MinProbeDuration
	}
	res, err := runner.Run(ctx, p)
	var late *runner.TooLateError
	if errors.As(err, &late) {
		log.Info("too late to measure", "took_seconds", late.Took.Seconds(), "left_seconds", late.Left.Seconds())
		// Without the figures, which change from probe to probe: the
		// daemon logs a streak once, and again on another reason.
		return nil, fmt.Errorf("waiting for the device and preparing took the time budget (%s: the scrape timeout minus the offset) but for less than %s to measure (?debug=true says how long)",
			r.budget, config.MinProbeDuration)
	}
	if err != nil {
		return nil, err
	}
	s := &res.Summary
	log.Info("measured", append([]any{"status", res.Status}, logFigures(s)...)...)
	if res.Status != result.StatusOK {
		return res, fmt.Errorf("run ended %s: %s", res.Status, res.Message)
	}
	return res, nil
}

// noteProbe logs the first of a streak of probes of a module on a target
// that could not start or that their budget cut (budgetCut), and the
// first that starts again and finishes within its budget; not each one.
// An aborted probe (the client went, shutdown) is not counted.
func (d *Daemon) noteProbe(p *probeRequest, res *result.Result, err error, aborted, budgetCut bool) {
	if aborted {
		return // says nothing of the target
	}
	f := d.probeFails.get(p.module.Name, p.target.Name)
	log := d.logger.With("module", p.module.Name, "target", p.target.Name)
	if err == nil || (res != nil && !budgetCut) {
		if n := f.reset(); n > 0 {
			log.Info("probes start again", "failed_probes", n)
		}
		return
	}
	prev := f.get().err
	switch n := f.fail(err, time.Time{}); {
	case n == 1 && res != nil:
		log.Error("probe cut by its time budget; further failures are not logged until one measures (?debug=true shows each)", "err", err)
	case n == 1:
		log.Error("probe cannot start; further failures are not logged until one starts (?debug=true shows each)", "err", err)
	case err.Error() != prev:
		log.Error("probes still cannot start, now for another reason", "failed_probes", n, "err", err)
	}
}

// probeTotals add up the latency summaries of every probe of a module on
// a target since the daemon started: the count and the sum of the probe's
// summaries, which are counters (each probe is a scrape of the same
// series; its quantiles are this probe's).
type probeTotals struct {
	mu sync.Mutex
	m  map[[2]string]map[result.LatencyKind]*latencyTotal
}

// add adds a probe's summary s and returns the totals so far.
func (p *probeTotals) add(module, target string, s *result.Summary) map[result.LatencyKind]*latencyTotal {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[[2]string]map[result.LatencyKind]*latencyTotal{}
	}
	k := [2]string{module, target}
	if p.m[k] == nil {
		p.m[k] = map[result.LatencyKind]*latencyTotal{}
	}
	out := map[result.LatencyKind]*latencyTotal{}
	for _, kind := range result.ViewProbeSummaries {
		t := p.m[k][kind]
		if t == nil {
			t = &latencyTotal{}
			p.m[k][kind] = t
		}
		t.add(kind, s)
		c := *t
		out[kind] = &c
	}
	return out
}

// probeMetrics fills a probe's own registry; totals are the module's
// summaries on the target so far, this probe's included.
func probeMetrics(reg *prometheus.Registry, success bool, elapsed time.Duration, res *result.Result, totals map[result.LatencyKind]*latencyTotal) {
	g := func(name, help string, v float64) {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return v }))
	}
	ok := 0.0
	if success {
		ok = 1
	}
	g("ioprobe_probe_success", "1 if the probe measured without I/O errors.", ok)
	g("ioprobe_probe_duration_seconds", "How long the probe took, preparation and ramp-up included.", elapsed.Seconds())
	if res == nil {
		return
	}
	s := &res.Summary
	for _, id := range result.ViewProbeGauges {
		m := id.Figure().Metric
		g("ioprobe_probe_"+m.Name, m.ProbeHelp, result.Value(id, s))
	}
	var summaries constMetrics
	for _, k := range result.ViewProbeSummaries {
		m := k.Metric()
		if s := latencySummary(prometheus.NewDesc("ioprobe_probe_"+m.Name, m.ProbeHelp, nil, nil), k, s, totals[k]); s != nil {
			summaries = append(summaries, s)
		}
	}
	reg.MustRegister(summaries)
}
