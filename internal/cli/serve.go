package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/common/promslog"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ioprobe/ioprobe/internal/config"
	"github.com/ioprobe/ioprobe/internal/exporter"
	"github.com/ioprobe/ioprobe/internal/safefile"
	"github.com/ioprobe/ioprobe/internal/textsafe"
	"github.com/ioprobe/ioprobe/internal/version"
)

// DefaultListenAddress is where `ioprobe serve` listens by default.
const DefaultListenAddress = ":9816"

// serveOptions are the flags of `ioprobe serve`.
type serveOptions struct {
	configFile         string
	configCheck        string
	listenAddresses    []string
	webConfigFile      string
	systemdSocket      bool
	enableLifecycle    bool
	enableAdminAPI     bool
	probeTimeoutOffset time.Duration
	procfs             string
	logLevel           string
	logFormat          string
}

// AddFlags registers the flags, named as Prometheus exporters name them.
func (o *serveOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.configFile, "config", "", "daemon configuration file (YAML; see configs/ioprobe.yaml)")
	fs.StringVar(&o.configCheck, "config.check", "", "validate this configuration file, check its targets on this machine without writing, and exit (0: all can start, 2: not)")
	fs.StringArrayVar(&o.listenAddresses, "web.listen-address", []string{DefaultListenAddress}, "address to listen on for HTTP (repeat for several; vsock://:PORT for vsock)")
	fs.StringVar(&o.webConfigFile, "web.config.file", "", "exporter-toolkit web configuration file for TLS and basic auth")
	fs.BoolVar(&o.systemdSocket, "web.systemd-socket", false, "use systemd socket activation listeners instead of --web.listen-address")
	fs.BoolVar(&o.enableLifecycle, "web.enable-lifecycle", false, "allow POST /-/reload (SIGHUP always reloads)")
	fs.BoolVar(&o.enableAdminAPI, "web.enable-admin-api", false, "allow the endpoints that start I/O: POST /api/v1/jobs/NAME/run and the run API (POST/DELETE /api/v1/runs) that ioprobe fleet uses")
	fs.DurationVar(&o.probeTimeoutOffset, "probe.timeout-offset", exporter.DefaultProbeTimeoutOffset, "taken off Prometheus' scrape timeout to give a /probe its time budget")
	fs.StringVar(&o.procfs, "path.procfs", "/proc", "procfs mount point, for host CPU (the host's /proc when run in a container)")
	fs.StringVar(&o.logLevel, "log.level", "info", "log level: "+strings.Join(promslog.LevelFlagOptions, ", "))
	fs.StringVar(&o.logFormat, "log.format", "logfmt", "log format: "+strings.Join(promslog.FormatFlagOptions, ", "))
}

func newServeCommand(g *globalOptions) *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve --config FILE",
		Short: "Run as a long-lived Prometheus exporter: scheduled and continuous jobs, /metrics, /probe",
		Long: `ioprobe serve runs the jobs of its configuration file (scheduled, continuous
canaries, or on demand) and exports live I/O counters, latency histograms,
host CPU and each job's last-run figures on /metrics; /probe runs short
configured probes for Prometheus' multi-target pattern. SIGHUP reloads the
configuration; SIGTERM and SIGINT stop every run and exit 0.`,
		Example: `  ioprobe serve --config /etc/ioprobe/ioprobe.yaml
  ioprobe serve --config.check /etc/ioprobe/ioprobe.yaml
  ioprobe serve --config ioprobe.yaml --web.listen-address 127.0.0.1:9816 --web.enable-lifecycle`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// loadConfig loads a configuration file; a bad one is printed problem by
// problem on stderr and becomes exit status 2.
func loadConfig(g *globalOptions, path string) (*config.Config, error) {
	cfg, err := config.Load(path, config.Options{})
	if err == nil {
		return cfg, nil
	}
	var ce *config.Error
	if errors.As(err, &ce) {
		for _, p := range ce.Problems {
			fmt.Fprintf(g.stderr, "ioprobe: %s\n", p)
		}
		return nil, &exitError{code: ExitBadInput}
	}
	if safefile.IsBadInput(err) {
		return nil, err // names the config file and what is wrong with it
	}
	return nil, usagef("config: %v", err)
}

