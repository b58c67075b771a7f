package test

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/dashboards/dashquery"
	"github.com/ioprobe/ioprobe/internal/testdeps"
)

// The Prometheus servers the tests run against: Prometheus 3, built from
// the Go module proxy by scripts/prometheus3.sh into .tools/prometheus3
// (its release pinned there), and Debian's 2.42 in PATH as the older
// target; and promtool of Prometheus 3.5, the long-term support release,
// which the same script builds into .tools/prometheus-lts.
// docs/metrics.md says what each needs.

// promServer is one Prometheus release: its server and promtool.
type promServer struct {
	name                 string
	prometheus, promtool string
	// v2: Prometheus 2.x, which takes prometheus-3.5.yml without its 3.x
	// key and ingests native histograms behind a feature flag.
	v2 bool
	// lts: Prometheus 3.0 to 3.7 (promtool of 3.5 LTS only), which takes
	// prometheus-3.5.yml and the same feature flag.
	lts bool
}

// The builds are waited for once per test binary.
var prometheus3Build, prometheusLTSBuild sync.Once

// prometheusTestPrefix is the name every test that needs the Prometheus
// builds starts with: make test runs the package without them
// (go test -skip), and runs them apart (go test -run), from the moment
// Prometheus 3 is built, beside the rest (scripts/test.sh).
const prometheusTestPrefix = "TestPrometheus"

// built is what scripts/prometheus3.sh built into .tools/name: s with its
// binaries there, named with the release it wrote to VERSION, if they are
// all there. A build under way (make test starts it in the background) is
// waited for, once: its pid is in .tools/name.building while it runs.
// Only a test named prometheusTestPrefix… may ask: make test would run any
// other before the build ends, and it would wait for it there.
func built(t *testing.T, once *sync.Once, name string, s promServer) (promServer, bool) {
	t.Helper()
	if !strings.HasPrefix(t.Name(), prometheusTestPrefix) {
		t.Fatalf("%s needs the Prometheus builds: its name must start with %s, so that make test runs it once they are built (scripts/test.sh)", t.Name(), prometheusTestPrefix)
	}
	tools, err := filepath.Abs(filepath.Join("..", ".tools"))
	if err != nil {
		return promServer{}, false
	}
	once.Do(func() { waitForBuild(t, filepath.Join(tools, name+".building"), 30*time.Minute) })
	dir := filepath.Join(tools, name)
	for _, f := range []*string{&s.prometheus, &s.promtool} {
		if *f == "" {
			continue
		}
		*f = filepath.Join(dir, *f)
		if _, err := os.Stat(*f); err != nil {
			return promServer{}, false
		}
	}
	if v, err := os.ReadFile(filepath.Join(dir, "VERSION")); err == nil {
		s.name += " (" + strings.TrimSpace(string(v)) + ")"
	}
	return s, true
}

// prometheus3 is the Prometheus 3 that scripts/prometheus3.sh built, if
// it did.
func prometheus3(t *testing.T) (promServer, bool) {
	t.Helper()
	return built(t, &prometheus3Build, "prometheus3", promServer{name: "prometheus 3", prometheus: "prometheus", promtool: "promtool"})
}

// prometheusLTS is the promtool of Prometheus 3.5 LTS that
// scripts/prometheus3.sh built, if it did.
func prometheusLTS(t *testing.T) (promServer, bool) {
	t.Helper()
	return built(t, &prometheusLTSBuild, "prometheus-lts", promServer{name: "promtool 3.5 LTS", promtool: "promtool", lts: true})
}

// waitForBuild waits while the process whose pid is in file runs (at
// most limit). A file left by a build that was killed names a process
// that is gone, or one that is not a build (its pid reused): no wait.
func waitForBuild(t *testing.T, file string, limit time.Duration) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return
	}
	cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(string(cmd), "prometheus3.sh") {
		return
	}
	// A pidfd becomes readable when the process exits: wait on it.
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return // gone already
	}
	defer unix.Close(fd)
	start := time.Now()
	for {
		_, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(limit/time.Millisecond))
		if err != unix.EINTR {
			break
		}
	}
	if d := time.Since(start); d >= time.Second {
		t.Logf("waited %s for the build of %s (pid %d) to finish", d.Round(time.Second), filepath.Base(file), pid)
	}
}

