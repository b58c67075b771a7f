package exporter

import (
	"strings"

	"github.com/ioprobe/ioprobe/internal/config"
	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/runner"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// CheckRuns makes every check that each job's and module's runs would make
// before they start (runner.Check: engines, the target's kind, directory,
// filesystem and safety rules), creating and writing nothing, and returns
// what cannot start on this machine, placed in the config file.
func CheckRuns(cfg *config.Config, engines *engine.Registry) []config.Unstartable {
	d := &Daemon{opts: Options{Engines: engines}}
	d.cfg.Store(cfg)
	return d.checkRuns()
}

func (d *Daemon) checkRuns() []config.Unstartable {
	return d.cfg.Load().CheckRuns(func(t *config.Target, specs []workload.Spec) error {
		return runner.Check(d.settings(t, 0).Plan(targetUnit(t, "", specs)))
	})
}

// logUnstartable says, when the daemon starts or reloads, which jobs and
// modules cannot start as things are; they are tried all the same (with
// back-off), and the rest run.
func (d *Daemon) logUnstartable() {
	for _, u := range d.checkRuns() {
		d.logger.Error("cannot start until this is fixed; the rest run", "problem", u.Problem.String(),
			"jobs", strings.Join(u.Jobs, ","), "modules", strings.Join(u.Modules, ","))
	}
}
