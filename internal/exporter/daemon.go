package exporter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ioprobe/ioprobe/internal/config"
	"github.com/ioprobe/ioprobe/internal/cpuacct"
	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/target"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// Options configure a Daemon.
type Options struct {
	// Config is the configuration to start with (already loaded and valid).
	Config *config.Config
	// Load reads the configuration again, for SIGHUP and POST /-/reload.
	Load    func() (*config.Config, error)
	Engines *engine.Registry
	Logger  *slog.Logger
	// ProcRoot is where /proc is (for ioprobe_host_cpu_seconds_total).
	ProcRoot string
	Web      WebOptions
	// ProbeTimeoutOffset is taken off a scrape's timeout to leave time
	// for the answer to reach Prometheus.
	ProbeTimeoutOffset time.Duration
	// Listener, when set, is served instead of Web.ListenAddresses (tests).
	Listener net.Listener
}

// WebOptions are the --web.* flags.
type WebOptions struct {
	ListenAddresses []string
	ConfigFile      string // exporter-toolkit web config: TLS and basic auth
	SystemdSocket   bool
	// EnableLifecycle allows POST /-/reload.
	EnableLifecycle bool
	// EnableAdminAPI allows POST /api/v1/jobs/NAME/run.
	EnableAdminAPI bool
}

// DefaultProbeTimeoutOffset is blackbox_exporter's.
const DefaultProbeTimeoutOffset = 500 * time.Millisecond

// shutdownGrace bounds the wait for HTTP requests in flight at shutdown.
const shutdownGrace = 500 * time.Millisecond

// Limits of the HTTP server. A client that never finishes its headers,
// or keeps a connection open and idle, must not hold a goroutine and a
// descriptor for ever; nor may one request's headers take a megabyte
// (net/http's default) when Prometheus sends a few hundred bytes. There
// is no read or write timeout for a whole request: a /probe may rightly
// take minutes, and its context ends when the client goes away.
const (
	readHeaderTimeout = 10 * time.Second
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 64 << 10
)

// Daemon is `ioprobe serve`.
type Daemon struct {
	opts     Options
	logger   *slog.Logger
	cfg      atomic.Pointer[config.Config]
	reg      *prometheus.Registry
	m        *metrics
	live     *liveStore
	lastRuns *runStore
	history  *history
	devices  *devices
	devWatch *deviceWatch // config devices: host-wide device latency
	devInfo  *deviceInfo  // ioprobe_device_info: the devices' settings
	sched    *scheduler
	ready    atomic.Bool
	// probes, api and scrapes bound concurrent /probe requests, run API
	// requests (whose answers hold whole result documents) and scrapes.
	probes, api, scrapes limiter
	probeFails           probeStreaks // probes that could not start, for the log
	probeTotals          probeTotals  // each module and target's probes, for the summaries' counters
	// timeouts of the HTTP server (tests shorten them).
	readHeaderTimeout, idleTimeout time.Duration
	// bodyTimeout bounds the reading of a POST /api/v1/runs body;
	// answerTimeout the writing of an answer to a request not (yet)
	// authorised; authWait a request's wait for the password check.
	bodyTimeout, answerTimeout, authWait time.Duration
	// auth orders the password checks (nil without --web.config.file).
	auth *authGate
	// hosts knows the Host names the daemon answers (hosts.go).
	hosts *hostRule

	reloadMu sync.Mutex
	// runCtx ends when the daemon stops; every run and probe ends with it.
	runCtx    context.Context
	stopRuns  context.CancelFunc
	createdMu sync.Mutex
	created   map[string]*target.CreatedFile // files the daemon's runs created, by descriptor (keep_files: false)

	apiRuns *apiRuns    // runs posted to the run API
	host    result.Host // this machine, as results describe it
}