// besideOtherPrometheusTests runs a test that starts Prometheus after the
// sequential tests of its run, beside the other tests that call it (at
// most go test's -parallel: scripts/test.sh sets it). Their time is
// waiting: on the daemons' schedules and on the 1 s scrape and evaluation
// intervals that the rules need several of. Each has its own daemons,
// ports and Prometheus servers, and none compares a timing (every wait on
// Prometheus is promPatience-stretched). They used to run one at a time,
// to keep two servers from loading the machine at once: 260 s on 2 cores,
// most of it four tests waiting one after the other for the same kind of
// scrape.
func besideOtherPrometheusTests(t *testing.T) {
	t.Parallel()
}

// prometheus2 is the Prometheus 2.x in PATH (Debian's), if there is one.
func prometheus2() (promServer, bool) {
	p, err := exec.LookPath("prometheus")
	if err != nil {
		return promServer{}, false
	}
	tool, err := exec.LookPath("promtool")
	if err != nil {
		return promServer{}, false
	}
	out, err := exec.Command(p, "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "prometheus, version 2.") {
		return promServer{}, false
	}
	return promServer{name: "prometheus " + strings.Fields(string(out))[2], prometheus: p, promtool: tool, v2: true}, true
}

// needPrometheus3 skips the test without Prometheus 3 (fails it under
// make test, which builds it).
func needPrometheus3(t *testing.T) promServer {
	t.Helper()
	s, ok := prometheus3(t)
	if !ok {
		testdeps.Missing(t, testdeps.Prometheus3, "it is not built")
	}
	return s
}

// promServers are the Prometheus releases installed here, and with lts
// the promtool of 3.5 LTS too. Run by hand it tests those there are, and
// skips the test when there is none; under make test, which installs them
// all, a missing one fails the test.
func promServers(t *testing.T, lts bool) []promServer {
	t.Helper()
	var out []promServer
	if s, ok := prometheus3(t); ok {
		out = append(out, s)
	} else {
		testdeps.Without(t, testdeps.Prometheus3, "it is not built: testing the older ones only")
	}
	if lts {
		if s, ok := prometheusLTS(t); ok {
			out = append(out, s)
		} else {
			testdeps.Without(t, testdeps.PromtoolLTS, "it is not built")
		}
	}
	if s, ok := prometheus2(); ok {
		out = append(out, s)
	} else {
		testdeps.Without(t, testdeps.Tool("prometheus"), "no Prometheus 2.x in PATH (Debian's prometheus package): testing Prometheus 3 only")
	}
	if len(out) == 0 {
		testdeps.Missing(t, testdeps.Prometheus3, "no Prometheus is installed")
	}
	return out
}

// v3Only is the line of configs/prometheus/prometheus-3.5.yml that
// Prometheus 2.x rejects; its comment tells 2.x users to delete it.
const v3Only = "    always_scrape_classic_histograms: true\n"

// forPrometheus2 is prometheus-3.5.yml without its Prometheus 3 key.
func forPrometheus2(t *testing.T, cfg string) string {
	t.Helper()
	require.Equal(t, 1, strings.Count(cfg, v3Only), "prometheus-3.5.yml has changed: %q", v3Only)
	return strings.Replace(cfg, v3Only, "", 1)
}

// flags are the flags a Prometheus needs for the shipped config's native
// histograms: before 3.8, the feature flag.
func (s promServer) flags() []string {
	if s.v2 || s.lts {
		return []string{"--enable-feature=native-histograms"}
	}
	return nil
}

// configFile is the shipped scrape config a release takes:
// prometheus.yml from 3.8 on, prometheus-3.5.yml before (2.x without its
// 3.x key: see forPrometheus2).
func (s promServer) configFile() string {
	if s.v2 || s.lts {
		return "prometheus-3.5.yml"
	}
	return "prometheus.yml"
}

