package result

import (
	"fmt"
	"math"
	"strings"
)

// Metric keys of a comparison (Delta.Metric), in the order they are
// shown: each ViewCompare figure's Key.
const (
	MetricIOPS        = "iops"
	MetricMBPerSecond = "mb_per_second"
	MetricLatencyMean = "latency_mean_seconds"
	MetricLatencyP99  = "latency_p99_seconds"
	MetricCPUPerIO    = "cpu_seconds_per_io"
)

// NoiseFactor sets the noise band: a difference is noise when it is within
// NoiseFactor × √(cv_base² + cv_other²), the coefficients of variation of
// the two sides (about a 95% band for normally distributed runs).
const NoiseFactor = 2.0

// CompareFigure is one figure of a comparison (ViewCompare).
type CompareFigure struct {
	ID FigureID
	// Else is compared when a side lacks ID (0 there): host CPU per I/O
	// falls back to process CPU per I/O.
	Else FigureID
	// ElseNote says so in the Delta's note.
	ElseNote string
	// Key names it in a Delta; "" is its CSV column.
	Key string
}

// MetricKey is the figure's key in a Delta.
func (c CompareFigure) MetricKey() string {
	if c.Key != "" {
		return c.Key
	}
	return c.ID.Figure().Column
}

// Label names the figure in a comparison: "IOPS", "p99 latency".
func (c CompareFigure) Label() string { return c.ID.Figure().Words }

// Higher says that a higher value is better.
func (c CompareFigure) Higher() bool { return c.ID.Figure().Better == HigherIsBetter }

// Delta is the relative difference of one figure between base and other.
type Delta struct {
	Metric string  `json:"metric"`
	Base   float64 `json:"base"`
	Other  float64 `json:"other"`
	// Pct is (other − base) ÷ base × 100; meaningless unless Valid.
	Pct   float64 `json:"pct"`
	Valid bool    `json:"valid"` // false when base is 0
	// NoisePct is the half-width of the noise band in percent (0: the
	// spread of neither side is known, so nothing is called noise).
	NoisePct float64 `json:"noise_pct"`
	Noise    bool    `json:"noise"`
	// Better says the difference is an improvement that is not noise;
	// Worse, a regression that is not noise.
	Better bool `json:"better"`
	Worse  bool `json:"worse"`
	// Note says how the figure was taken when it is not the obvious one
	// ("process CPU": host CPU was not measured on both sides).
	Note string `json:"note,omitempty"`
}

// PointDelta compares one point.
type PointDelta struct {
	Point     Point   `json:"point"`
	BaseSide  string  `json:"base_side,omitempty"`
	OtherSide string  `json:"other_side,omitempty"`
	Deltas    []Delta `json:"deltas"`
	// BaseSpread and OtherSpread name where each side's spread came from:
	// "repeat", "intervals" or "" (unknown).
	BaseSpread  string `json:"base_spread"`
	OtherSpread string `json:"other_spread"`
	// WorkloadDiffers says how the two sides' workloads differ when a
	// point of the same name ran different workloads ("QD/workers differ
	// (1/1 and 32/1)"): the difference is then not the storage's alone.
	WorkloadDiffers string `json:"workload_differs,omitempty"`
	// StorageDiffers says how the storage under the two sides' targets
	// differs ("disk scheduler: base mq-deadline, other none"): names of
	// devices and paths aside, the stack's shape and every setting
	// recorded (Target.StorageSettings).
	StorageDiffers []string `json:"storage_differs,omitempty"`
}

// Delta returns the delta of metric key.
func (p *PointDelta) Delta(key string) *Delta {
	for i := range p.Deltas {
		if p.Deltas[i].Metric == key {
			return &p.Deltas[i]
		}
	}
	return nil
}

// Comparison is base against other, point by point.
type Comparison struct {
	Points    []PointDelta `json:"points"`
	OnlyBase  []string     `json:"only_in_base,omitempty"`
	OnlyOther []string     `json:"only_in_other,omitempty"`
}

// Compare pairs the points of base and other and computes the relative
// difference of each figure. Points pair by section and name, and by
// target when both sides measured several targets (a side with one target
// pairs with any one target: comparing two devices is the point). A side
// holding the same point twice (several hosts) must be merged first.
func Compare(base, other []*Result) (*Comparison, error) {
	if mb, mo := multiTarget(base), multiTarget(other); mb != mo {
		return nil, fmt.Errorf("base measured %d targets in turn and other %d: compare files that measured one target each, or the same targets",
			len(targetsOf(base)), len(targetsOf(other)))
	}
	bIdx, bOrder, err := indexPoints("base", base, multiTarget(base) && multiTarget(other))
	if err != nil {
		return nil, err
	}
	oIdx, oOrder, err := indexPoints("other", other, multiTarget(base) && multiTarget(other))
	if err != nil {
		return nil, err
	}
	c := &Comparison{Points: []PointDelta{}}
	for _, k := range bOrder {
		b := bIdx[k]
		o, ok := oIdx[k]
		if !ok {
			c.OnlyBase = append(c.OnlyBase, label(b))
			continue
		}
		c.Points = append(c.Points, comparePoint(b, o))
	}
	for _, k := range oOrder {
		if _, ok := bIdx[k]; !ok {
			c.OnlyOther = append(c.OnlyOther, label(oIdx[k]))
		}
	}
	if len(c.Points) == 0 {
		return c, fmt.Errorf("no point in common (base has %s; other has %s)", listOr(c.OnlyBase), listOr(c.OnlyOther))
	}
	return c, nil
}