// New builds a daemon; Run starts it.
func New(o Options) (*Daemon, error) {
	if o.Config == nil || o.Engines == nil || o.Logger == nil {
		return nil, errors.New("exporter: Config, Engines and Logger are required")
	}
	if o.ProbeTimeoutOffset < 0 {
		return nil, fmt.Errorf("probe timeout offset %s is negative", o.ProbeTimeoutOffset)
	}
	d := &Daemon{
		opts:     o,
		logger:   o.Logger,
		live:     newLiveStore(),
		lastRuns: newRunStore(),
		history:  newHistory(),
		devices:  newDevices(),
		created:  map[string]*target.CreatedFile{},

		readHeaderTimeout: readHeaderTimeout,
		bodyTimeout:       bodyReadTimeout,
		answerTimeout:     answerTimeout,
		authWait:          authWait,
		idleTimeout:       idleTimeout,
		hosts:             newHostRule(),
	}
	if o.Web.ConfigFile != "" {
		d.auth = newAuthGate()
	}
	d.runCtx, d.stopRuns = context.WithCancel(context.Background())
	d.apiRuns = newAPIRuns(func() int { return d.cfg.Load().API.Runs.Keep })
	d.host, _ = cpuacct.Reader{ProcRoot: o.ProcRoot}.Host()
	d.devWatch = newDeviceWatch(o.Logger)
	d.devInfo = newDeviceInfo("", o.ProcRoot)
	d.reg, d.m = newRegistry(d.live, d.lastRuns, d.devWatch, d.devInfo, o.ProcRoot, o.Logger)
	d.sched = newScheduler(schedDeps{clock: wallClock{}, devices: d.devices, m: d.m, logger: d.logger,
		run: d.runPoints, deviceKey: deviceKeyOf, rand: rand.Int64N})
	d.cfg.Store(o.Config)
	if o.Web.EnableAdminAPI {
		// API runs' counters exist from the start, as jobs' do.
		d.m.jobs.counters(apiJob)
	}
	d.m.reloadOK.Set(1)
	d.m.reloadTime.SetToCurrentTime()
	return d, nil
}

// Registry is the daemon's own registry (tests lint and gather it).
func (d *Daemon) Registry() *prometheus.Registry { return d.reg }

// Config is the live configuration.
func (d *Daemon) Config() *config.Config { return d.cfg.Load() }

// Run starts the jobs and the HTTP server and blocks until ctx ends or the
// server fails. When ctx ends, every run is stopped (within a second:
// runs stop at their next snapshot tick or chunk of file preparation), the
// server is shut down, files the daemon created are removed unless
// keep_files says otherwise, and Run returns nil.
func (d *Daemon) Run(ctx context.Context) error {
	defer d.stopRuns()
	stop := context.AfterFunc(ctx, d.stopRuns)
	defer stop()
	cfg := d.cfg.Load()
	d.logger.Info("starting", "config", cfg.File, "jobs", len(cfg.Jobs), "modules", len(cfg.Modules), "targets", len(cfg.Targets))
	// Listening first: a daemon that cannot listen starts no job.
	ls, err := d.listeners()
	if err != nil {
		d.logger.Error("HTTP server failed", "err", err)
		return err
	}
	for i, l := range ls {
		spec := ""
		if d.opts.Listener == nil && !d.opts.Web.SystemdSocket && i < len(d.opts.Web.ListenAddresses) {
			spec = d.opts.Web.ListenAddresses[i]
		}
		d.hosts.addListener(spec, l.Addr())
	}
	d.hosts.lookupFQDN()
	// Beside the jobs, not before them: a check that waits for a
	// filesystem that does not answer (until its deadline) holds up no
	// job of another target.
	go d.logUnstartable()
	d.devWatch.apply(cfg.Devices)
	defer d.devWatch.close()
	go d.devInfo.loop(d.runCtx, d.infoDevices)
	d.sched.start(d.runCtx, cfg)

	servers := make([]*http.Server, len(ls))
	errc := make(chan error, len(ls))
	for i, l := range ls {
		servers[i] = d.newServer()
		go func() { errc <- d.serveOn(l, servers[i]) }()
	}
	d.ready.Store(true)

	pending := len(servers)
	select {
	case <-d.runCtx.Done():
		d.logger.Info("stopping: runs in progress are interrupted")
	case err = <-errc:
		pending--
		d.logger.Error("HTTP server failed", "err", err)
	}
	d.ready.Store(false)
	d.stopRuns()

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		d.sched.stop()
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		d.apiRuns.shutdown() // each releases its device and is recorded as stopped
	}()
	shutCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	for _, server := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if serr := server.Shutdown(shutCtx); serr != nil {
				_ = server.Close()
			}
		}()
	}
	for range pending {
		if serr := <-errc; err == nil && serr != nil && !errors.Is(serr, http.ErrServerClosed) {
			err = serr
		}
	}
	wg.Wait()
	d.removeCreated()
	d.logger.Info("stopped")
	return err
}

