package workload

import (
	"fmt"
	"strconv"
	"strings"
)

// Line is one line of an access specification, Iometer's way: its own
// transfer size, share of the specification's I/Os, % read, % random,
// alignment, and Iometer's transfer delay and burst length. A
// specification written with today's fields (--bs 4k:70,64k:30 with one
// --read-pct and --random-pct) is the one-line case: one Line per size,
// its weight as the share (Spec.Normalized).
//
// Iometer's reply size has no meaning for storage (it is the size of a
// network worker's reply) and has no field here; importers refuse a
// non-zero one.
type Line struct {
	Bytes     int64 `json:"bytes"`      // transfer size
	Share     int   `json:"share"`      // % of the specification; shares of a written spec sum to 100
	ReadPct   int   `json:"read_pct"`   // % of this line's I/Os that read
	RandomPct int   `json:"random_pct"` // % of this line's I/Os at a random offset
	// Align is the offset alignment of this line's I/Os in bytes; 0 means
	// the spec's default as today: the smallest transfer size of the spec.
	Align int64 `json:"align_bytes,omitempty"`
	// DelayMs is Iometer's transfer delay: ms a worker waits before each
	// burst of this line's I/Os (0: none).
	DelayMs int `json:"delay_ms,omitempty"`
	// Burst is Iometer's burst length: how many I/Os of this line a worker
	// issues back to back before the next delay (0 and 1: one).
	Burst int `json:"burst,omitempty"`
}

// Limits of a multi-line specification, checked by Validate.
const (
	MaxLines   = 100       // Iometer's editor has no limit; 100 catches a runaway generator
	MaxDelayMs = 3_600_000 // one hour between bursts
	MaxBurst   = 1_000_000 // I/Os per burst
	TotalShare = 100       // the shares of a written multi-line spec
	lineFlag   = "--line"  // the flag Validate names for a line
)

// BurstLen returns how many I/Os of the line make one burst (at least 1).
func (l Line) BurstLen() int {
	if l.Burst < 1 {
		return 1
	}
	return l.Burst
}

// Normalized returns the lines the spec runs, whichever way it was
// written: Lines when set, else one line per transfer size of BlockSizes
// with its weight as the share and the spec's ReadPct, RandomPct and
// Align. Shares are relative weights for the engine: those of a written
// multi-line spec sum to 100, those of a block-size mix are its weights.
// The returned slice is the caller's.
func (s *Spec) Normalized() []Line {
	if len(s.Lines) > 0 {
		return append([]Line(nil), s.Lines...)
	}
	out := make([]Line, len(s.BlockSizes))
	for i, b := range s.BlockSizes {
		out[i] = Line{Bytes: b.Bytes, Share: b.Weight, ReadPct: s.ReadPct, RandomPct: s.RandomPct, Align: s.Align}
	}
	return out
}

// OneLineForm reports whether the spec's lines can be written with
// today's fields (BlockSizes, ReadPct, RandomPct, Align): every line has
// the same % read, % random and alignment, no delay and no burst, and no
// size appears twice. Results carry "lines" only for a spec that cannot.
func (s *Spec) OneLineForm() bool {
	if len(s.Lines) == 0 {
		return true
	}
	first := s.Lines[0]
	seen := map[int64]bool{}
	for _, l := range s.Lines {
		if l.ReadPct != first.ReadPct || l.RandomPct != first.RandomPct || l.Align != first.Align ||
			l.DelayMs != 0 || l.BurstLen() != 1 || seen[l.Bytes] {
			return false
		}
		seen[l.Bytes] = true
	}
	return true
}

// validateLines checks a written multi-line specification and names the
// first bad line (numbered from 1, as the command line lists them).
func (s *Spec) validateLines() error {
	if len(s.BlockSizes) > 0 {
		return specErr(FieldLines, FormatLine(s.Lines[0]), "cannot be combined with --bs: a specification is written either as lines or as a block-size mix")
	}
	if s.ReadPct != 0 || s.RandomPct != 0 || s.Align != 0 {
		return specErr(FieldLines, FormatLine(s.Lines[0]), "cannot be combined with --read-pct, --random-pct or --align: give them per line (read=, random=, align=)")
	}
	if len(s.Lines) > MaxLines {
		return specErr(FieldLines, len(s.Lines), "at most %d lines", MaxLines)
	}
	total, shares := 0, make([]string, 0, len(s.Lines))
	for i, l := range s.Lines {
		name := fmt.Sprintf("%s %d", lineFlag, i+1)
		lineErr := func(value any, format string, args ...any) error {
			e := fieldErr(name, value, format, args...).(*FieldError)
			e.Spec, e.Line = FieldLines, i+1
			return e
		}
		switch {
		case s.sizeProblem(l.Bytes) != "":
			return lineErr(FormatSize(l.Bytes), "transfer size %s", s.sizeProblem(l.Bytes))
		case l.Share < 0 || l.Share > TotalShare:
			return lineErr("share="+strconv.Itoa(l.Share), "must be between 0 and 100 (%% of the specification)")
		case l.ReadPct < 0 || l.ReadPct > 100:
			return lineErr("read="+strconv.Itoa(l.ReadPct), "must be between 0 and 100")
		case l.RandomPct < 0 || l.RandomPct > 100:
			return lineErr("random="+strconv.Itoa(l.RandomPct), "must be between 0 and 100")
		case l.Align != 0 && (l.Align < 1 || l.Align > MaxBlockSize || (!s.Buffered && (l.Align < 512 || l.Align%512 != 0))):
			return lineErr("align="+FormatSize(l.Align), "must be a multiple of 512 bytes up to 64MiB")
		case l.DelayMs < 0 || l.DelayMs > MaxDelayMs:
			return lineErr("delay="+strconv.Itoa(l.DelayMs), "must be between 0 and %d ms", MaxDelayMs)
		case l.Burst < 0 || l.Burst > MaxBurst:
			return lineErr("burst="+strconv.Itoa(l.Burst), "must be between 0 and %d I/Os", MaxBurst)
		}
		total += l.Share
		shares = append(shares, strconv.Itoa(l.Share))
	}
	if total != TotalShare {
		return specErr(FieldLines, "share="+strings.Join(shares, "+"), "the shares sum to %d, must sum to 100 (%% of the specification, as in Iometer)", total)
	}
	return nil
}

