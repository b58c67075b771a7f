package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// chart is one figure: grouped bars over categories, or lines over
// categories or a numeric x axis. Values that are NaN are not drawn
// (nothing was measured there).
type chart struct {
	id     string
	title  string
	xLabel string // with its unit
	yLabel string // with its unit
	lines  bool   // lines with markers instead of grouped bars
	logY   bool
	cats   []string // categorical x, in order
	// x holds numeric x positions (lines only) when cats is empty, with
	// xTicks labelling them.
	x      []float64
	xTicks []tick
	xUnit  string // follows a numeric x in tooltips (" s")
	series []series
	// unit follows a value in tooltips ("IOPS", "ms").
	unit     string
	decimals int
	// zeroLine draws y = 0 (relative differences go both ways).
	zeroLine bool
}

type series struct {
	name   string
	values []float64 // one per category or x
	// x, when set, gives this series its own numeric x positions (runs
	// whose intervals ended at different times).
	x []float64
}

// xOf is the numeric x of value i of series s.
func (c *chart) xOf(s *series, i int) float64 {
	if s.x != nil {
		return s.x[i]
	}
	return c.x[i]
}

type tick struct {
	pos   float64
	label string
}

// Okabe–Ito colours: distinguishable with the common colour-vision
// deficiencies and in greyscale print. Past eight, lines get dashes.
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#999933"}

var dashes = []string{"", "6 3", "2 3", "8 3 2 3"}

// Geometry of every chart, in SVG user units.
const (
	chartW      = 760
	chartH      = 340
	marginL     = 78
	marginR     = 190 // the legend
	marginT     = 34
	marginB     = 62
	plotW       = chartW - marginL - marginR
	plotH       = chartH - marginT - marginB
	legendX     = chartW - marginR + 16
	legendLineH = 18
)

// hasData reports whether any value of the chart can be drawn.
func (c *chart) hasData() bool {
	for _, s := range c.series {
		for _, v := range s.values {
			if drawable(v, c.logY) {
				return true
			}
		}
	}
	return false
}

func drawable(v float64, logY bool) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && (!logY || v > 0)
}

// yAxis is a linear or log10 scale with its ticks.
type yAxis struct {
	lo, hi float64
	log    bool
	ticks  []tick
}

func (a yAxis) pos(v float64) float64 {
	if a.log {
		v = math.Log10(v)
	}
	return marginT + plotH - (v-a.lo)/(a.hi-a.lo)*plotH
}