func label(r *Result) string {
	p := PointOf(r)
	if s := p.Side(); s != "" {
		return p.Name + " on " + s
	}
	return p.Name
}

func listOr(v []string) string {
	if len(v) == 0 {
		return "none"
	}
	if len(v) > 4 {
		return strings.Join(v[:4], ", ") + fmt.Sprintf(" and %d more", len(v)-4)
	}
	return strings.Join(v, ", ")
}

// targetsOf lists the targets rs measured in turn.
func targetsOf(rs []*Result) map[string]bool {
	seen := map[string]bool{}
	for _, r := range rs {
		if p := PointOf(r); p.Target != "" {
			seen[p.Target] = true
		}
	}
	return seen
}

// multiTarget says whether rs measured more than one target in turn.
func multiTarget(rs []*Result) bool { return len(targetsOf(rs)) > 1 }

func indexPoints(side string, rs []*Result, byTarget bool) (map[string]*Result, []string, error) {
	idx := map[string]*Result{}
	var order []string
	for _, r := range rs {
		p := PointOf(r)
		key := p.Key() + fmt.Sprintf("\x00%d", p.Targets)
		if byTarget {
			key += "\x00" + p.Target
		}
		if prev, dup := idx[key]; dup {
			return nil, nil, fmt.Errorf("%s holds point %s twice (hosts %s and %s): merge them first with 'ioprobe report --merge --output json'",
				side, label(r), prev.Host.Hostname, r.Host.Hostname)
		}
		idx[key] = r
		order = append(order, key)
	}
	return idx, order, nil
}

func comparePoint(b, o *Result) PointDelta {
	pb, po := PointOf(b), PointOf(o)
	pd := PointDelta{Point: pb, BaseSide: pb.Side(), OtherSide: po.Side(), WorkloadDiffers: shapeDiff(b, o),
		StorageDiffers: StorageDiffers(b, o, "base", "other")}
	sb, so := SpreadOf(b), SpreadOf(o)
	if sb != nil {
		pd.BaseSpread = sb.Source
	}
	if so != nil {
		pd.OtherSpread = so.Source
	}
	for _, m := range ViewCompare {
		d := Delta{Metric: m.MetricKey()}
		id := m.ID
		if m.Else != "" && !(Value(m.ID, &b.Summary) > 0 && Value(m.ID, &o.Summary) > 0) {
			id = m.Else
			d.Note = m.ElseNote
		}
		d.Base, d.Other = Value(id, &b.Summary), Value(id, &o.Summary)
		if d.Base > 0 && !math.IsInf(d.Base, 0) && !math.IsNaN(d.Other) {
			d.Valid = true
			d.Pct = (d.Other - d.Base) / d.Base * 100
		}
		cb, okb := relativeSpread(sb, id)
		co, oko := relativeSpread(so, id)
		switch {
		case okb && oko:
			d.NoisePct = NoiseFactor * math.Hypot(cb, co) * 100
		case okb:
			d.NoisePct = NoiseFactor * math.Sqrt2 * cb * 100
		case oko:
			d.NoisePct = NoiseFactor * math.Sqrt2 * co * 100
		}
		if d.Valid {
			d.Noise = d.NoisePct > 0 && math.Abs(d.Pct) <= d.NoisePct
			if !d.Noise && d.Pct != 0 {
				improved := (d.Pct > 0) == m.Higher()
				d.Better, d.Worse = improved, !improved
			}
		}
		pd.Deltas = append(pd.Deltas, d)
	}
	return pd
}

// relativeSpread is the coefficient of variation of one figure. Interval
// spreads have no CPU figures: CPU per I/O then varies as IOPS does.
func relativeSpread(s *Spread, id FigureID) (float64, bool) {
	if s == nil {
		return 0, false
	}
	st := s.Stat(id)
	if st == nil {
		return 0, false
	}
	if len(st.Values) == 0 && id.Figure().Unit == UnitCPUPerIO {
		st = &s.IOPS
	}
	return st.Relative()
}
