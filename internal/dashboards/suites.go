package dashboards

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// suitePoints are a suite's points as a daemon job runs them (one target).
// The dashboards take them from pkg/workload so a renamed pattern changes
// both together.
func suitePoints(suite string) ([]workload.SuitePoint, error) {
	s, err := workload.BuildSuite(suite, workload.SuiteOptions{Base: workload.Spec{Duration: time.Second}, Targets: 1})
	if err != nil {
		return nil, fmt.Errorf("suite %s: %w", suite, err)
	}
	return s.Points, nil
}

// patterns lists the report columns of a suite (the workload label of its
// points) in the suite's own order, which is the report's.
func patterns(suite string) ([]string, error) {
	points, err := suitePoints(suite)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range points {
		out = addOnce(out, p.Pattern)
	}
	return out, nil
}

// addOnce appends v to list unless list has it.
func addOnce(list []string, v string) []string {
	if slices.Contains(list, v) {
		return list
	}
	return append(list, v)
}

// sectionFilter selects the points of one section of a suite by the labels
// that set them apart from the suite's other points, workload and workers
// (peak-iops' random reads by request size share their patterns with its
// 8 KiB points over workers): matchers to append to a selector.
func sectionFilter(suite, section string) (string, error) {
	points, err := suitePoints(suite)
	if err != nil {
		return "", err
	}
	var pats, workers []string
	for _, p := range points {
		if p.Section != section {
			continue
		}
		// A mixed run's workers label joins its specifications' ("1+1").
		w := make([]string, len(p.Specs))
		for i, s := range p.Specs {
			w[i] = strconv.Itoa(s.Workers)
		}
		pats, workers = addOnce(pats, p.Pattern), addOnce(workers, strings.Join(w, "+"))
	}
	if len(pats) == 0 {
		return "", fmt.Errorf("suite %s has no section %q", suite, section)
	}
	return fmt.Sprintf(`, workload=~"%s", workers=~"%s"`, anyOf(pats), anyOf(workers)), nil
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
