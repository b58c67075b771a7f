package exporter

import (
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/config"
)

// probeConfig is the configuration parseProbe is checked against.
func probeConfig(t testing.TB) *config.Config {
	cfg, err := config.Parse("probe.yaml", []byte(`
targets:
  data: {path: /srv/probe.dat, size: 16MiB}
  other: {path: /srv/other.dat}
modules:
  quick: {profile: random-read, max_duration: 2s}
  ramped: {profile: random-read, ramp: 1s, max_duration: 5m}
`), config.Options{})
	require.NoError(t, err)
	return cfg
}

func TestParseProbe(t *testing.T) {
	cfg := probeConfig(t)
	const offset = 500 * time.Millisecond
	for _, tc := range []struct {
		query, timeout string
		err            string
		target, module string
		budget         time.Duration
		debug          bool
	}{
		{query: "target=data&module=quick", target: "data", module: "quick", budget: 2*time.Second + defaultProbeSlack},
		{query: "module=ramped&target=%2Fsrv%2Fother.dat&debug=true", timeout: "10", target: "other", module: "ramped", budget: 9500 * time.Millisecond, debug: true},
		{query: "target=data&module=quick&debug=TRUE", timeout: "0.25", target: "data", module: "quick", budget: -250 * time.Millisecond},
		{query: "target=data&module=quick&module=nope", timeout: "1e300", target: "data", module: "quick", budget: maxScrapeTimeout - offset},
		{query: "target=data&module=quick", timeout: "1e-320", target: "data", module: "quick", budget: -offset},
		{query: "", err: "module parameter is missing"},
		{query: "target=data&module=", err: "module parameter is missing"},
		{query: "target=data&module=nope", err: `unknown module "nope"`},
		{query: "module=quick", err: "target parameter is missing"},
		{query: "module=quick&target=/etc/passwd", err: `unknown target "/etc/passwd": /probe measures only targets named in the config`},
		{query: "module=quick&target=/srv/../srv/probe.dat", err: `unknown target "/srv/../srv/probe.dat"`},
		{query: "module=quick&target=data%00", err: `unknown target "data\x00"`},
		{query: "module=quick&target=data&%zz", err: `malformed query string: invalid URL escape "%zz"`},
		{query: "module=quick;target=data", err: "malformed query string: invalid semicolon separator in query"},
		{query: "target=data&module=quick", timeout: "NaN", err: `bad X-Prometheus-Scrape-Timeout-Seconds "NaN": want a positive number of seconds`},
		{query: "target=data&module=quick", timeout: "+Inf", err: "bad X-Prometheus-Scrape-Timeout-Seconds"},
		{query: "target=data&module=quick", timeout: "0", err: "bad X-Prometheus-Scrape-Timeout-Seconds"},
		{query: "target=data&module=quick", timeout: "-3", err: "bad X-Prometheus-Scrape-Timeout-Seconds"},
		{query: "target=data&module=quick", timeout: "10s", err: "bad X-Prometheus-Scrape-Timeout-Seconds"},
	} {
		h := http.Header{}
		if tc.timeout != "" {
			h.Set("X-Prometheus-Scrape-Timeout-Seconds", tc.timeout)
		}
		p, err := parseProbe(cfg, tc.query, h, offset)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, "%q %q", tc.query, tc.timeout)
			continue
		}
		require.NoError(t, err, "%q %q", tc.query, tc.timeout)
		require.Equal(t, tc.target, p.target.Name, tc.query)
		require.Equal(t, tc.module, p.module.Name, tc.query)
		require.Equal(t, tc.budget, p.budget, "%q %q", tc.query, tc.timeout)
		require.Equal(t, tc.debug, p.debug, tc.query)
	}
}

// The measured time is the module's, cut to fit the budget after ramp-up
// and setup.
func TestProbeMeasure(t *testing.T) {
	cfg := probeConfig(t)
	p := probeRequest{module: cfg.Modules["ramped"], budget: 10 * time.Second}
	require.Equal(t, 10*time.Second-time.Second-probeSetup, p.measure())
	p.budget = time.Hour
	require.Equal(t, 5*time.Minute, p.measure())
	p.budget = -time.Second
	require.Less(t, p.measure(), config.MinProbeDuration)
}

// FuzzParseProbe: whatever the query string and the scrape timeout
// header, parseProbe does not panic, names only what the config names,
// and gives a bounded budget, or a 400's message.
func FuzzParseProbe(f *testing.F) {
	for _, s := range [][2]string{
		{"target=data&module=quick", ""},
		{"target=data&module=quick&debug=true", "10"},
		{"module=ramped&target=%2Fsrv%2Fother.dat", "0.6"},
		{"target=data&module=quick", "NaN"},
		{"target=data&module=quick", "1e309"},
	} {
		f.Add(s[0], s[1])
	}
	cfg := probeConfig(f)
	const offset = 500 * time.Millisecond
	known := []string{"malformed query string: ", "module parameter is missing", "unknown module ", "target parameter is missing",
		"unknown target ", "bad X-Prometheus-Scrape-Timeout-Seconds "}
	f.Fuzz(func(t *testing.T, query, timeout string) {
		h := http.Header{}
		if timeout != "" {
			h["X-Prometheus-Scrape-Timeout-Seconds"] = []string{timeout}
		}
		p, err := parseProbe(cfg, query, h, offset)
		if err != nil {
			for _, k := range known {
				if strings.HasPrefix(err.Error(), k) {
					return
				}
			}
			t.Fatalf("unexpected error %q", err)
		}
		q, qerr := url.ParseQuery(query)
		if qerr != nil {
			t.Fatalf("accepted a malformed query %q", query)
		}
		if cfg.Modules[q.Get("module")] != p.module || p.module == nil {
			t.Fatalf("module %v for %q", p.module, query)
		}
		if lookupTarget(cfg, q.Get("target")) != p.target || p.target == nil {
			t.Fatalf("target %v for %q", p.target, query)
		}
		if p.debug != (q.Get("debug") == "true") {
			t.Fatalf("debug %v for %q", p.debug, query)
		}
		if p.budget > maxScrapeTimeout || p.budget < -offset {
			t.Fatalf("budget %s for timeout %q", p.budget, timeout)
		}
		if timeout != "" {
			secs, perr := strconv.ParseFloat(timeout, 64)
			if perr != nil || !(secs > 0) || math.IsInf(secs, 0) {
				t.Fatalf("accepted timeout %q", timeout)
			}
		}
		if p.measure() > p.module.MaxDuration {
			t.Fatalf("measures %s, longer than the module's %s", p.measure(), p.module.MaxDuration)
		}
	})
}