// shippedScrapeConfig is the shipped scrape config of s's release
// (configFile) as it stands, pointed at the daemons at addrs, its rule
// files by absolute path, and scraping and evaluating every second instead
// of every 15s and 1m (the test cannot wait minutes). probeEvery, when
// set, replaces the probe job's 60s interval and 10s timeout. For a
// Prometheus 2.x, without the 3.x key.
func shippedScrapeConfig(t *testing.T, s promServer, probeEvery string, addrs ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "configs", "prometheus", s.configFile()))
	require.NoError(t, err)
	cfg := string(b)
	replace := func(old, new string) {
		t.Helper()
		require.Equal(t, 1, strings.Count(cfg, old), "%s has changed: %q", s.configFile(), old)
		cfg = strings.Replace(cfg, old, new, 1)
	}
	replace("  scrape_interval: 15s\n", "  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n")
	for _, f := range []string{"rules.yml", "alerts.yml"} {
		p, err := filepath.Abs(filepath.Join("..", "configs", "prometheus", f))
		require.NoError(t, err)
		replace("  - "+f+"\n", "  - '"+p+"'\n")
	}
	replace("['host1:9816', 'host2:9816']", "['"+strings.Join(addrs, "', '")+"']")
	replace("['host1:9816;data', 'host2:9816;data']", "['"+strings.Join(addrs, ";data', '")+";data']")
	if probeEvery != "" {
		replace("    scrape_interval: 60s\n    scrape_timeout: 10s\n",
			"    scrape_interval: "+probeEvery+"\n    scrape_timeout: "+probeEvery+"\n")
	}
	if s.v2 {
		cfg = forPrometheus2(t, cfg)
	}
	return cfg
}

// dashboardRun is what a Grafana would have when it draws a dashboard:
// Prometheus servers, a time range, the macros, the chosen variables.
type dashboardRun struct {
	// native answers every query; classic those that read classic
	// buckets ("": none, they are not run).
	native, classic string
	start, end      time.Time
	macros          dashquery.Macros
	// choose names the value of each single-valued variable; pick, those
	// of the multi-valued variables not set to All.
	choose, pick map[string]string
	// queries counts the queries run on each server.
	queries map[string]int
}

func newDashboardRun(native, classic string, start, end time.Time, rateInterval string) *dashboardRun {
	// A whole number of 1s steps, so that the range query's last step is
	// the instant queries' time.
	start = end.Add(-end.Sub(start).Round(time.Second) - time.Second)
	return &dashboardRun{native: native, classic: classic, start: start, end: end, queries: map[string]int{},
		macros: dashquery.Macros{
			// Grafana: max($__interval + scrape interval, 4 × scrape interval).
			"__rate_interval": rateInterval,
			"__interval":      "1s",
			"__interval_ms":   "1000",
			"__range":         fmt.Sprintf("%ds", int(end.Sub(start).Seconds())),
			"__range_s":       strconv.Itoa(int(end.Sub(start).Seconds())),
		}}
}

// variables resolves a dashboard's query variables in order, as Grafana
// does on load: each query must list values, and the chosen one must be
// among them.
func (r *dashboardRun) variables(t *testing.T, d *dashquery.Dashboard) map[string][]string {
	t.Helper()
	values, missing := r.resolve(t, d)
	if missing != "" {
		t.Fatal(missing)
	}
	return values
}

// resolve is variables, saying what it could not list instead of failing
// on it (a variable whose series have not come yet).
func (r *dashboardRun) resolve(t *testing.T, d *dashquery.Dashboard) (map[string][]string, string) {
	t.Helper()
	values := map[string][]string{}
	for _, v := range d.Variables {
		if v.Type != "query" {
			continue
		}
		q, err := dashquery.Interpolate(v.QueryString(), d.Variables, values, r.macros)
		require.NoError(t, err, "%s: variable %s", d.Title, v.Name)
		series, label, ok := dashquery.LabelValues(q)
		require.True(t, ok, "%s: variable %s: %s is not label_values(...)", d.Title, v.Name, q)
		params := url.Values{"start": {unixSeconds(r.start)}, "end": {unixSeconds(r.end)}}
		if series != "" {
			params.Set("match[]", series)
		}
		var got []string
		require.NoError(t, promGet(r.native, "/api/v1/label/"+label+"/values", params, &got), "%s: variable %s: %s", d.Title, v.Name, q)
		want, ok := r.choose[v.Name]
		if v.Multi || v.IncludeAll {
			want, ok = r.pick[v.Name]
			if !ok {
				if len(got) == 0 {
					return nil, fmt.Sprintf("%s: variable %s: %s lists no values", d.Title, v.Name, q)
				}
				values[v.Name] = []string{dashquery.All}
				continue
			}
		}
		require.True(t, ok, "%s: the test chooses no value for %s", d.Title, v.Name)
		if !slices.Contains(got, want) {
			return nil, fmt.Sprintf("%s: variable %s: %s lists %v, not %s", d.Title, v.Name, q, got, want)
		}
		values[v.Name] = []string{want}
	}
	return values, ""
}

