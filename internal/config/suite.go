package config

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// builtinSuites resolves `suite:` names against the suites pkg/workload
// defines: the same points `ioprobe suite NAME` runs on one target. The
// job's duration, ramp, size and engine are applied to every point by the
// caller.
func builtinSuites(name string) ([]Point, error) {
	if name == workload.CustomSuite {
		return nil, fmt.Errorf("the %q suite takes run's flags on the command line; give the job workload fields and a profile instead", name)
	}
	var known []string
	for _, n := range workload.SuiteNames() {
		if n != workload.CustomSuite {
			known = append(known, n)
		}
	}
	if !slices.Contains(known, name) {
		return nil, fmt.Errorf("unknown suite %q (known: %s)", name, strings.Join(known, ", "))
	}
	s, err := workload.BuildSuite(name, workload.SuiteOptions{Base: workload.Spec{Duration: time.Second}, Targets: 1})
	if err != nil {
		return nil, err
	}
	var out []Point
	for _, p := range s.Points {
		out = append(out, Point{Name: p.Name, Pattern: p.Pattern, Size: p.Size, Specs: p.Specs})
	}
	return out, nil
}