// lineAlign returns the alignment a line's random offsets use: its own,
// else the spec's default (the smallest transfer size), as today.
func lineAlign(l Line, minBlock int64) int64 {
	if l.Align > 0 {
		return l.Align
	}
	return minBlock
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// FormatLine renders a line the way ParseLine reads it back:
// "4KiB,share=10,read=67,random=100" plus align=, delay=, burst= when set.
func FormatLine(l Line) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s,share=%d,read=%d,random=%d", FormatSize(l.Bytes), l.Share, l.ReadPct, l.RandomPct)
	if l.Align != 0 {
		b.WriteString(",align=" + FormatSize(l.Align))
	}
	if l.DelayMs != 0 {
		b.WriteString(",delay=" + strconv.Itoa(l.DelayMs))
	}
	if l.Burst != 0 {
		b.WriteString(",burst=" + strconv.Itoa(l.Burst))
	}
	return b.String()
}

// ParseLine reads one --line value: a transfer size, then key=value
// fields in any order: share (% of the specification), read (% read),
// random (% random), align (a size), delay (ms before each burst), burst
// (I/Os per burst). "4k,share=10,read=67,random=100,align=4k". A missing
// share is 100 (a spec of one line); missing read and random are 100, as
// ioprobe's own default (a random read).
func ParseLine(v string) (Line, error) {
	parts := strings.Split(v, ",")
	size := strings.TrimSpace(parts[0])
	if size == "" || strings.Contains(size, "=") {
		return Line{}, specErr(FieldLines, strconv.Quote(v), "must start with a transfer size (want e.g. 4k,share=10,read=67,random=100)")
	}
	n, err := ParseSize(size)
	if err != nil {
		return Line{}, specErr(FieldLines, strconv.Quote(v), "%v", err)
	}
	l := Line{Bytes: n, Share: TotalShare, ReadPct: 100, RandomPct: 100}
	seen := map[string]bool{}
	for _, p := range parts[1:] {
		k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
		k = strings.ToLower(strings.TrimSpace(k))
		val = strings.TrimSpace(val)
		if !ok || val == "" {
			return Line{}, specErr(FieldLines, strconv.Quote(v), "%q is not key=value (keys: share, read, random, align, delay, burst)", p)
		}
		if seen[k] {
			return Line{}, specErr(FieldLines, strconv.Quote(v), "%s given twice", k)
		}
		seen[k] = true
		if k == "align" {
			if l.Align, err = ParseSize(val); err != nil {
				return Line{}, specErr(FieldLines, strconv.Quote(v), "align: %v", err)
			}
			continue
		}
		var dst *int
		switch k {
		case "share":
			dst = &l.Share
		case "read":
			dst = &l.ReadPct
		case "random":
			dst = &l.RandomPct
		case "delay":
			dst = &l.DelayMs
		case "burst":
			dst = &l.Burst
		default:
			return Line{}, specErr(FieldLines, strconv.Quote(v), "unknown key %q (keys: share, read, random, align, delay, burst)", k)
		}
		x, err := strconv.Atoi(strings.TrimSuffix(val, "%"))
		if err != nil {
			return Line{}, specErr(FieldLines, strconv.Quote(v), "%s=%s is not a whole number", k, val)
		}
		*dst = x
	}
	return l, nil
}

// Mix summarises the spec in today's one-line vocabulary, for what shows
// one figure per run (result.workload's block_sizes, read_pct and
// random_pct, the exporter's labels, the reports' tables): each transfer
// size with the sum of its lines' shares as the weight, and the % read and
// % random of the whole specification (its lines' percentages weighted by
// share, rounded). A line's weight is its share times its burst length:
// Iometer draws a line per burst, so that is its part of the I/Os. For a
// spec written with BlockSizes it returns those fields as they are.
func (s *Spec) Mix() (sizes []BlockSize, readPct, randomPct int) {
	if len(s.Lines) == 0 {
		return append([]BlockSize(nil), s.BlockSizes...), s.ReadPct, s.RandomPct
	}
	var total, reads, randoms int
	for _, l := range s.Lines {
		w := l.Share * l.BurstLen()
		total += w
		reads += w * l.ReadPct
		randoms += w * l.RandomPct
		i := 0
		for i < len(sizes) && sizes[i].Bytes != l.Bytes {
			i++
		}
		if i == len(sizes) {
			sizes = append(sizes, BlockSize{Bytes: l.Bytes})
		}
		sizes[i].Weight += w
	}
	if total == 0 {
		return sizes, 0, 0
	}
	return sizes, (reads + total/2) / total, (randoms + total/2) / total
}
