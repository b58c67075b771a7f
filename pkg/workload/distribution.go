package workload

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Random distributions (Spec.RandomDistribution): fio's
// random_distribution, by its names. The uniform one is "" (fio's
// "random").
const (
	DistZipf     = "zipf"
	DistPareto   = "pareto"
	DistNormal   = "normal"
	DistZoned    = "zoned"
	DistZonedAbs = "zoned_abs"
)

// Random generators (Spec.RandomGenerator): fio's random_generator.
// tausworthe and tausworthe64 draw uniform offsets with repeats, as
// ioprobe's own generator does (""); lfsr visits every block once per
// pass in a scrambled order, without a map.
const GeneratorLFSR = "lfsr"

// maxZones bounds a zoned distribution's zones per direction (fio's
// ZONESPLIT_MAX).
const maxZones = 256

// Distribution is a random distribution of offsets as fio defines it
// (lib/zipf.c, lib/gauss.c, io_u.c), parsed from Spec.RandomDistribution.
type Distribution struct {
	Kind string
	// Value is zipf's theta, pareto's h or normal's deviation (a
	// percentage of the region); Center places the hot spot at that
	// fraction of the region (-1: none given, fio then starts it at a
	// random block for zipf and pareto, at the middle for normal).
	Value  float64
	Center float64
	// Zones are a zoned distribution's zones for reads and for writes.
	Zones [2][]Zone
}

// Zone is one zone of a zoned distribution: AccessPct of the random I/Os
// of its direction go, uniformly, to its part of the region: the next
// SizePct percent of it (zoned), or the next Bytes bytes (zoned_abs).
type Zone struct {
	AccessPct int
	SizePct   int
	Bytes     int64
}

// ParseDistribution reads Spec.RandomDistribution: "" (uniform),
// "zipf:THETA[:CENTER]", "pareto:H[:CENTER]", "normal:DEV[:CENTER]",
// "zoned:A/S:A/S…[,A/S…]" (percentages of the random I/Os and of the
// region, reads then writes after a comma) or "zoned_abs:A/BYTES:…[,…]".
// Zones are written as fio normalises them: every percentage given.
func ParseDistribution(s string) (Distribution, error) {
	d := Distribution{Center: -1}
	if s == "" {
		return d, nil
	}
	kind, rest, _ := strings.Cut(s, ":")
	d.Kind = kind
	switch kind {
	case DistZipf, DistPareto, DistNormal:
		val, center, hasCenter := strings.Cut(rest, ":")
		v, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return d, fmt.Errorf("%q: %s needs a number", s, kind)
		}
		d.Value = v
		if hasCenter {
			c, err := strconv.ParseFloat(center, 64)
			if err != nil || !(c >= 0 && c <= 1) {
				return d, fmt.Errorf("%q: the center must be between 0 and 1 (fio's 0 <= center <= 1.0)", s)
			}
			d.Center = c
		}
		switch {
		case kind == DistZipf && (v == 1 || v <= 0 || v > 100):
			return d, fmt.Errorf("%q: zipf's theta must be more than 0, at most 100 and not 1 (fio: \"zipf theta must different than 1.0\")", s)
		case kind == DistPareto && !(v > 0 && v < 1):
			return d, fmt.Errorf("%q: pareto's h must be between 0 and 1, both excluded (fio's 0 < input < 1.0)", s)
		case kind == DistNormal && !(v >= 0 && v < 100):
			return d, fmt.Errorf("%q: normal's deviation must be from 0 to below 100 (fio's 0 <= input < 100.0)", s)
		}
	case DistZoned, DistZonedAbs:
		dirs := strings.Split(rest, ",")
		if len(dirs) > 2 {
			return d, fmt.Errorf("%q: zones for reads and writes only (one comma)", s)
		}
		for i := range 2 {
			part := dirs[min(i, len(dirs)-1)]
			z, err := parseZones(part, kind == DistZonedAbs)
			if err != nil {
				return d, fmt.Errorf("%q: %v", s, err)
			}
			d.Zones[i] = z
		}
	default:
		return d, fmt.Errorf("%q: fio's random distributions are random, zipf, pareto, normal, zoned and zoned_abs", s)
	}
	return d, nil
}