func (o *serveOptions) logger(g *globalOptions) (*promslog.Config, error) {
	lvl, format := promslog.NewLevel(), promslog.NewFormat()
	if err := lvl.Set(o.logLevel); err != nil {
		return nil, usagef("--log.level %s: want one of %s", o.logLevel, strings.Join(promslog.LevelFlagOptions, ", "))
	}
	if err := format.Set(o.logFormat); err != nil {
		return nil, usagef("--log.format %s: want one of %s", o.logFormat, strings.Join(promslog.FormatFlagOptions, ", "))
	}
	return &promslog.Config{Level: lvl, Format: format, Writer: g.terminal()}, nil
}

// runServe is `ioprobe serve`. It returns when ctx ends (SIGTERM, SIGINT):
// nil, exit status 0.
func runServe(ctx context.Context, g *globalOptions, o *serveOptions) error {
	if o.configCheck != "" {
		cfg, err := loadConfig(g, o.configCheck)
		if err != nil {
			return err
		}
		if bad := exporter.CheckRuns(cfg, g.engines); len(bad) > 0 {
			for _, u := range bad {
				fmt.Fprint(g.stderr, textsafe.Sprintf("ioprobe: %s\n", u.Problem))
			}
			return &exitError{code: ExitBadInput}
		}
		fmt.Fprint(g.stdout, textsafe.Sprintf("%s: ok: %s\n", o.configCheck, summary(cfg)))
		return nil
	}
	if o.configFile == "" {
		return usagef("--config is required (see 'ioprobe serve --help')")
	}
	lc, err := o.logger(g)
	if err != nil {
		return err
	}
	if o.probeTimeoutOffset < 0 {
		return usagef("--probe.timeout-offset %s: must not be negative", o.probeTimeoutOffset)
	}
	for _, a := range o.listenAddresses {
		if err := exporter.CheckListenAddress(a); err != nil {
			return usagef("--web.listen-address %s: %v", a, err)
		}
	}
	if err := exporter.CheckWebConfig(o.webConfigFile); err != nil {
		return usagef("--web.config.file %s: %v", o.webConfigFile, err)
	}
	// SIGHUP would end the process by default: catch it first.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	cfg, err := loadConfig(g, o.configFile)
	if err != nil {
		return err
	}
	logger := promslog.New(lc)
	logger.Info("ioprobe serve", "version", version.Version, "revision", version.Revision(), "go", version.GoVersion())
	d, err := exporter.New(exporter.Options{
		Config:   cfg,
		Load:     func() (*config.Config, error) { return config.Load(o.configFile, config.Options{}) },
		Engines:  g.engines,
		Logger:   logger,
		ProcRoot: o.procfs,
		Web: exporter.WebOptions{
			ListenAddresses: o.listenAddresses,
			ConfigFile:      o.webConfigFile,
			SystemdSocket:   o.systemdSocket,
			EnableLifecycle: o.enableLifecycle,
			EnableAdminAPI:  o.enableAdminAPI,
		},
		ProbeTimeoutOffset: o.probeTimeoutOffset,
	})
	if err != nil {
		return err
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-hup:
				logger.Info("SIGHUP: reloading the configuration")
				_ = d.Reload() // a bad file is logged and changes nothing
			case <-done:
				return
			}
		}
	}()
	return d.Run(ctx)
}

// summary describes a valid configuration in one line.
func summary(cfg *config.Config) string {
	names := func(m map[string]bool) string {
		var out []string
		for n := range m {
			out = append(out, n)
		}
		sort.Strings(out)
		return strings.Join(out, ", ")
	}
	jobs := map[string]bool{}
	for n, j := range cfg.Jobs {
		jobs[fmt.Sprintf("%s (%s)", n, j.Mode)] = true
	}
	mods := map[string]bool{}
	for n := range cfg.Modules {
		mods[n] = true
	}
	s := fmt.Sprintf("%d target(s), %d job(s) [%s], %d module(s) [%s]", len(cfg.Targets), len(cfg.Jobs), names(jobs), len(cfg.Modules), names(mods))
	if cfg.API.Given {
		l := cfg.API.Runs
		s += fmt.Sprintf(", run API runs up to %s (ramp %s), qd %d, %d workers, start %s ahead, writes %t, %d kept",
			l.MaxDuration, l.MaxRamp, l.MaxQueueDepth, l.MaxWorkers, l.MaxStartDelay, l.AllowWrites, l.Keep)
	}
	return s
}
