package fiojob

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// fio's transfer sizes (options.c, init.c, io_u.c: get_next_buflen):
// bs= sets each direction's size; bsrange= and bssplit= set its smallest
// and largest size (min_bs, max_bs), which win over bs= whatever the
// order, and the later of the two sets them; a bssplit, once given, is
// what the sizes are drawn from. A drawn size is rounded down to a
// multiple of the smallest and capped at the largest.

// maxSplit is fio's BSSPLIT_MAX.
const maxSplit = 64

// setSplit reads bssplit: per direction (read,write,trim as fio splits
// it at ','), entries size/percent separated by ':'.
func (j *job) setSplit(o option) error {
	if o.bare {
		return errors.New("needs a value")
	}
	v := strings.TrimSpace(o.value)
	var parts [3]string
	switch p := strings.Split(v, ","); len(p) {
	case 1:
		parts = [3]string{p[0], p[0], p[0]}
	case 2:
		parts = [3]string{p[0], p[1], p[1]}
	default:
		parts = [3]string{p[0], p[1], strings.Join(p[2:], ",")}
	}
	for d, part := range parts {
		entries, err := parseSplit(part, j.kbBase)
		if err != nil {
			return err
		}
		if len(entries) == 0 {
			continue // fio leaves the direction as it was
		}
		j.split[d] = entries
		j.minBS[d], j.maxBS[d] = entries[0].bs, entries[0].bs
		for _, e := range entries {
			j.minBS[d], j.maxBS[d] = min(j.minBS[d], e.bs), max(j.maxBS[d], e.bs)
		}
	}
	j.splitAt, j.rangeAt = o, o
	return nil
}

// parseSplit is fio's split_parse_ddir and bssplit_ddir for one
// direction: entries up to the first empty one; a percent read as atoi
// reads it, over 100 taken as 100, 0 or none as "the rest"; the rest
// divided evenly (integer division) between the entries without one; the
// entries then sorted by percent, as fio sorts them.
func parseSplit(v string, kbBase int64) ([]splitEntry, error) {
	var out []splitEntry
	for _, e := range strings.Split(v, ":") {
		if e == "" {
			break
		}
		size, pct, hasPct := strings.Cut(e, "/")
		n, err := parseNumber(size, kbBase)
		if err != nil {
			return nil, fmt.Errorf("%q: %v", e, err)
		}
		if n.percent || n.val < 1 {
			return nil, fmt.Errorf("%q: a size must be at least 1 byte", e)
		}
		perc := -1
		if hasPct {
			if perc = atoi(pct); perc > 100 {
				perc = 100
			} else if perc <= 0 {
				perc = -1
			}
		}
		out = append(out, splitEntry{bs: n.val, perc: perc})
		if len(out) == maxSplit {
			break
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	total, missing := 0, 0
	for _, e := range out {
		if e.perc < 0 {
			missing++
		} else {
			total += e.perc
		}
	}
	if total > 100 && missing > 1 {
		return nil, fmt.Errorf("the percents add up to %d, over 100, with %d sizes left to share the rest (fio: \"bssplit percentages add to more than 100%%\")", total, missing)
	}
	for i := range out {
		if out[i].perc < 0 {
			if total > 100 {
				// fio's unsigned (100 - total) is huge: the size sorts
				// last and the others take every draw.
				out[i].perc = 1 << 30
			} else {
				out[i].perc = (100 - total) / missing
			}
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].perc < out[b].perc })
	return out, nil
}

// atoi is C's: leading blanks, a sign, digits; anything else ends it.
func atoi(s string) int {
	s = strings.TrimLeft(s, " \t")
	i, neg := 0, false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg, i = s[i] == '-', i+1
	}
	n := 0
	for ; i < len(s) && isDigit(s[i]) && n < 1<<20; i++ {
		n = n*10 + int(s[i]-'0')
	}
	if neg {
		return -n
	}
	return n
}

