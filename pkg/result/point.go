package result

import (
	"fmt"
	"strings"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Point identifies the point of a suite a result measured, so that tables
// can pivot results (rows = data size, columns = pattern), and merge and
// compare can pair them, without knowing the suite.
type Point struct {
	// Suite is the suite's name ("characterize").
	Suite string `json:"suite,omitempty"`
	// Name is stable within the suite ("random-read-4k").
	Name string `json:"name"`
	// Section is the table or figure of the report the point feeds.
	Section string `json:"section,omitempty"`
	// Pattern is the reports' column ("Random Read", "File Server").
	Pattern string `json:"pattern"`
	// SizeBytes is the reports' row: the data size (0 for a mixed run).
	SizeBytes int64 `json:"size_bytes"`
	// Target is the --target the point ran on, when the suite ran on each
	// target in turn; empty when it ran on several at once.
	Target string `json:"target,omitempty"`
	// Targets is the number of targets a point ran on at once (scaling
	// over targets); 0 for one target in turn.
	Targets int `json:"targets,omitempty"`
	// Hosts is the number of hosts a fleet suite ran the point on, when
	// it cycled them (--cycle hosts=…: the esx35 Figure 5 scaling over
	// machines); 0 otherwise.
	Hosts int `json:"hosts,omitempty"`
	// Index is the point's position in the suite.
	Index int `json:"index"`
	// SameAs names the earlier point whose measurement this one reports:
	// the two have the same access specifications on the same targets
	// (peak-iops' 8 KiB random read at 32 outstanding is a request size
	// and one worker of the workers scaling), so it was measured once.
	SameAs string `json:"same_as,omitempty"`
}

// SectionRuns is the section of results that are not suite points.
const SectionRuns = "Runs"

// renamedSections maps the titles sections had in files written before
// to their titles now (the protocols suite's CPU-cost section said "8KB"
// for 8 KiB), so that Decode reads an old file's points as the same
// points: they merge and compare with points measured since.
var renamedSections = map[string]string{
	"CPU cost of an 8KB 50% read 50% random mix (esx35 Figure 6)": workload.SectionCPUCost,
}

// renameSections gives the points of rs, and of the hosts' results they
// carry, their sections' titles of today.
func renameSections(rs []*Result) {
	for _, r := range rs {
		if r == nil {
			continue
		}
		if r.Point != nil {
			if now, ok := renamedSections[r.Point.Section]; ok {
				r.Point.Section = now
			}
		}
		for i := range r.Hosts {
			renameSections([]*Result{r.Hosts[i].Result})
		}
	}
}

// PointOf returns r's point, or for a plain run (`ioprobe run`) one made
// from its workload: named after the workload, its pattern from % read and
// % random, its size the largest transfer.
func PointOf(r *Result) Point {
	if r.Point != nil {
		return *r.Point
	}
	w := r.Workload
	p := Point{Name: w.Name, Section: SectionRuns, Pattern: workload.PatternLabel(w.ReadPct, w.RandomPct)}
	for _, b := range w.BlockSizes {
		p.SizeBytes = max(p.SizeBytes, b.Bytes)
	}
	if len(r.Groups) > 1 {
		p.SizeBytes = 0
		p.Pattern = "Mixed"
	}
	if p.Name == "" {
		p.Name = fmt.Sprintf("%s %d", p.Pattern, p.SizeBytes)
	}
	switch len(r.Targets) {
	case 0:
	case 1:
		p.Target = r.Targets[0].Path
	default:
		p.Targets = len(r.Targets)
	}
	return p
}

// Key pairs the same point across files: section and name, and the
// number of hosts when a fleet suite cycled them.
func (p Point) Key() string {
	if p.Hosts > 0 {
		return fmt.Sprintf("%s\x00%s\x00%d hosts", p.Section, p.Name, p.Hosts)
	}
	return p.Section + "\x00" + p.Name
}

// Side is the target a point ran on, for side-by-side tables; "" for a
// point that ran on several targets at once (those scale over targets:
// the count is a dimension of their rows, not a side).
func (p Point) Side() string { return p.Target }

// runs is how many runs r stands for.
func runs(r *Result) int {
	if r.Merged != nil && r.Merged.Runs > 0 {
		return r.Merged.Runs
	}
	return 1
}

// hostsOf lists the hosts r was measured on.
func hostsOf(r *Result) []string {
	if r.Merged != nil && len(r.Merged.Hosts) > 0 {
		return r.Merged.Hosts
	}
	return []string{r.Host.Hostname}
}

func joinUnique(parts []string, sep string) string {
	seen := map[string]bool{}
	var out []string
	for _, p := range parts {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}
