package fiojob

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// random is how a job draws its random offsets: fio's random_distribution
// and random_generator.
type random struct {
	dist      workload.Distribution // Kind "": uniform (fio's random)
	distAt    option
	generator string // "", or workload.GeneratorLFSR
	genAt     option
}

func init() {
	handlers["random_distribution"] = (*job).setDistribution
	handlers["random_generator"] = (*job).setGenerator
}

// setDistribution reads random_distribution as fio's
// str_random_distribution_cb does: the name matched up to the first ','
// (else ':') exactly, then a value and a center after colons, or zones.
func (j *job) setDistribution(o option) error {
	v := o.value
	if o.bare || v == "" {
		return errors.New("needs a value (random, zipf, pareto, normal, zoned, zoned_abs)")
	}
	name := v
	if i := strings.IndexAny(v, ",:"); i >= 0 {
		// fio's opt_len: up to the first ',' if there is one, else ':'.
		if c := strings.IndexByte(v, ','); c >= 0 {
			i = c
		}
		name = v[:i]
	}
	d := workload.Distribution{Center: -1}
	switch name {
	case "random":
		j.dist, j.distAt = d, o
		return nil
	case workload.DistZipf, workload.DistPareto, workload.DistNormal:
		d.Kind = name
		d.Value = map[string]float64{workload.DistZipf: 1.1, workload.DistPareto: 0.2}[name] // fio's defaults
		if _, post, ok := strings.Cut(v, ":"); ok {
			post = strings.TrimSpace(post)
			val, center, hasCenter := strings.Cut(post, ":")
			var err error
			if d.Value, err = scanFloat(val); err == nil && hasCenter {
				d.Center, err = scanFloat(center)
			}
			if err != nil {
				return fmt.Errorf("%q: fio: \"random postfix parsing failed\"", v)
			}
			if hasCenter && !(d.Center >= 0 && d.Center <= 1) {
				return fmt.Errorf("%q: fio: \"distribution center out of range (0 <= center <= 1.0)\"", v)
			}
		}
	case workload.DistZoned, workload.DistZonedAbs:
		d.Kind = name
		zones, err := j.zones(strings.TrimSpace(v[len(name)+1:]), name == workload.DistZonedAbs)
		if err != nil {
			return fmt.Errorf("%q: %v", v, err)
		}
		d.Zones = [2][]workload.Zone{zones, zones}
	default:
		if strings.HasPrefix(v, "zoned:") || strings.HasPrefix(v, "zoned_abs:") {
			// fio 3.33 matches the name up to the first ',', so zones
			// per direction never parse.
			return fmt.Errorf("%q: zones per direction: fio 3.33 fails to parse it (it matches the name up to the first ',')", v)
		}
		return fmt.Errorf("%q: fio's values are random, zipf, pareto, normal, zoned and zoned_abs (lower case)", v)
	}
	// What fio refuses, in its words; the rest is ParseDistribution's.
	if _, err := workload.ParseDistribution(d.String()); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), strconv.Quote(d.String())+": "))
	}
	j.dist, j.distAt = d, o
	return nil
}

// scanFloat is C's sscanf("%lf"): the longest number at the start,
// anything after it ignored.
func scanFloat(s string) (float64, error) {
	s = strings.TrimLeft(s, " \t")
	for n := len(s); n > 0; n-- {
		if f, err := strconv.ParseFloat(s[:n], 64); err == nil {
			return f, nil
		}
	}
	return 0, errors.New("not a number")
}