// setRange reads bsrange=min-max (fio's FIO_OPT_RANGE, per direction
// at ','): it sets each direction's smallest and largest size.
func (j *job) setRange(o option) error {
	if o.bare {
		return errors.New("needs a value")
	}
	parts := strings.Split(strings.TrimSpace(o.value), ",")
	for len(parts) < 3 {
		parts = append(parts, parts[len(parts)-1])
	}
	for d := range 3 {
		lo, hi, ok := strings.Cut(parts[d], "-")
		if !ok {
			lo, hi, ok = strings.Cut(parts[d], ":")
		}
		if !ok {
			return fmt.Errorf("%q: want min-max", parts[d])
		}
		a, err := parseNumber(lo, j.kbBase)
		if err != nil {
			return fmt.Errorf("%q: %v", parts[d], err)
		}
		b, err := parseNumber(hi, j.kbBase)
		if err != nil {
			return fmt.Errorf("%q: %v", parts[d], err)
		}
		if a.val < 1 || b.val < 1 {
			return fmt.Errorf("%q: sizes must be at least 1 byte", parts[d])
		}
		// fio swaps a range given high to low.
		j.minBS[d], j.maxBS[d] = min(a.val, b.val), max(a.val, b.val)
	}
	j.rangeAt = o
	return nil
}

// sizesOf is the transfer size mix of direction d as fio draws it, in
// fio's order (a bssplit's, sorted by percent), each size with its share.
func (j *job) sizesOf(d int) ([]workload.BlockSize, error) {
	lo, hi := j.minBS[d], j.maxBS[d]
	if lo == 0 {
		lo, hi = j.bs[d], j.bs[d]
	}
	if lo == hi {
		return []workload.BlockSize{{Bytes: lo, Weight: 1}}, nil
	}
	shape := func(n int64) int64 { return min(n-n%lo, hi) }
	var out []workload.BlockSize
	add := func(n int64, w int64) {
		if w <= 0 {
			return
		}
		n = shape(n)
		for i := range out {
			if out[i].Bytes == n {
				out[i].Weight += int(w)
				return
			}
		}
		out = append(out, workload.BlockSize{Bytes: n, Weight: int(w)})
	}
	if split := j.split[d]; len(split) > 0 {
		// get_next_buflen: an entry takes the draws up to its running
		// total of percents (at most 100); the last entry with a share
		// also takes what the percents leave of 100.
		cum, last := 0, -1
		for i, e := range split {
			if e.perc > 0 {
				last = i
			}
		}
		for i, e := range split {
			if e.perc <= 0 {
				continue
			}
			next := min(cum+e.perc, 100)
			if i == last {
				next = 100
			}
			add(e.bs, int64(next-cum))
			cum = next
		}
		return out, nil
	}
	// bsrange: a length drawn uniformly from [lo, lo+hi), rounded down
	// to a multiple of lo, capped at hi: k×lo for a draw in
	// [(k-1)×lo, k×lo) of the hi-long interval.
	if (hi+lo-1)/lo > workload.MaxBlockSizes {
		return nil, fmt.Errorf("%s-%s: fio draws %d sizes from it; ioprobe runs at most %d", strconv.FormatInt(lo, 10), strconv.FormatInt(hi, 10), (hi+lo-1)/lo, workload.MaxBlockSizes)
	}
	var g int64
	for k := int64(1); (k-1)*lo < hi; k++ {
		g = gcd(g, min(k*lo, hi)-(k-1)*lo)
	}
	for k := int64(1); (k-1)*lo < hi; k++ {
		add(k*lo, (min(k*lo, hi)-(k-1)*lo)/g)
	}
	return out, nil
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// blockSizes is the job's transfer size mix: the same for every
// direction the job issues, else refused naming the option.
func (j *job) blockSizes(dirs []int) ([]workload.BlockSize, error) {
	var first []workload.BlockSize
	for i, d := range dirs {
		bs, err := j.sizesOf(d)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			first = bs
			continue
		}
		if !slices.Equal(first, bs) {
			return nil, fmt.Errorf("a transfer size mix per direction (reads %s, writes %s): ioprobe's transfer sizes are the same for reads and writes",
				workload.FormatBlockSizes(first), workload.FormatBlockSizes(bs))
		}
	}
	// Weights stay within what a spec takes.
	var g int64
	for _, b := range first {
		g = gcd(g, int64(b.Weight))
	}
	for i := range first {
		first[i].Weight = int(int64(first[i].Weight) / max(g, 1))
	}
	return first, nil
}

// sizeOption is the option that set the job's sizes, for a refusal.
func (j *job) sizeOption() option {
	if j.rangeAt.key != "" {
		return j.rangeAt
	}
	return j.bsAt
}