// query runs one of a dashboard's queries as Grafana would: an instant
// query at the end of the range, or a range query over it; on the
// Prometheus without native histograms when it reads classic buckets.
func (r *dashboardRun) query(t *testing.T, what, expr string, instant bool, values map[string][]string, d *dashquery.Dashboard) []sample {
	t.Helper()
	res, missing := r.fetch(t, what, expr, instant, values, d)
	if missing != "" {
		t.Fatal(missing)
	}
	return res
}

// fetch is query, saying (with what the query returns now) when it
// returned no data instead of failing on it; any other error fails.
func (r *dashboardRun) fetch(t *testing.T, what, expr string, instant bool, values map[string][]string, d *dashquery.Dashboard) ([]sample, string) {
	t.Helper()
	q, err := dashquery.Interpolate(expr, d.Variables, values, r.macros)
	require.NoError(t, err, what)
	prom := r.native
	if classicOnly.MatchString(q) {
		if r.classic == "" {
			return nil, ""
		}
		prom = r.classic
	}
	r.queries[prom]++
	var res promResult
	if instant {
		res, err = queryAt(prom, q, r.end)
	} else {
		res, err = queryRange(prom, q, r.start, r.end, time.Second)
	}
	require.NoError(t, err, "%s: %s", what, q)
	if len(res.Result) == 0 {
		// What it returns at the end and now tells a late series from a
		// query that returns nothing.
		atEnd, errEnd := queryAt(prom, q, r.end)
		now, err := queryAt(prom, q, time.Now())
		return nil, fmt.Sprintf("%s returned no data from %s to %s: %s (at the end: %d series %v; now: %v %v)",
			what, r.start.Format(time.RFC3339), r.end.Format(time.RFC3339), q, len(atEnd.Result), errEnd, now, err)
	}
	if !instant {
		points := 0
		for _, s := range res.Result {
			points += len(s.Values) + len(s.Histograms)
		}
		require.Positive(t, points, "%s: %s", what, q)
	}
	return res.Result, ""
}

// draw runs every panel, annotation and variable query of a dashboard
// and returns each panel's result by title and refId, and what returned
// no data.
func (r *dashboardRun) draw(t *testing.T, d *dashquery.Dashboard) (map[string][]sample, []string) {
	t.Helper()
	values, missing := r.resolve(t, d)
	if missing != "" {
		return nil, []string{missing}
	}
	out := map[string][]sample{}
	var misses []string
	for _, p := range d.Panels {
		require.NotEmpty(t, p.Targets, "%s: %q", d.Title, p.Title)
		for _, tg := range p.Targets {
			what := fmt.Sprintf("%s: panel %q query %s", d.Title, p.Title, tg.RefID)
			res, missing := r.fetch(t, what, tg.Expr, tg.Instant, values, d)
			if missing != "" {
				misses = append(misses, missing)
				continue
			}
			if tg.Instant && len(p.Targets) == 1 {
				grid(t, p, res)
			}
			out[p.Title+"/"+tg.RefID] = res
		}
	}
	for _, a := range d.Annotations {
		if a.Expr == "" {
			continue // Grafana's own
		}
		if _, missing := r.fetch(t, fmt.Sprintf("%s: annotation %q", d.Title, a.Name), a.Expr, false, values, d); missing != "" {
			misses = append(misses, missing)
		}
	}
	return out, misses
}

