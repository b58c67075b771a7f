package config

import "fmt"

// builtinSuites resolves `suite:` names against the suites pkg/workload
// defines. pkg/workload has none yet (they are being added alongside
// `ioprobe suite`); until it has, every name is unknown and the message
// says why. When it exposes them, mapping each suite's runs to Points here
// is the only change the daemon needs: jobs, scheduling, metrics (one set
// of last-run gauges per point, told apart by their shape labels) and
// tests (see Options.Suites) already handle many points per job.
func builtinSuites(name string) ([]Point, error) {
	return nil, fmt.Errorf("unknown suite %q (this build of ioprobe defines no suites yet)", name)
}
