package fiojob

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// A number in fio's job file is read as fio 3.x reads it (parse.c), with
// its quirks, so that a job means in ioprobe what it means in fio:
//
//   - str_to_decimal: strtoll in base 16 when "0x" appears anywhere
//     ("10x" is 16), else base 10 (leading spaces and a sign allowed,
//     reading stops at the first character that is not a digit: "1.5g"
//     is 1);
//   - get_mult_bytes: after the digits (and a sign before them) the first
//     letters, lower-cased and cut at a separator (: - , /), choose the
//     multiplier by prefix: "pib", "tib", "gib", "mib", "kib" are powers
//     of the other base (1000 with kb_base=1024, fio's default), then "p",
//     "t", "g", "m", "k" (anything starting with them: "4ki" and "1Gi"
//     are powers of 1024, "9ms" is 9 MiB) powers of kb_base, "%" a
//     percentage, and anything else 1 ("4x" is 4, "1e3" is 1). A space
//     before the unit hides it ("bs = 4k", as fio splits it, is 4).
//
// parseNumber returns the value, whether it was a percentage, and where
// fio's reading ignored part of the text (for a note).

// number is a value read with fio's rules.
type number struct {
	val     int64
	percent bool
	// ignored is the text fio read past without effect ("" when every
	// character counted), for a note.
	ignored string
}

var errArithmetic = errors.New("fio's arithmetic in parentheses: give the value itself")

// parseNumber reads s (an option's value as fio hands it to its parser:
// its first ',' and what follows already cut) with fio's str_to_decimal
// for a quantity (kilo=1).
func parseNumber(s string, kbBase int64) (number, error) {
	if s == "" {
		return number{}, errors.New("needs a value")
	}
	if s[0] == '(' {
		return number{}, errArithmetic
	}
	base := 10
	if strings.Contains(s, "0x") || strings.Contains(s, "0X") {
		base = 16
	}
	v, end, err := strtoll(s, base)
	if err != nil {
		return number{}, err
	}
	mult, percent, unitEnd := multBytes(s, kbBase)
	n := number{percent: percent}
	if percent {
		if v < 0 || v > 100 {
			return number{}, errors.New("a percentage must be 0 to 100")
		}
		n.val = v
	} else {
		if v < 0 {
			return number{}, errors.New("negative: fio reads it as a huge unsigned value")
		}
		if mult > 1 && v > math.MaxInt64/mult {
			return number{}, errors.New("too large")
		}
		n.val = v * mult
	}
	if rest := s[max(end, unitEnd):]; strings.TrimSpace(rest) != "" && !(mult == 1 && strings.EqualFold(strings.TrimSpace(s[end:]), "b")) {
		n.ignored = rest
	}
	return n, nil
}

// strtoll is C's: leading spaces, a sign, "0x" in base 16, the digits of
// the base; end is where reading stopped. No digit is an error, as is an
// overflow.
func strtoll(s string, base int) (v int64, end int, err error) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	if base == 16 && i+1 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') && i+2 < len(s) && hexDigit(s[i+2]) >= 0 {
		i += 2
	}
	start := i
	var u uint64
	for ; i < len(s); i++ {
		d := digit(s[i], base)
		if d < 0 {
			break
		}
		if u > (math.MaxInt64-uint64(d))/uint64(base) {
			return 0, 0, errors.New("too large")
		}
		u = u*uint64(base) + uint64(d)
	}
	if i == start {
		// "0x" alone reads as 0 ending at the x.
		if base == 16 && start >= 2 && s[start-2] == '0' {
			return 0, start - 1, nil
		}
		return 0, 0, errors.New("not a number")
	}
	v = int64(u)
	if neg {
		v = -v
	}
	return v, i, nil
}

func digit(c byte, base int) int {
	if base == 16 {
		return hexDigit(c)
	}
	if c >= '0' && c <= '9' {
		return int(c - '0')
	}
	return -1
}