// drawUntilData draws every dashboard over a range from start to now, as
// a Grafana opened now would, until one drawing finds data for every
// query: a query whose series come only later (a recording rule that has
// not yet evaluated the last scrape, on a loaded machine) is run again in
// a later drawing, with a later end, and the test says what it waited
// for. The drawing that found everything is the one returned (its
// results all end at its end). A rule that failed its evaluation fails
// the test at once, and so does any query that returns no data still
// after within.
func drawUntilData(t *testing.T, newRun func(end time.Time) *dashboardRun, boards map[string]*dashquery.Dashboard, within time.Duration) (*dashboardRun, map[string]map[string][]sample) {
	t.Helper()
	deadline := time.Now().Add(within)
	for drawing := 1; ; drawing++ {
		run := newRun(time.Now())
		results := map[string]map[string][]sample{}
		var misses []string
		for uid, b := range boards {
			res, m := run.draw(t, b)
			results[uid] = res
			misses = append(misses, m...)
		}
		if len(misses) == 0 {
			if drawing > 1 {
				t.Logf("%s: every query returned data in drawing %d, to %s", run.native, drawing, run.end.Format(time.RFC3339))
			}
			return run, results
		}
		sort.Strings(misses)
		scrapes(t, run.native, run.start, run.end)
		ruleHealth(t, run.native)
		if run.classic != "" && run.classic != run.native {
			ruleHealth(t, run.classic)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d queries returned no data still after %s:\n%s", run.native, len(misses), within, strings.Join(misses, "\n"))
		}
		for _, m := range misses {
			t.Logf("drawing %d: waiting: %.3000s", drawing, m)
		}
		time.Sleep(2 * time.Second) //hygiene:sleep the next drawing comes after a scrape and an evaluation of the rules (1 s each), bounded by within
	}
}

// scrapes logs how many scrapes of the daemons failed on prom from start
// to end: a failed scrape (a timeout, on a loaded machine) makes every
// series of its target stale until the next one, and the rules that read
// them with it, so that an instant query at the end finds nothing.
func scrapes(t *testing.T, prom string, start, end time.Time) {
	t.Helper()
	w := fmt.Sprintf("[%ds]", int(end.Sub(start).Seconds()))
	res, err := queryAt(prom, `count_over_time(up{job="ioprobe"}`+w+`) - sum_over_time(up{job="ioprobe"}`+w+`)`, end)
	require.NoError(t, err)
	atEnd, err := queryAt(prom, `up{job="ioprobe"}`, end)
	require.NoError(t, err)
	var failed, last []string
	for _, s := range res.Result {
		failed = append(failed, s.Metric["instance"]+": "+s.Value[1].(string))
	}
	for _, s := range atEnd.Result {
		last = append(last, s.Metric["instance"]+": "+s.Value[1].(string))
	}
	t.Logf("%s: failed scrapes of the daemons from %s to %s: %v; up at the end: %v", prom, start.Format(time.RFC3339), end.Format(time.RFC3339), failed, last)
}

// ruleHealth fails the test if a rule of prom failed its last evaluation:
// its series would never come, and waiting for them would hide the error.
func ruleHealth(t *testing.T, prom string) {
	t.Helper()
	var rules struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Name      string `json:"name"`
				Health    string `json:"health"`
				LastError string `json:"lastError"`
			} `json:"rules"`
		} `json:"groups"`
	}
	require.NoError(t, promGet(prom, "/api/v1/rules", url.Values{}, &rules))
	require.NotEmpty(t, rules.Groups, "%s has no rules", prom)
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			require.NotEqual(t, "err", r.Health, "%s: group %s: rule %s: %s", prom, g.Name, r.Name, r.LastError)
		}
	}
}

func loadDashboards(t *testing.T) map[string]*dashquery.Dashboard {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "grafana", "dashboards", "*.json"))
	require.NoError(t, err)
	require.Len(t, files, 3)
	out := map[string]*dashquery.Dashboard{}
	for _, f := range files {
		d, err := dashquery.Load(f)
		require.NoError(t, err, f)
		out[d.UID] = d
	}
	return out
}

// cell is a row and column of a panel's grid.
type cell struct{ row, col string }

// grid checks that a panel laid out as a matrix gets what its
// groupingToMatrix needs (a row and a column label on every sample, one
// sample per cell, rows that are numbers when converted to numbers) and
// returns its cells.
func grid(t *testing.T, p dashquery.Panel, samples []sample) map[cell]float64 {
	t.Helper()
	row, col, numeric, ok := p.Grid()
	if !ok {
		return nil
	}
	cells := map[cell]float64{}
	for _, s := range samples {
		c := cell{s.Metric[row], s.Metric[col]}
		require.NotEmpty(t, c.row, "%q: a sample without %s: %v", p.Title, row, s.Metric)
		require.NotEmpty(t, c.col, "%q: a sample without %s: %v", p.Title, col, s.Metric)
		_, dup := cells[c]
		require.False(t, dup, "%q: two samples for the cell %v", p.Title, c)
		if numeric {
			_, err := strconv.ParseFloat(c.row, 64)
			require.NoError(t, err, "%q sorts %s as numbers", p.Title, row)
		}
		cells[c] = s.float(t)
	}
	return cells
}
