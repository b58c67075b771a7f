package workload

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Size units. Sizes on the command line accept both the short form (4k) and
// the IEC form (4KiB); both are powers of 1024 because that is what block
// sizes and device sizes mean to storage engineers. Decimal units (kB, MB,
// GB) are accepted too and mean powers of 1000, as in the reports' MB/s.
const (
	KiB int64 = 1 << 10
	MiB int64 = 1 << 20
	GiB int64 = 1 << 30
	TiB int64 = 1 << 40
	PiB int64 = 1 << 50
)

var sizeUnits = map[string]float64{
	"":    1,
	"b":   1,
	"k":   float64(KiB),
	"kib": float64(KiB),
	"m":   float64(MiB),
	"mib": float64(MiB),
	"g":   float64(GiB),
	"gib": float64(GiB),
	"t":   float64(TiB),
	"tib": float64(TiB),
	"p":   float64(PiB),
	"pib": float64(PiB),
	"kb":  1e3,
	"mb":  1e6,
	"gb":  1e9,
	"tb":  1e12,
	"pb":  1e15,
}

// ParseSize parses a byte count such as "512", "4k", "4KiB", "1.5GiB" or
// "100MB". k/KiB, m/MiB, g/GiB, t/TiB are powers of 1024; kB, MB, GB, TB are
// powers of 1000. The result must be a whole number of bytes.
func ParseSize(s string) (int64, error) {
	orig := s
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty size")
	}
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	num, unit := s[:i], strings.ToLower(strings.TrimSpace(s[i:]))
	if num == "" && strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("size %q: must not be negative", orig)
	}
	if num == "" {
		return 0, fmt.Errorf("size %q: no number (want e.g. 4k, 4KiB, 1.5GiB)", orig)
	}
	mult, ok := sizeUnits[unit]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q (want k, KiB, M, MiB, G, GiB, T, TiB, or kB, MB, GB, TB)", orig, s[i:])
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("size %q: number out of range", orig)
		}
		m := int64(mult)
		if n != 0 && m > math.MaxInt64/n {
			return 0, fmt.Errorf("size %q: out of range", orig)
		}
		return n * m, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: bad number %q", orig, num)
	}
	v := f * mult
	if v >= math.MaxInt64 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("size %q: out of range", orig)
	}
	if v != math.Trunc(v) {
		return 0, fmt.Errorf("size %q is not a whole number of bytes", orig)
	}
	return int64(v), nil
}

// FormatSize renders a byte count the way ParseSize reads it back exactly,
// in the largest binary unit that divides it ("4KiB", "1GiB", "1536B" stays
// "1536B" only when no unit divides it, "512B").
func FormatSize(n int64) string {
	units := []struct {
		name string
		v    int64
	}{{"PiB", PiB}, {"TiB", TiB}, {"GiB", GiB}, {"MiB", MiB}, {"KiB", KiB}}
	if n <= 0 {
		return strconv.FormatInt(n, 10) + "B"
	}
	for _, u := range units {
		if n%u.v == 0 {
			return strconv.FormatInt(n/u.v, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// ShortSize renders a byte count the way tables and charts label data
// sizes: "512 B", "4 KiB", "64 KiB", "1 MiB". Binary multiples carry
// binary units: the reports' own "4KB" meant 4096 bytes, but on ioprobe's
// command line 4KB is 4000 (kB and MB are powers of 1000, as in MB/s), and
// a label must read back as the size that ran.
func ShortSize(n int64) string {
	switch {
	case n >= MiB && n%MiB == 0:
		return strconv.FormatInt(n/MiB, 10) + " MiB"
	case n >= KiB && n%KiB == 0:
		return strconv.FormatInt(n/KiB, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " B"
}
