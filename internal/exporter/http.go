package exporter

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/ioprobe/ioprobe/internal/version"
)

// Handler serves every endpoint. exporter-toolkit wraps it with TLS and
// basic auth when a web config is given.
func (d *Daemon) Handler() http.Handler {
	mux := http.NewServeMux()
	metrics := promhttp.HandlerFor(d.reg, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(d.logger.Handler(), slog.LevelError),
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      d.reg,
	})
	mux.Handle("GET /metrics", promhttp.InstrumentMetricHandler(d.reg, metrics))
	mux.HandleFunc("GET /probe", d.handleProbe)
	mux.HandleFunc("GET /api/v1/runs", d.handleRuns)
	mux.HandleFunc("GET /api/v1/jobs", d.handleJobs)
	mux.HandleFunc("POST /api/v1/jobs/{name}/run", d.handleTrigger)
	mux.HandleFunc("POST /-/reload", d.handleReload)
	mux.HandleFunc("PUT /-/reload", d.handleReload)
	mux.HandleFunc("GET /-/healthy", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "Healthy.")
	})
	mux.HandleFunc("GET /-/ready", func(w http.ResponseWriter, _ *http.Request) {
		if !d.ready.Load() {
			http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "Ready.")
	})
	landing, err := web.NewLandingPage(web.LandingConfig{
		Name:        "ioprobe",
		Description: "Direct-I/O storage probe: live I/O, latency and CPU per I/O of scheduled and continuous jobs, on-demand probes.",
		Version:     version.Version,
		Profiling:   "false",
		Form: web.LandingForm{Action: "probe", Inputs: []web.LandingFormInput{
			{Label: "Target", Type: "text", Name: "target", Placeholder: "a target named in the config"},
			{Label: "Module", Type: "text", Name: "module", Placeholder: "a module named in the config"},
			{Label: "Debug", Type: "checkbox", Name: "debug", Value: "true"},
		}},
		Links: []web.LandingLinks{
			{Address: "metrics", Text: "Metrics", Description: "live I/O counters and latency, last-run gauges, host CPU"},
			{Address: "api/v1/jobs", Text: "Jobs", Description: "configured jobs and what they are doing"},
			{Address: "api/v1/runs", Text: "Runs", Description: "recent results (ioprobe.result/v1 JSON)"},
		},
	})
	if err != nil {
		panic(err) // a fixed template: cannot fail
	}
	mux.Handle("GET /{$}", landing)
	return mux
}

func (d *Daemon) handleReload(w http.ResponseWriter, _ *http.Request) {
	if !d.opts.Web.EnableLifecycle {
		http.Error(w, "Lifecycle API is not enabled: start ioprobe serve with --web.enable-lifecycle", http.StatusForbidden)
		return
	}
	if err := d.Reload(); err != nil {
		http.Error(w, fmt.Sprintf("failed to reload config: %s", err), http.StatusInternalServerError)
		return
	}
	fmt.Fprintln(w, "Configuration reloaded.")
}

// CheckWebConfig validates an exporter-toolkit web config file (TLS and
// basic auth), so that a bad one is reported before anything starts.
func CheckWebConfig(path string) error {
	if path == "" {
		return nil
	}
	return web.Validate(path)
}