// zones reads a zoned distribution's zones as fio's split_parse_ddir and
// zone_split_ddir do: "ACCESS/SIZE:…", an access percentage read with
// fio's units and kept in a byte (fio's uint8_t; 255 counts as not
// given), a size percentage read with atoi (over 100 is 100, 0 or none
// shares what the others leave), or for zoned_abs a size with fio's
// units; an empty entry ends the list. The access percentages must add
// up to 100, the sizes to at most 100.
func (j *job) zones(s string, abs bool) ([]workload.Zone, error) {
	type entry struct{ access, size int64 }
	var es []entry
	for _, part := range strings.Split(s, ":") {
		if part == "" {
			break
		}
		a, b, hasSize := strings.Cut(part, "/")
		n, err := parseNumber(a, j.kbBase)
		if err != nil || n.percent {
			return nil, fmt.Errorf("zone %q: fio: \"split conversion failed\"", part)
		}
		e := entry{access: n.val & 0xff, size: -1}
		switch {
		case abs && hasSize:
			sz, err := parseNumber(b, j.kbBase)
			if err != nil || sz.percent {
				return nil, fmt.Errorf("zone %q: fio: \"split conversion failed\"", part)
			}
			e.size = sz.val
		case abs:
			e.size = 0
		case hasSize:
			if p := atoi(b); p > 100 {
				e.size = 100
			} else if p > 0 {
				e.size = int64(p)
			}
		}
		es = append(es, e)
		if len(es) == 256 {
			break // fio: "hit max of 256 split entries"
		}
	}
	var access, sizes, accessMissing, sizeMissing int64
	for _, e := range es {
		if e.access == 0xff {
			accessMissing++
		} else {
			access += e.access
		}
		if !abs {
			if e.size < 0 {
				sizeMissing++
			} else {
				sizes += e.size
			}
		}
	}
	switch {
	case access > 100 || sizes > 100:
		return nil, errors.New("fio: \"zone_split percentages add to more than 100%\"")
	case access < 100:
		return nil, fmt.Errorf("fio: \"access percentage don't add up to 100 for zoned random distribution (got=%d)\"", access)
	}
	out := make([]workload.Zone, len(es))
	for i, e := range es {
		z := workload.Zone{AccessPct: int(e.access)}
		if e.access == 0xff {
			z.AccessPct = int((100 - access) / accessMissing)
		}
		switch {
		case abs:
			z.Bytes = e.size
		case e.size < 0:
			z.SizePct = int((100 - sizes) / sizeMissing)
		default:
			z.SizePct = int(e.size)
		}
		out[i] = z
	}
	return out, nil
}

// setGenerator reads random_generator: fio's tausworthe, tausworthe64 and
// lfsr. The tausworthes only change the random sequence.
func (j *job) setGenerator(o option) error {
	switch o.value {
	case "tausworthe", "tausworthe64":
		j.generator = ""
	case "lfsr":
		j.generator = workload.GeneratorLFSR
	default:
		return fmt.Errorf("%q: fio's values are tausworthe, lfsr and tausworthe64", o.value)
	}
	j.genAt = o
	return nil
}

// applyRandom gives a random job's spec its distribution and generator,
// as fio's fixup_options: any distribution but the uniform one turns the
// random map off, and so does lfsr (init_random_map: an lfsr instead of a
// map). A sequential job ignores both, as fio does.
func (j *job) applyRandom(spec *workload.Spec, random bool, fail func(option, string) error) error {
	if !random || spec.RandomPct == 0 {
		if j.dist.Kind != "" {
			j.note(j.distAt, "no effect on a sequential job (fio ignores it too)")
		}
		return nil
	}
	if spec.Align != 0 && (j.dist.Kind == workload.DistZipf || j.dist.Kind == workload.DistPareto || j.dist.Kind == workload.DistNormal) {
		return fail(j.baAt, fmt.Sprintf("with random_distribution=%s: fio draws blocks of the smallest transfer and places them at multiples of blockalign, past the region's end", j.dist.Kind))
	}
	switch {
	case j.dist.Kind == workload.DistZoned || j.dist.Kind == workload.DistZonedAbs:
		if j.generator == workload.GeneratorLFSR {
			return fail(j.genAt, fmt.Sprintf("lfsr with %s: fio's lfsr then runs over the whole file whatever the zones say", j.dist.Kind))
		}
	case j.dist.Kind != "" && j.generator == workload.GeneratorLFSR:
		j.note(j.genAt, "no effect with random_distribution=%s (fio draws its blocks from the distribution)", j.dist.Kind)
		j.generator = ""
	}
	spec.RandomDistribution, spec.RandomGenerator = j.dist.String(), j.generator
	if spec.RandomDistribution != "" || spec.RandomGenerator != "" {
		spec.RandomMap = false
	}
	return nil
}