// Reload reads the configuration again and, if it is valid, swaps it in:
// jobs whose definition changed are stopped and started again, removed
// ones stopped, unchanged ones go on undisturbed. A bad configuration
// changes nothing.
func (d *Daemon) Reload() error {
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	if d.opts.Load == nil {
		return errors.New("no way to reload the configuration")
	}
	cfg, err := d.opts.Load()
	if err != nil {
		d.m.reloadOK.Set(0)
		d.logger.Error("reloading the configuration failed; keeping the running one", "err", err)
		return err
	}
	old := d.cfg.Swap(cfg)
	d.sched.apply(cfg)
	d.devWatch.apply(cfg.Devices)
	d.devInfo.reread()
	d.lastRuns.forget(func(job string) bool { return cfg.Jobs[job] != nil })
	d.forgetCounters(old, cfg)
	d.history.forget(func(job string) int {
		switch {
		case job == apiJob:
			return cfg.API.Runs.Keep
		case cfg.Jobs[job] != nil:
			return cfg.Global.RunHistory
		}
		return 0
	})
	d.apiRuns.reconfigure(cfg)
	d.hosts.lookupFQDN() // the machine may have been renamed too
	d.m.reloadOK.Set(1)
	d.m.reloadTime.SetToCurrentTime()
	d.logger.Info("configuration reloaded", "config", cfg.File, "jobs", len(cfg.Jobs), "modules", len(cfg.Modules))
	go d.logUnstartable() // beside the reload's answer, as at start
	return nil
}

// forgetCounters drops the counters of the jobs of old that a reload to
// cfg removed (their runs by outcome, skipped starts, live I/O series),
// and the live series a job left on a target it no longer runs on: they
// would otherwise stay, frozen, until a restart. The scheduler has
// stopped those jobs' runs. A job that comes back starts its counters
// from zero, as after a restart (rate() takes that for a counter reset).
func (d *Daemon) forgetCounters(old, cfg *config.Config) {
	for name := range old.Jobs {
		if cfg.Jobs[name] == nil {
			d.m.jobs.forget(name)
			d.m.jobSkipped.DeletePartialMatch(prometheus.Labels{jobLabel: name})
		}
	}
	d.live.forget(func(target, job string) bool {
		if job == apiJob {
			return true
		}
		j := cfg.Jobs[job]
		return j != nil && j.Target.Name == target
	})
}

// noteCreated remembers a file that a run created, by descriptor, for
// keep_files: false (runner.Plan.Created).
func (d *Daemon) noteCreated(path string, c *target.CreatedFile, err error) {
	if err != nil {
		d.logger.Warn("a target file ioprobe created was renamed or replaced before its run ended; it will not be removed", "path", path, "err", err)
		return
	}
	d.createdMu.Lock()
	defer d.createdMu.Unlock()
	if old := d.created[path]; old != nil {
		old.Close()
	}
	d.created[path] = c
}

// removeCreated removes, for keep_files: false, each file the daemon's
// runs created, if its name still is that very file (device and inode,
// compared right before unlinking); a file that replaced it is left
// where it is, and the log says so.
func (d *Daemon) removeCreated() {
	keep := d.cfg.Load().Global.KeepFiles
	d.createdMu.Lock()
	defer d.createdMu.Unlock()
	for path, c := range d.created {
		delete(d.created, path)
		if keep {
			c.Close()
			continue
		}
		switch err := c.Remove(); {
		case errors.Is(err, target.ErrNotSameFile):
			d.logger.Warn("left a target file in place: it is no longer the file ioprobe created (keep_files: false)", "path", path, "err", err)
		case err != nil:
			d.logger.Warn("could not remove a target file ioprobe created", "path", path, "err", err)
		default:
			d.logger.Info("removed a target file ioprobe created (keep_files: false)", "path", path)
		}
	}
}

// infoDevices says what ioprobe_device_info describes: the configured
// targets' paths and the devices the devices list matches now.
func (d *Daemon) infoDevices() (paths, devices []string) {
	cfg := d.cfg.Load()
	for _, t := range cfg.Targets {
		paths = append(paths, t.Path)
	}
	sort.Strings(paths)
	return paths, d.devWatch.match(cfg.Devices)
}
