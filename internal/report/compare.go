package report

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// CompareSide describes one file of a comparison for the header.
type CompareSide struct {
	File    string
	Results []*result.Result
}

// WriteCompareText writes a comparison as the esg report presents one:
// per workload point, the relative difference of other against base
// ("+13% IOPS, −4% p99 latency, +9% CPU per I/O"), with the differences
// that lie within the measured run-to-run spread marked as noise.
func WriteCompareText(w io.Writer, c *result.Comparison, base, other CompareSide) error {
	if c == nil {
		return errors.New("report: nil comparison")
	}
	ew := newErrWriter(w)
	ew.printf("ioprobe compare: other against base, (other − base) ÷ base\n")
	kv := &table{align: "ll"}
	kv.add("Base", describeSide(base))
	kv.add("Other", describeSide(other))
	kv.add("Noise", fmt.Sprintf("≈ marks a difference within %.0f × √(cv_base² + cv_other²), the coefficients of variation", result.NoiseFactor))
	kv.add("", "of the runs of --repeat, else of the run's 1-second intervals; \"?\" where neither is known")
	if ew.err == nil {
		ew.err = kv.write(ew.w, "")
	}

	t := &table{align: "llrrrrr"}
	hdr := []string{"Point", "Size"}
	for _, m := range result.ViewCompare {
		hdr = append(hdr, m.Label())
	}
	t.add(append(hdr, "Spread")...)
	section := ""
	for _, p := range c.Points {
		if p.Point.Section != section && len(sectionsOf(c)) > 1 {
			section = p.Point.Section
			t.add(section)
		}
		cells := []string{pointLabel(c, p), sizeLabel(p.Point.SizeBytes)}
		for _, d := range p.Deltas {
			cells = append(cells, deltaCell(d))
		}
		t.add(append(cells, spreadLabel(p))...)
	}
	ew.printf("\n")
	if ew.err == nil {
		ew.err = t.write(ew.w, "")
	}

	ew.printf("\nSummary\n")
	headline := result.CompareFigure{ID: result.ViewCompareHeadline}
	faster, slower, same := 0, 0, 0
	for _, p := range c.Points {
		ew.printf("  %s: %s\n", pointLabel(c, p), Sentence(p))
		switch d := p.Delta(headline.MetricKey()); {
		case d == nil || !d.Valid || d.Noise || d.Pct == 0:
			same++
		case d.Better:
			faster++
		default:
			slower++
		}
	}
	ew.printf("  %s: %d %s higher, %d lower, %d within the noise\n", headline.Label(), faster, plural(faster, "point", "points"), slower, same)
	if len(c.OnlyBase) > 0 {
		ew.printf("\nOnly in base: %s\n", strings.Join(c.OnlyBase, ", "))
	}
	if len(c.OnlyOther) > 0 {
		ew.printf("\nOnly in other: %s\n", strings.Join(c.OnlyOther, ", "))
	}
	for _, p := range c.Points {
		if p.WorkloadDiffers != "" {
			ew.printf("\nWarning: %s ran different workloads on the two sides (%s): the differences above are not the storage's alone\n",
				pointLabel(c, p), p.WorkloadDiffers)
		}
	}
	writeStorageDiffers(ew, c)
	var notes []string
	for _, p := range c.Points {
		for i, d := range p.Deltas {
			if n := result.ViewCompare[i].Label() + ": " + d.Note; d.Note != "" && !contains(notes, n) {
				notes = append(notes, n)
			}
		}
	}
	for _, n := range notes {
		ew.printf("\n%s\n", n)
	}
	return ew.err
}

func contains(v []string, s string) bool {
	for _, x := range v {
		if x == s {
			return true
		}
	}
	return false
}

func sectionsOf(c *result.Comparison) map[string]bool {
	s := map[string]bool{}
	for _, p := range c.Points {
		s[p.Point.Section] = true
	}
	return s
}