func (c *chart) yAxis() yAxis {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range c.series {
		for _, v := range s.values {
			if drawable(v, c.logY) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if c.logY {
		// Bounds and ticks at 1, 2 and 5 × 10^n, tight around the data.
		var steps []float64
		for e := math.Floor(math.Log10(lo)) - 1; e <= math.Ceil(math.Log10(hi))+1; e++ {
			for _, m := range []float64{1, 2, 5} {
				steps = append(steps, m*math.Pow(10, e))
			}
		}
		bottom, top := steps[0], steps[len(steps)-1]
		for _, v := range steps {
			if v <= lo*(1+1e-9) {
				bottom = v
			}
		}
		for i := len(steps) - 1; i >= 0; i-- {
			if steps[i] >= hi*(1-1e-9) {
				top = steps[i]
			}
		}
		if top <= bottom {
			top = bottom * 10
		}
		a := yAxis{log: true, lo: math.Log10(bottom), hi: math.Log10(top)}
		decades := a.hi - a.lo
		for _, v := range steps {
			if v < bottom*(1-1e-9) || v > top*(1+1e-9) {
				continue
			}
			// Past three decades, label the decades only.
			if m := v / math.Pow(10, math.Floor(math.Log10(v)+1e-9)); decades > 3 && math.Abs(m-1) > 1e-6 {
				continue
			}
			a.ticks = append(a.ticks, tick{math.Log10(v), axisNumber(v, v)})
		}
		return a
	}
	lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	if hi == lo {
		hi = lo + 1
	}
	step := niceStep((hi - lo) / 5)
	a := yAxis{lo: math.Floor(lo/step) * step, hi: math.Ceil(hi/step) * step}
	if a.hi == hi && hi > 0 {
		a.hi += step // head room above the tallest bar
	}
	for v := a.lo; v <= a.hi+step/2; v += step {
		a.ticks = append(a.ticks, tick{v, axisNumber(v, step)})
	}
	return a
}

// niceStep rounds a raw tick step to 1, 2 or 5 × 10^n.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// axisNumber labels a tick with as many decimals as its step needs.
func axisNumber(v, step float64) string {
	d := 0
	if step < 1 {
		d = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	if math.Abs(v) < step/1e6 {
		v = 0
	}
	return num(v, d)
}

func esc(s string) string { return html.EscapeString(s) }

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// svg renders the chart. Every drawn value carries its class ("bar" or
// "dot"), data-series and a <title> tooltip, so tests and readers can
// find the data.
func (c *chart) svg() string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" id="%s" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-labelledby="%s-title">`,
		esc(c.id), chartW, chartH, chartW, chartH, esc(c.id))
	fmt.Fprintf(&b, `<title id="%s-title">%s</title>`, esc(c.id), esc(c.title))
	fmt.Fprintf(&b, `<text class="title" x="%d" y="20">%s</text>`, marginL, esc(truncate(c.title, titleChars)))
	if !c.hasData() {
		fmt.Fprintf(&b, `<text class="empty" x="%d" y="%d">no data</text></svg>`, marginL+plotW/2, marginT+plotH/2)
		return b.String()
	}
	y := c.yAxis()
	// Grid and y ticks.
	for _, t := range y.ticks {
		py := y.pos(math.Pow(10, t.pos))
		if !y.log {
			py = y.pos(t.pos)
		}
		fmt.Fprintf(&b, `<line class="grid" x1="%d" y1="%s" x2="%d" y2="%s"/>`, marginL, f1(py), marginL+plotW, f1(py))
		fmt.Fprintf(&b, `<text class="tick y" x="%d" y="%s">%s</text>`, marginL-6, f1(py+4), esc(t.label))
	}
	if c.zeroLine && !y.log && y.lo < 0 {
		fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%s" x2="%d" y2="%s"/>`, marginL, f1(y.pos(0)), marginL+plotW, f1(y.pos(0)))
	}
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`, marginL, marginT+plotH, marginL+plotW, marginT+plotH)
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`, marginL, marginT, marginL, marginT+plotH)

	// X positions: category centres, or the numeric scale.
	n := len(c.cats)
	var cur *series // the series being drawn, for numeric x
	xpos := func(i int) float64 { return marginL + (float64(i)+0.5)*plotW/float64(n) }
	if n == 0 {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, x := range c.x {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
		for _, s := range c.series {
			for _, x := range s.x {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
		}
		for _, t := range c.xTicks {
			lo, hi = math.Min(lo, t.pos), math.Max(hi, t.pos)
		}
		if hi == lo {
			hi = lo + 1
		}
		xpos = func(i int) float64 { return marginL + (c.xOf(cur, i)-lo)/(hi-lo)*plotW }
		lastEnd := math.Inf(-1)
		for _, t := range c.xTicks {
			px := marginL + (t.pos-lo)/(hi-lo)*plotW
			half := float64(len([]rune(t.label))) * tickCharW / 2
			if px-half < lastEnd+4 {
				continue // would run into the previous label
			}
			lastEnd = px + half
			fmt.Fprintf(&b, `<line class="grid" x1="%s" y1="%d" x2="%s" y2="%d"/>`, f1(px), marginT, f1(px), marginT+plotH)
			fmt.Fprintf(&b, `<text class="tick x" x="%s" y="%d">%s</text>`, f1(px), marginT+plotH+16, esc(t.label))
		}
	}
	catLabels(&b, c.cats, xpos)
	fmt.Fprintf(&b, `<text class="x-label" x="%d" y="%d">%s</text>`, marginL+plotW/2, chartH-14, esc(c.xLabel))
	fmt.Fprintf(&b, `<text class="y-label" transform="translate(18 %d) rotate(-90)">%s</text>`, marginT+plotH/2, esc(c.yLabel))

	// Data.
	base := y.pos(math.Max(y.lo, 0))
	if y.log {
		base = marginT + plotH
	}
	for si := range c.series {
		s := &c.series[si]
		cur = s
		colour := palette[si%len(palette)]
		dash := dashes[(si/len(palette))%len(dashes)]
		fmt.Fprintf(&b, `<g class="series" data-series="%s">`, esc(s.name))
		if c.lines {
			var d strings.Builder
			pen := "M"
			for i, v := range s.values {
				if !drawable(v, c.logY) {
					pen = "M"
					continue
				}
				fmt.Fprintf(&d, "%s%s %s ", pen, f1(xpos(i)), f1(y.pos(v)))
				pen = "L"
			}
			fmt.Fprintf(&b, `<path class="line" d="%s" stroke="%s" stroke-dasharray="%s"/>`, strings.TrimSpace(d.String()), colour, dash)
			for i, v := range s.values {
				if !drawable(v, c.logY) || len(c.cats) == 0 && len(s.values) > 40 {
					continue
				}
				fmt.Fprintf(&b, `<circle class="dot" cx="%s" cy="%s" r="3.5" fill="%s"><title>%s</title></circle>`,
					f1(xpos(i)), f1(y.pos(v)), colour, esc(c.tooltip(s, i, v)))
			}
		} else {
			// Bars no wider than maxBar, so one lone bar does not fill the plot.
			w := math.Min(float64(plotW)/float64(n)*0.8/float64(len(c.series)), maxBar)
			group := w * float64(len(c.series))
			for i, v := range s.values {
				if !drawable(v, c.logY) {
					continue
				}
				x := xpos(i) - group/2 + float64(si)*w
				top, bottom := y.pos(v), base
				if top > bottom {
					top, bottom = bottom, top
				}
				fmt.Fprintf(&b, `<rect class="bar" x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`,
					f1(x), f1(top), f1(math.Max(w-1, 1)), f1(math.Max(bottom-top, 0.5)), colour, esc(c.tooltip(s, i, v)))
			}
		}
		b.WriteString(`</g>`)
	}

	// Legend: long names wrap onto a second line rather than run off.
	b.WriteString(`<g class="legend">`)
	ly := marginT + 8
	for si, s := range c.series {
		colour := palette[si%len(palette)]
		if c.lines {
			fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2.5" stroke-dasharray="%s"/>`,
				legendX, ly, legendX+18, ly, colour, dashes[(si/len(palette))%len(dashes)])
		} else {
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="14" height="12" fill="%s"/>`, legendX, ly-6, colour)
		}
		lines := wrap(s.name, legendChars, 2)
		fmt.Fprintf(&b, `<text class="legend-item" x="%d" y="%d">`, legendX+24, ly+4)
		for i, l := range lines {
			if i == 0 {
				fmt.Fprintf(&b, `<tspan>%s</tspan>`, esc(l))
			} else {
				fmt.Fprintf(&b, `<tspan x="%d" dy="14">%s</tspan>`, legendX+24, esc(l))
			}
		}
		b.WriteString(`</text>`)
		ly += legendLineH + 14*(len(lines)-1)
	}
	b.WriteString(`</g></svg>`)
	return b.String()
}

// tickCharW is the widest a tick label's average character is drawn at
// the ticks' 11px font (DejaVu Sans, the widest common sans-serif).
const tickCharW = 6.6

// catLabels writes the category labels under the x axis. A label wider
// than its slot wraps onto a second line and is cut with "…" beyond that
// (its full text stays in a <title>); when even a short word cannot fit,
// only every k-th category is labelled, so labels never run into each
// other.
func catLabels(b *strings.Builder, cats []string, xpos func(int) float64) {
	if len(cats) == 0 {
		return
	}
	slot := float64(plotW) / float64(len(cats))
	fit := int(slot/tickCharW) - 1
	every := 1
	if fit < 6 {
		// Label every k-th category, each with k slots of room.
		longest := 0
		for _, c := range cats {
			longest = max(longest, len([]rune(c)))
		}
		need := float64(min(longest, 10)+1) * tickCharW
		every = int(math.Ceil(need / slot))
		fit = int(slot*float64(every)/tickCharW) - 1
	}
	for i, cat := range cats {
		if i%every != 0 {
			continue
		}
		lines := wrap(cat, fit, 2)
		for j, l := range lines {
			lines[j] = truncate(l, fit)
		}
		fmt.Fprintf(b, `<text class="tick x" x="%s" y="%d">`, f1(xpos(i)), marginT+plotH+16)
		if len(lines) > 1 || lines[0] != cat {
			fmt.Fprintf(b, `<title>%s</title>`, esc(cat))
		}
		for j, l := range lines {
			if j == 0 {
				fmt.Fprintf(b, `<tspan>%s</tspan>`, esc(l))
			} else {
				fmt.Fprintf(b, `<tspan x="%s" dy="13">%s</tspan>`, f1(xpos(i)), esc(l))
			}
		}
		b.WriteString(`</text>`)
	}
}

// titleChars is what fits in a chart's title line; the full title stays
// in the chart's <title>.
const titleChars = 84

// maxBar is the widest a bar is drawn.
const maxBar = 64

// legendChars is what fits in the legend's 150 units at its 12px font
// (DejaVu Sans, the widest common sans-serif, averages about 7.3 units).
const legendChars = 19

// wrap breaks s at spaces into at most n lines of about width runes, the
// last one cut with "…" if it must be.
func wrap(s string, width, n int) []string {
	var lines []string
	cur := ""
	for _, w := range strings.Fields(s) {
		switch {
		case cur == "":
			cur = w
		case len([]rune(cur))+1+len([]rune(w)) <= width:
			cur += " " + w
		default:
			lines = append(lines, cur)
			cur = w
		}
	}
	lines = append(lines, cur)
	if len(lines) > n {
		lines[n-1] = strings.Join(lines[n-1:], " ")
		lines = lines[:n]
	}
	for i, l := range lines {
		lines[i] = truncate(l, width+2)
	}
	return lines
}

func (c *chart) tooltip(s *series, i int, v float64) string {
	at := ""
	switch {
	case i < len(c.cats):
		at = c.cats[i]
	case i < len(s.x) || i < len(c.x):
		x := c.xOf(s, i)
		at = strconv.FormatFloat(x, 'g', 4, 64) + c.xUnit
		for _, t := range c.xTicks {
			if t.pos == x {
				at = t.label
			}
		}
	}
	return fmt.Sprintf("%s, %s: %s %s", s.name, at, num(v, c.decimals), c.unit)
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimRight(string(r[:n-1]), " ") + "…"
}
