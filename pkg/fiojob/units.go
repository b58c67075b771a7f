package fiojob

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// parseInt reads fio's "int" type for a quantity of data: an optional 0x
// prefix, a number, an optional unit prefix (k, m, g, t, p, with i for
// the other base) and an optional b. With kbBase 1024 (fio's default) k is
// 1024 and ki 1000; with 1000 the other way round.
func parseInt(s string, kbBase int64) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("no value")
	}
	low := strings.ToLower(s)
	if strings.HasPrefix(low, "0x") {
		n, err := strconv.ParseInt(low[2:], 16, 64)
		if err != nil || n < 0 {
			return 0, errors.New("not a number")
		}
		return n, nil
	}
	n, i, err := leadingInt(low, "not a number")
	if err != nil {
		return 0, err
	}
	suffix := strings.TrimSuffix(low[i:], "b")
	if suffix == "" {
		return n, nil
	}
	other := kbBase == 1024
	base := kbBase
	if strings.HasSuffix(suffix, "i") {
		suffix = strings.TrimSuffix(suffix, "i")
		if other {
			base = 1000
		} else {
			base = 1024
		}
	}
	power := strings.Index("kmgtp", suffix)
	if len(suffix) != 1 || power < 0 {
		return 0, errors.New("unknown unit " + strconv.Quote(s[i:]) + " (fio's: k, m, g, t, p, with i for the other base)")
	}
	mult := int64(1)
	for range power + 1 {
		mult *= base
	}
	if n > math.MaxInt64/mult {
		return 0, errors.New("too large")
	}
	return n * mult, nil
}

// parseTime reads fio's "time" type: seconds unless a unit (d, h, m, s,
// ms/msec, us/usec) says otherwise.
func parseTime(s string) (time.Duration, error) { return parseTimeIn(s, time.Second) }

// parseTimeIn reads fio's "time" type for an option whose bare numbers
// are in unit (thinktime's are microseconds).
func parseTimeIn(s string, unit time.Duration) (time.Duration, error) {
	low := strings.ToLower(strings.TrimSpace(s))
	n, i, err := leadingInt(low, "not a time")
	if err != nil {
		return 0, err
	}
	units := map[string]time.Duration{"": unit, "s": time.Second, "sec": time.Second, "m": time.Minute,
		"min": time.Minute, "h": time.Hour, "d": 24 * time.Hour, "ms": time.Millisecond, "msec": time.Millisecond,
		"us": time.Microsecond, "usec": time.Microsecond}
	u, ok := units[low[i:]]
	if !ok {
		return 0, errors.New("unknown time unit " + strconv.Quote(s[i:]) + " (fio's: d, h, m, s, ms, us)")
	}
	if n > int64(math.MaxInt64/u) {
		return 0, errors.New("too long")
	}
	return time.Duration(n) * u, nil
}

// leadingInt reads the decimal digits s starts with and says where they
// end; without any, the error is notA.
func leadingInt(s, notA string) (int64, int, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, 0, errors.New(notA)
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, 0, errors.New(notA)
	}
	return n, i, nil
}

// parseBool reads fio's bool: a bare option is true; else 0 or 1 (fio
// also takes any integer, non-zero being true).
func parseBool(o option) (bool, error) {
	if o.bare {
		return true, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(o.value), 10, 64)
	if err != nil {
		return false, errors.New("want 0 or 1")
	}
	return n != 0, nil
}