func describeSide(s CompareSide) string {
	var suites, hosts, targets []string
	for _, r := range s.Results {
		p := result.PointOf(r)
		suites = append(suites, p.Suite)
		hosts = append(hosts, r.Host.Hostname)
		targets = append(targets, p.Side())
	}
	parts := []string{}
	if v := joinDistinct(suites); v != "" {
		parts = append(parts, "suite "+v)
	}
	parts = append(parts, "host "+joinDistinct(hosts))
	if v := joinDistinct(targets); v != "" {
		parts = append(parts, v)
	}
	parts = append(parts, fmt.Sprintf("%d %s", len(s.Results), plural(len(s.Results), "result", "results")))
	return s.File + ": " + strings.Join(parts, ", ")
}

func joinDistinct(v []string) string {
	var out []string
	seen := map[string]bool{}
	for _, s := range v {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return strings.Join(out, ", ")
}

// pointLabel names a point, and the targets it pairs when they are not
// the same for every point (the header names those).
func pointLabel(c *result.Comparison, p result.PointDelta) string {
	l := p.Point.Name
	if !samePairs(c) && p.BaseSide != p.OtherSide && p.BaseSide != "" && p.OtherSide != "" {
		l += " (" + p.OtherSide + " vs " + p.BaseSide + ")"
	}
	return l
}

func samePairs(c *result.Comparison) bool {
	for _, p := range c.Points {
		if p.BaseSide != c.Points[0].BaseSide || p.OtherSide != c.Points[0].OtherSide {
			return false
		}
	}
	return true
}

func spreadLabel(p result.PointDelta) string {
	f := func(s string) string {
		if s == "" {
			return "?"
		}
		return s
	}
	if p.BaseSpread == p.OtherSpread {
		return f(p.BaseSpread)
	}
	return f(p.BaseSpread) + "/" + f(p.OtherSpread)
}

// signedPct writes a difference with a true minus sign, to the given
// decimals: "+13.2%", "−4.0%".
func signedPct(v float64, decimals int) string {
	s := num(math.Abs(v), decimals) + "%"
	switch {
	case strings.Trim(s, "0.%") == "":
		return "0%"
	case v < 0:
		return "−" + s
	}
	return "+" + s
}

func deltaCell(d result.Delta) string {
	if !d.Valid {
		return "n/a"
	}
	s := signedPct(d.Pct, 1)
	if d.Noise {
		return "≈" + s
	}
	if d.NoisePct == 0 && d.Pct != 0 {
		return s + "?"
	}
	return s
}

// Sentence says what changed beyond the noise, the esg way: "+13% IOPS,
// −4% p99 latency, +9% CPU per I/O". A figure that only echoes another
// (MB/s repeats IOPS at the same transfer size) is left out.
func Sentence(p result.PointDelta) string {
	var parts []string
	for i, d := range p.Deltas {
		if !d.Valid || d.Noise || d.Pct == 0 {
			continue
		}
		m := result.ViewCompare[i]
		if of, ok := result.ViewCompareEchoes[m.ID]; ok {
			if e := p.Delta(result.CompareFigure{ID: of}.MetricKey()); e != nil && e.Valid && math.Abs(e.Pct-d.Pct) < 0.5 {
				continue
			}
		}
		decimals := 0
		if math.Abs(d.Pct) < 1 {
			decimals = 1
		}
		parts = append(parts, signedPct(d.Pct, decimals)+" "+m.Label())
	}
	if len(parts) == 0 {
		return "no difference beyond the noise"
	}
	return strings.Join(parts, ", ")
}

// writeStorageDiffers says how the storage under the two sides differs
// (Comparison's storage_differs), each difference once: for every point,
// or for the points named.
func writeStorageDiffers(ew *errWriter, c *result.Comparison) {
	var order []string
	at := map[string][]string{}
	for _, p := range c.Points {
		for _, d := range p.StorageDiffers {
			if _, ok := at[d]; !ok {
				order = append(order, d)
			}
			at[d] = append(at[d], pointLabel(c, p))
		}
	}
	if len(order) == 0 {
		return
	}
	ew.printf("\nStorage differs: the differences above are not the devices' alone\n")
	for _, d := range order {
		if len(at[d]) == len(c.Points) {
			ew.printf("  %s\n", d)
			continue
		}
		ew.printf("  %s (%s)\n", d, strings.Join(at[d], ", "))
	}
}
