package icf

import (
	"strconv"
	"strings"
)

// maxLines is Iometer's MAX_ACCESS_SPECS: lines in one specification.
const maxLines = 100

// accessSpecs reads 'ACCESS SPECIFICATIONS (AccessSpecList::
// LoadConfigNew). A later specification of the same name replaces an
// earlier one, as in Iometer.
func (c *Config) accessSpecs(r *reader) error {
	r.sec = secSpecs
	for {
		k, err := r.nextKey("an access specification or 'END access specifications")
		if err != nil {
			return err
		}
		if k.equals("END access specifications") {
			return nil
		}
		if !k.equals("Access specification name,default assignment") {
			return r.errf(k, k.key(), "not an access specification key Iometer writes")
		}
		v, err := r.value(k)
		if err != nil {
			return err
		}
		name, assign, _ := strings.Cut(v.text, ",")
		spec := AccessSpec{Name: strings.TrimSpace(name), Assignment: strings.ToUpper(strings.TrimSpace(assign)), At: v.n}
		if spec.Name == "" {
			return r.errf(v, k.key(), "an access specification needs a name")
		}
		switch spec.Assignment {
		case "NONE", "ALL", "DISK", "NET":
		case "0", "1", "2", "3":
			spec.Assignment = []string{"NONE", "ALL", "DISK", "NET"}[spec.Assignment[0]-'0']
		default:
			return r.errf(v, k.key(), "default assignment %q: want NONE, ALL, DISK or NET", assign)
		}
		// The column heading ('size,% of size,…), then the lines.
		if h, ok := r.next(); !ok || !h.isKey() {
			return r.errf(h, k.key(), "the specification's column heading ('size,%% of size,%% reads,%% random,delay,burst,align,reply) is missing")
		}
		total := 0
		for {
			r.skipBlank()
			l, ok := r.peek()
			if !ok || l.isKey() {
				break
			}
			r.i++
			ln, err := r.specLine(spec.Name, l)
			if err != nil {
				return err
			}
			total += ln.Share
			if ln.Share > 0 { // a 0% line is never chosen
				spec.Lines = append(spec.Lines, ln)
			}
		}
		if total != 100 {
			return r.errf(v, "", "access specification %q: its lines' %% of size add up to %d, not 100", spec.Name, total)
		}
		if len(spec.Lines) > maxLines {
			return r.errf(v, "", "access specification %q has %d lines: Iometer allows %d", spec.Name, len(spec.Lines), maxLines)
		}
		replaced := false
		for i := range c.Specs {
			if strings.EqualFold(c.Specs[i].Name, spec.Name) {
				c.Specs[i], replaced = spec, true
			}
		}
		if !replaced {
			c.Specs = append(c.Specs, spec)
		}
	}
}

// specColumns name a line's columns for messages. Files of 1998 have the
// first six; later ones all eight.
var specColumns = []string{"size", "% of size", "% reads", "% random", "delay", "burst", "align", "reply"}

// specLine reads "size,% of size,% reads,% random,delay,burst[,align[,reply]]".
func (r *reader) specLine(spec string, l line) (Line, error) {
	parts := strings.Split(l.text, ",")
	bad := func(format string, args ...any) (Line, error) {
		return Line{}, r.errf(l, "", "access specification %q: line %q: "+format, append([]any{spec, l.text}, args...)...)
	}
	if len(parts) < 6 || len(parts) > 8 {
		return bad("want size,%% of size,%% reads,%% random,delay,burst,align,reply (six columns in 1998's files)")
	}
	var v [8]int64
	for i, p := range parts {
		n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
		if err != nil || n < 0 {
			return bad("%s %q is not a whole number of 0 or more", specColumns[i], strings.TrimSpace(p))
		}
		v[i] = n
	}
	for i := 1; i <= 3; i++ {
		if v[i] > 100 {
			return bad("%s %d is over 100", specColumns[i], v[i])
		}
	}
	switch {
	case v[0] == 0 || v[0]%512 != 0:
		return bad("size %d: ioprobe's direct I/O needs whole 512-byte sectors", v[0])
	case v[6]%512 != 0:
		return bad("align %d: ioprobe's direct I/O needs offsets on 512-byte sectors", v[6])
	case v[7] != 0:
		return bad("reply %d: Iometer's reply size is a network worker's answer to each I/O and has no meaning for storage (set it to 0, \"No Reply\")", v[7])
	case v[4] > 1<<31-1 || v[5] > 1<<31-1:
		return bad("delay or burst is too large")
	}
	return Line{Bytes: v[0], Share: int(v[1]), ReadPct: int(v[2]), RandomPct: int(v[3]),
		DelayMs: int(v[4]), Burst: int(v[5]), Align: v[6], At: l.n}, nil
}
