package exporter

import (
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"
	"go.yaml.in/yaml/v3"

	"github.com/ioprobe/ioprobe/internal/safefile"
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
		// OpenMetrics to a scraper that asks for it (Prometheus does, first
		// of the text formats): exemplars exist only there, and created
		// timestamps travel in it and in protobuf. The _created lines of
		// OpenMetrics text stay off: a Prometheus without
		// created-timestamp-zero-ingestion would store each as a series.
		EnableOpenMetrics: true,
	})
	mux.Handle("GET /metrics", d.scrapes.serveLimited(maxScrapes, promhttp.InstrumentMetricHandler(d.reg, metrics).ServeHTTP))
	mux.HandleFunc("GET /probe", d.handleProbe)
	mux.HandleFunc("GET /api/v1/runs", d.handleRuns)
	mux.HandleFunc("GET /api/v1/jobs", d.api.serveLimited(maxAPIRequests, d.handleJobs))
	mux.HandleFunc("POST /api/v1/jobs/{name}/run", d.handleTrigger)
	mux.HandleFunc("POST /api/v1/runs", d.handlePostRun)
	mux.HandleFunc("GET /api/v1/runs/{id}", d.handleGetRun)
	mux.HandleFunc("DELETE /api/v1/runs/{id}", d.handleDeleteRun)
	mux.HandleFunc("GET /api/v1/clock", d.handleClock)
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
	return d.hostGuard(d.authorised(mux))
}

// authorised is the first handler inside exporter-toolkit's basic
// auth: what it sees is authorised. It tells the front so (front.go),
// lifts the front's write deadline (a /probe may rightly take minutes
// before its answer), bounds the reading of request bodies, and refuses
// a browser's cross-site request that would change something.
//
// POST /api/v1/runs is the one endpoint that reads its body: bounded in
// size (decodeRunRequest) and in time, here. No other endpoint reads
// one, so a body that a client announces is not waited for. net/http
// would otherwise read up to 256 KiB of it after the answer, without a
// deadline (the server has no ReadTimeout: a probe may take minutes), so
// a client that sends "Content-Length: 100000" and then nothing would
// hold a goroutine and a descriptor for as long as it keeps the
// connection open. The answer is given as usual; then the connection is
// closed.
func (d *Daemon) authorised(h http.Handler) http.Handler {
	csrf := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		passed(r)
		rc := http.NewResponseController(w)
		_ = rc.SetWriteDeadline(time.Time{})
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/api/v1/runs":
			_ = rc.SetReadDeadline(time.Now().Add(d.bodyTimeout))
		case r.ContentLength != 0: // -1: chunked, of unknown length
			w.Header().Set("Connection", "close")
			_ = rc.SetReadDeadline(time.Now())
		}
		// A web page a user opens may send a form (or a fetch without
		// CORS) to any address the user's browser reaches: such a request
		// says where it comes from (Sec-Fetch-Site, Origin). POST, PUT and
		// DELETE from another origin are refused; clients that are not
		// browsers send neither header.
		if err := csrf.Check(r); err != nil {
			cut(w, r)
			refuseCrossOrigin(w, r, err)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// refuseCrossOrigin answers 403 to a browser's cross-origin request.
func refuseCrossOrigin(w http.ResponseWriter, r *http.Request, err error) {
	msg := fmt.Sprintf("refused: a cross-origin request from a web browser (Origin %q, Sec-Fetch-Site %q): %v",
		r.Header.Get("Origin"), r.Header.Get("Sec-Fetch-Site"), err)
	if strings.HasPrefix(r.URL.Path, "/api/") {
		writeJSON(w, http.StatusForbidden, apiError{msg})
		return
	}
	http.Error(w, msg, http.StatusForbidden)
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
	// exporter-toolkit reads the file and the TLS files it names with
	// os.ReadFile, unbounded (a FIFO would hang it): each is checked to be
	// a bounded regular file first. It reads them again for every
	// request and connection: each must be one that only root and the
	// daemon's user can change, as the config is (a user who could write
	// it would give themselves a password, or trust their own client CA).
	data, err := safefile.WebConfig.Read(path)
	if err != nil {
		return err
	}
	if err := safefile.CheckConfig(safefile.WebConfig.What, path); err != nil {
		return err
	}
	var files struct {
		TLS struct {
			Cert string `yaml:"cert_file"`
			Key  string `yaml:"key_file"`
			CA   string `yaml:"client_ca_file"`
		} `yaml:"tls_server_config"`
	}
	if yaml.Unmarshal(data, &files) == nil {
		for _, f := range []string{files.TLS.Cert, files.TLS.Key, files.TLS.CA} {
			if f == "" {
				continue
			}
			if !filepath.IsAbs(f) {
				f = filepath.Join(filepath.Dir(path), f) // exporter-toolkit's rule
			}
			if _, err := safefile.WebConfig.Read(f); err != nil {
				return err
			}
			if err := safefile.CheckConfig("TLS file", f); err != nil {
				return err
			}
		}
	}
	return webConfigError(web.Validate(path))
}

// Concurrent requests served at once; more are answered 503 at once,
// never queued. A /api/v1/runs answer holds every kept result document
// (megabytes with a long run_history), so a few hundred at once would
// hold gigabytes; Prometheus servers scraping /metrics are a handful
// (node_exporter's default limit is 40).
const (
	maxAPIRequests = 4
	maxScrapes     = 10
)

// limiter bounds how many requests of a kind are served at once: more
// are refused, never queued. The limit is the caller's, as a reload may
// change it (global.max_concurrent_probes).
type limiter struct {
	mu     sync.Mutex
	active int
}

func (l *limiter) acquire(limit int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.active >= limit {
		return false
	}
	l.active++
	return true
}

func (l *limiter) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.active--
}

// busy answers 503 to a request that cannot be served now: a limit is
// reached, or the device is in use.
func busy(w http.ResponseWriter, retryAfter, format string, args ...any) {
	w.Header().Set("Retry-After", retryAfter)
	http.Error(w, "busy: "+fmt.Sprintf(format, args...), http.StatusServiceUnavailable)
}

// serveLimited serves h while fewer than limit requests are in it, else
// answers 503 at once.
func (l *limiter) serveLimited(limit int, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !l.acquire(limit) {
			busy(w, "1", "%d requests already in flight", limit)
			return
		}
		defer l.release()
		h(w, r)
	}
}