// parseZones reads one direction's zones: "A/S:A/S…".
func parseZones(s string, abs bool) ([]Zone, error) {
	var out []Zone
	access, size := 0, 0
	var bytes int64
	for _, part := range strings.Split(s, ":") {
		a, b, ok := strings.Cut(part, "/")
		if !ok {
			return nil, fmt.Errorf("zone %q: want ACCESS%%/SIZE", part)
		}
		pa, err := strconv.Atoi(a)
		if err != nil || pa < 0 || pa > 100 {
			return nil, fmt.Errorf("zone %q: the access percentage must be 0 to 100", part)
		}
		z := Zone{AccessPct: pa}
		if abs {
			z.Bytes, err = strconv.ParseInt(b, 10, 64)
			if err != nil || z.Bytes < 0 || z.Bytes > math.MaxInt64-bytes {
				return nil, fmt.Errorf("zone %q: the size must be a number of bytes, the zones' sum at most %d", part, int64(math.MaxInt64))
			}
			bytes += z.Bytes
		} else {
			z.SizePct, err = strconv.Atoi(b)
			if err != nil || z.SizePct < 0 || z.SizePct > 100 {
				return nil, fmt.Errorf("zone %q: the size percentage must be 0 to 100", part)
			}
			size += z.SizePct
		}
		access += pa
		out = append(out, z)
		if len(out) > maxZones {
			return nil, fmt.Errorf("at most %d zones (fio's limit)", maxZones)
		}
	}
	switch {
	case access != 100:
		return nil, fmt.Errorf("the access percentages add up to %d, not 100 (fio refuses it)", access)
	case size > 100:
		return nil, fmt.Errorf("the size percentages add up to %d, more than 100 (fio refuses it)", size)
	}
	return out, nil
}

// String writes the distribution as ParseDistribution reads it.
func (d Distribution) String() string {
	switch d.Kind {
	case "":
		return ""
	case DistZoned, DistZonedAbs:
		var dirs []string
		for _, zs := range d.Zones {
			var parts []string
			for _, z := range zs {
				if d.Kind == DistZonedAbs {
					parts = append(parts, fmt.Sprintf("%d/%d", z.AccessPct, z.Bytes))
				} else {
					parts = append(parts, fmt.Sprintf("%d/%d", z.AccessPct, z.SizePct))
				}
			}
			dirs = append(dirs, strings.Join(parts, ":"))
		}
		if dirs[0] == dirs[1] {
			dirs = dirs[:1]
		}
		return d.Kind + ":" + strings.Join(dirs, ",")
	}
	s := d.Kind + ":" + strconv.FormatFloat(d.Value, 'g', -1, 64)
	if d.Center >= 0 {
		s += ":" + strconv.FormatFloat(d.Center, 'g', -1, 64)
	}
	return s
}

// ZonesEnd is the end of a zoned_abs distribution's last zone in bytes,
// the largest of the two directions' (0 for any other distribution).
func (d Distribution) ZonesEnd() int64 {
	if d.Kind != DistZonedAbs {
		return 0
	}
	var end int64
	for _, zs := range d.Zones {
		var sum int64
		for _, z := range zs {
			sum += z.Bytes
		}
		end = max(end, sum)
	}
	return end
}

// validateDistribution checks the random distribution and generator: one
// ParseDistribution reads, no random map beside them (fio turns it off),
// offsets on the smallest transfer (fio draws blocks of it and places
// them at multiples of blockalign, past the region's end otherwise), and
// lfsr, which fio's zones do not bound, without zones.
func (s *Spec) validateDistribution() error {
	if s.RandomDistribution == "" && s.RandomGenerator == "" {
		return nil
	}
	d, err := ParseDistribution(s.RandomDistribution)
	if err != nil {
		return fieldErr("random_distribution", s.RandomDistribution, "%v", err)
	}
	if s.RandomGenerator != "" && s.RandomGenerator != GeneratorLFSR {
		return fieldErr("random_generator", s.RandomGenerator, "must be empty (tausworthe, fio's default) or %q", GeneratorLFSR)
	}
	if s.RandomMap {
		return fieldErr("random_map", true, "fio keeps no random map with a non-uniform random_distribution or random_generator=lfsr")
	}
	if (d.Kind == DistZoned || d.Kind == DistZonedAbs) && s.RandomGenerator == GeneratorLFSR {
		return fieldErr("random_generator", s.RandomGenerator, "with %s: fio's lfsr then runs over the whole region whatever the zones say", d.Kind)
	}
	// zipf, pareto and normal draw blocks of the smallest transfer and
	// fio places them at multiples of blockalign; zones are in blocks of
	// blockalign.
	if d.Kind == DistZipf || d.Kind == DistPareto || d.Kind == DistNormal {
		minBlock := s.MinBlock()
		for _, l := range s.Normalized() {
			if l.Align != 0 && l.Align != minBlock {
				return fieldErr("random_distribution", s.RandomDistribution, "needs offsets aligned to the smallest transfer size: fio draws blocks of it and places them at multiples of blockalign, past the region's end")
			}
		}
		if s.Align != 0 && s.Align != minBlock {
			return fieldErr("random_distribution", s.RandomDistribution, "needs offsets aligned to the smallest transfer size: fio draws blocks of it and places them at multiples of blockalign, past the region's end")
		}
	}
	if end := d.ZonesEnd(); s.RegionBytes > 0 && end > s.RegionBytes {
		return fieldErr("random_distribution", s.RandomDistribution, "the zones end at %d bytes, past the region's %d (fio: \"zoned_abs sizes exceed file size\")", end, s.RegionBytes)
	}
	return nil
}