func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// multBytes is fio's get_mult_bytes: the multiplier of s, whether it is a
// percentage, and where the unit fio looked at ends.
func multBytes(s string, kbBase int64) (mult int64, percent bool, end int) {
	p := 0
	if len(s) >= 2 {
		seen := false
		for p < len(s) {
			c := s[p]
			if !isDigit(c) && ((c != '+' && c != '-') || seen) {
				break
			}
			seen = seen || isDigit(c)
			p++
		}
		if p >= len(s) || !isAlpha(s[p]) && s[p] != '%' {
			return 1, false, p
		}
	}
	unit := strings.ToLower(s[p:])
	if i := strings.IndexAny(unit, ":-,/"); i >= 0 {
		unit = unit[:i]
	}
	other := int64(1000)
	if kbBase == 1000 {
		other = 1024
	}
	pow := func(base int64, n int) int64 {
		m := int64(1)
		for range n {
			m *= base
		}
		return m
	}
	for i, u := range []string{"kib", "mib", "gib", "tib", "pib"} {
		if strings.HasPrefix(unit, u) {
			return pow(other, i+1), false, p + 3
		}
	}
	for i, u := range []string{"k", "m", "g", "t", "p"} {
		if strings.HasPrefix(unit, u) {
			return pow(kbBase, i+1), false, p + 1 + boolInt(strings.HasPrefix(unit[1:], "b"))
		}
	}
	if strings.HasPrefix(unit, "%") {
		return 1, true, p + 1
	}
	return 1, false, p
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// parseTimeUs reads fio's time (check_str_time): the number as
// parseNumber's, in microseconds: a bare number is seconds for an option
// whose unit is the second (isSeconds: runtime, ramp_time, startdelay),
// else microseconds (thinktime); after the digits "us"/"usec" are µs,
// "ms"/"msec" ms, exactly "s", "m", "h" or "d" those, and any other
// letters µs (fio's get_mult_time: "10sec" is 10 µs, "1min" 1 µs).
func parseTimeUs(s string, isSeconds bool) (us int64, note string, err error) {
	if s == "" {
		return 0, "", errors.New("needs a value")
	}
	if s[0] == '(' {
		return 0, "", errArithmetic
	}
	base := 10
	if strings.Contains(s, "0x") || strings.Contains(s, "0X") {
		base = 16
	}
	v, _, err := strtoll(s, base)
	if err != nil {
		return 0, "", err
	}
	if v < 0 {
		return 0, "", errors.New("negative")
	}
	p := 0
	for p < len(s) && (isDigit(s[p]) || s[p] == '+' || s[p] == '-') {
		p++
	}
	mult := int64(1)
	switch unit := strings.ToLower(s[p:]); {
	case p >= len(s) || !isAlpha(s[p]):
		if isSeconds {
			mult = 1e6
		}
		if rest := strings.TrimSpace(s[p:]); rest != "" {
			note = "fio reads " + strconv.Quote(s) + " as " + strconv.FormatInt(v, 10) + " " + map[bool]string{true: "s", false: "µs"}[isSeconds] + " (it stops at " + strconv.Quote(rest) + ")"
		}
	case strings.HasPrefix(unit, "us"):
	case strings.HasPrefix(unit, "ms"):
		mult = 1e3
	case unit == "s":
		mult = 1e6
	case unit == "m":
		mult = 60e6
	case unit == "h":
		mult = 3600e6
	case unit == "d":
		mult = 86400e6
	default:
		note = "fio reads the unit " + strconv.Quote(s[p:]) + " as microseconds: " + strconv.Quote(s) + " is " + strconv.FormatInt(v, 10) + " µs"
	}
	if v > math.MaxInt64/mult/1000 {
		return 0, "", errors.New("too long")
	}
	return v * mult, note, nil
}

// usToDuration converts fio's microseconds.
func usToDuration(us int64) time.Duration { return time.Duration(us) * time.Microsecond }

// splitDirections is fio's handle_option for a number with a value per
// direction (read, write, trim): the value is cut at its first ',', else
// ':', else '-', and so on, a trailing ',' dropped. Parts fio cannot read
// leave their direction as it was; a value given for fewer directions
// carries its last part to the rest (bs=4k,8k: reads 4k, writes and
// trims 8k). ok[d] says whether direction d was set.
func splitDirections(v string) (parts [3]string, ok [3]bool) {
	cur, i := v, 0
	for {
		cut := strings.IndexByte(cur, ',')
		if cut >= 0 && cut == len(cur)-1 {
			cur, cut = cur[:cut], -1
		}
		if cut < 0 {
			cut = strings.IndexByte(cur, ':')
		}
		if cut < 0 {
			cut = strings.IndexByte(cur, '-')
		}
		part := cur
		if cut >= 0 {
			part = cur[:cut]
		}
		if i < 3 {
			parts[i], ok[i] = part, true
		}
		if cut < 0 {
			for j := i + 1; j < 3; j++ {
				parts[j], ok[j] = part, true
			}
			return parts, ok
		}
		cur = cur[cut+1:]
		i++
	}
}

// checkInt is fio's check_int for a bool or a plain int: "0x" reads
// hexadecimal, else sscanf's %u (leading spaces, digits; "1abc" is 1).
func checkInt(s string) (int64, error) {
	base := 10
	if strings.Contains(s, "0x") || strings.Contains(s, "0X") {
		base = 16
	}
	v, _, err := strtoll(s, base)
	if err != nil {
		return 0, errors.New("want 0 or 1")
	}
	return v, nil
}
