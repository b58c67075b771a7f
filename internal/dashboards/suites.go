package dashboards

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// patterns lists the report columns of a suite (the workload label of its
// points) in the suite's own order, which is the report's. The dashboards
// take them from pkg/workload so a renamed pattern changes both together.
func patterns(suite string) ([]string, error) {
	s, err := workload.BuildSuite(suite, workload.SuiteOptions{Base: workload.Spec{Duration: time.Second}, Targets: 1})
	if err != nil {
		return nil, fmt.Errorf("suite %s: %w", suite, err)
	}
	var out []string
	for _, p := range s.Points {
		if !slices.Contains(out, p.Pattern) {
			out = append(out, p.Pattern)
		}
	}
	return out, nil
}

// anyOf is a PromQL regex matcher value for exactly these label values.
func anyOf(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		// The regex's backslashes are doubled for the PromQL string.
		q[i] = strings.ReplaceAll(regexp.QuoteMeta(v), `\`, `\\`)
	}
	return strings.Join(q, "|")
}
