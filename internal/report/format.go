package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ioprobe/ioprobe/internal/textsafe"
)

// num formats v with the given decimals and thousands separators
// ("12,345.67"). NaN and Inf, which a hand-edited file could hold, read
// as "-".
func num(v float64, decimals int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if hasFrac {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

func count(n uint64) string { return num(float64(n), 0) }

// iec renders a byte count in binary units with a space: "512 B",
// "8 KiB", "1.5 GiB", "931.51 GiB" (exact when a unit divides it).
func iec(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	return iecUnits(float64(n))
}

// iecUnits is iec for a count of at least 1024 given as a float64 (a
// document's count near 2^64 is no int64).
func iecUnits(v float64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB"}
	u := -1
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f %s", v, units[u])
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".") + " " + units[u]
}

// satInt64 is v rounded to an int64, saturated at its bounds (NaN is 0):
// a figure from a document may be any float64, and Go's conversion of
// one out of range is whatever the machine gives (-2^63 on amd64).
func satInt64(v float64) int64 {
	v = math.Round(v)
	switch {
	case v != v:
		return 0
	case v >= math.MaxInt64:
		return math.MaxInt64
	case v <= math.MinInt64:
		return math.MinInt64
	}
	return int64(v)
}

// satUint64 is satInt64 for a uint64 (negative is 0).
func satUint64(v float64) uint64 {
	v = math.Round(v)
	switch {
	case v != v || v <= 0:
		return 0
	case v >= math.MaxUint64:
		return math.MaxUint64
	}
	return uint64(v)
}

// pct renders a share as a percentage with one decimal ("100.0%").
func pct(part, whole float64) string {
	if whole == 0 {
		return "-"
	}
	return num(100*part/whole, 1) + "%"
}

// table aligns columns: the first left, the others as align says ('l' or
// 'r'; missing means 'r'). A row with a single cell is a heading and does
// not widen the first column.
type table struct {
	align string
	rows  [][]string
}

// add adds a row. Cells hold what documents say (hostnames, paths,
// names): each is escaped (textsafe), so that none breaks the table's
// lines or acts on a terminal.
func (t *table) add(cells ...string) {
	row := make([]string, len(cells))
	for i, c := range cells {
		row[i] = textsafe.Escape(c)
	}
	t.rows = append(t.rows, row)
}

// addTable lays sub out in its own columns and adds each of its lines as
// one cell, the first under label (the "Targets" block of the headers).
func (t *table) addTable(label string, sub *table) {
	var b strings.Builder
	_ = sub.write(&b, "")
	for i, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if i > 0 {
			label = ""
		}
		t.add(label, line)
	}
}

func (t *table) write(w io.Writer, indent string) error {
	var widths []int
	for _, r := range t.rows {
		if len(r) == 1 {
			continue
		}
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range t.rows {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := 0
			if len(r) > 1 {
				pad = widths[i] - utf8.RuneCountInString(c)
			}
			left := i == 0 || (i < len(t.align) && t.align[i] == 'l')
			if !left {
				b.WriteString(strings.Repeat(" ", pad))
			}
			b.WriteString(c)
			if left && i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", pad))
			}
		}
		if _, err := io.WriteString(w, strings.TrimRight(b.String(), " ")+"\n"); err != nil {
			return err
		}
	}
	return nil
}
