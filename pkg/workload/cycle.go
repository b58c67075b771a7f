package workload

import (
	"fmt"
	"strconv"
	"strings"
)

// Cycle dimensions: what `--cycle DIM=VALUES` may vary.
const (
	CycleQD      = "qd"      // outstanding I/Os per worker per target
	CycleWorkers = "workers" // workers
	CycleBS      = "bs"      // transfer size (one size per point)
	// CycleHosts is the number of hosts of `ioprobe fleet suite` (the
	// first N of its list); a suite on one host refuses it.
	CycleHosts = "hosts"
)

// MaxCycleHosts bounds a hosts= value.
const MaxCycleHosts = 1024

// MaxCycleValues bounds one --cycle list, so that a typo (qd=1..1000+1)
// is an error rather than a week-long suite.
const MaxCycleValues = 64

// Cycle is Iometer's "cycling": one dimension and the values a suite runs
// each point at.
type Cycle struct {
	Dim    string
	Values []int64
}

// ParseCycle reads DIM=VALUES, where DIM is qd, workers or bs and VALUES is
//
//	1,2,4,8      a list
//	1..32*2      exponential: start, then times the factor while <= end (1,2,4,8,16,32)
//	1..8+1       linear: start, then plus the step while <= end (1,2,…,8)
//
// For bs the numbers are sizes (4k..1m*2). The values must be valid for the
// dimension and are kept in the order given.
func ParseCycle(s string) (Cycle, error) {
	bad := func(format string, args ...any) (Cycle, error) {
		return Cycle{}, fieldErr("--cycle", strconv.Quote(s), format, args...)
	}
	dim, spec, ok := strings.Cut(strings.TrimSpace(s), "=")
	dim = strings.ToLower(strings.TrimSpace(dim))
	if !ok || spec == "" {
		return bad("want DIM=VALUES, e.g. qd=1,2,4,8, qd=1..32*2 or workers=1..8+1")
	}
	var parse func(string) (int64, error)
	var lo, hi int64
	switch dim {
	case CycleQD:
		parse, lo, hi = parseCount, 1, MaxQueueDepth
	case CycleWorkers:
		parse, lo, hi = parseCount, 1, MaxWorkers
	case CycleBS:
		parse, lo, hi = ParseSize, MinBlockSize, MaxBlockSize
	case CycleHosts:
		parse, lo, hi = parseCount, 1, MaxCycleHosts
	default:
		return bad("unknown dimension %q (want qd, workers or bs; hosts for a fleet suite)", dim)
	}
	var vals []int64
	if from, rest, isRange := strings.Cut(spec, ".."); isRange {
		i := strings.IndexAny(rest, "*+")
		if i < 0 {
			return bad("a range needs a step: %s..END*FACTOR or %s..END+STEP", from, from)
		}
		start, err1 := parse(strings.TrimSpace(from))
		end, err2 := parse(strings.TrimSpace(rest[:i]))
		stepText := strings.TrimSpace(rest[i+1:])
		step, err3 := parseCount(stepText)
		if dim == CycleBS && rest[i] == '+' {
			step, err3 = ParseSize(stepText) // a linear size step has a unit: 4k..64k+4k
		}
		for _, err := range []error{err1, err2, err3} {
			if err != nil {
				return bad("%v", err)
			}
		}
		if end < start {
			return bad("the range ends (%d) before it starts (%d)", end, start)
		}
		if rest[i] == '*' && step < 2 {
			return bad("the factor must be at least 2")
		}
		if rest[i] == '+' && step < 1 {
			return bad("the step must be at least 1")
		}
		for v := start; v <= end; {
			vals = append(vals, v)
			if len(vals) > MaxCycleValues {
				return bad("more than %d values", MaxCycleValues)
			}
			if rest[i] == '*' {
				v *= step
			} else {
				v += step
			}
		}
	} else {
		for _, part := range strings.Split(spec, ",") {
			v, err := parse(strings.TrimSpace(part))
			if err != nil {
				return bad("%v", err)
			}
			vals = append(vals, v)
		}
		if len(vals) > MaxCycleValues {
			return bad("more than %d values", MaxCycleValues)
		}
	}
	seen := map[int64]bool{}
	for _, v := range vals {
		if v < lo || v > hi {
			if dim == CycleBS {
				return bad("size %s must be between 512B and 64MiB", FormatSize(v))
			}
			return bad("%s %d must be between %d and %d", dim, v, lo, hi)
		}
		if dim == CycleBS && v%512 != 0 {
			return bad("size %s is not a multiple of 512 bytes", FormatSize(v))
		}
		if seen[v] {
			return bad("%d is listed twice", v)
		}
		seen[v] = true
	}
	return Cycle{Dim: dim, Values: vals}, nil
}

func parseCount(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number", s)
	}
	return v, nil
}

// String renders the cycle as a list ParseCycle reads back.
func (c Cycle) String() string {
	parts := make([]string, len(c.Values))
	for i, v := range c.Values {
		if c.Dim == CycleBS {
			parts[i] = FormatSize(v)
		} else {
			parts[i] = strconv.FormatInt(v, 10)
		}
	}
	return c.Dim + "=" + strings.Join(parts, ",")
}

// tag is the suffix a cycled value adds to a point's name: "-qd4", "-w8",
// "-64k".
func cycleTag(dim string, v int64) string {
	switch dim {
	case CycleQD:
		return "-qd" + strconv.FormatInt(v, 10)
	case CycleWorkers:
		return "-w" + strconv.FormatInt(v, 10)
	case CycleBS:
		return "-" + SizeSlug(v)
	}
	return ""
}

// SizeSlug is a size as point names spell it: "512b", "4k", "1m".
func SizeSlug(n int64) string {
	switch {
	case n >= MiB && n%MiB == 0:
		return strconv.FormatInt(n/MiB, 10) + "m"
	case n >= KiB && n%KiB == 0:
		return strconv.FormatInt(n/KiB, 10) + "k"
	}
	return strconv.FormatInt(n, 10) + "b"
}
