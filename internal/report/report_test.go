package report

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var fixtures = []struct {
	name   string
	result func() *result.Result
}{
	{"mixed", mixedResult},
	{"read", readResult},
	{"write", writeResult},
	{"empty", emptyResult},
}

func TestNum(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		d    int
		want string
	}{
		{0, 0, "0"}, {999, 0, "999"}, {1000, 0, "1,000"}, {1234567.891, 2, "1,234,567.89"},
		{-1234.5, 1, "-1,234.5"}, {0.0001234, 3, "0.000"}, {123456, 1, "123,456.0"},
	} {
		require.Equal(t, tc.want, num(tc.v, tc.d))
	}
}

func TestIEC(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 512: "512 B", 4096: "4 KiB", 1536: "1.5 KiB", 8 << 30: "8 GiB",
		2000398934016: "1.82 TiB", 600127266816: "558.91 GiB",
	} {
		require.Equal(t, want, iec(n), n)
	}
}

func TestSeconds(t *testing.T) {
	for v, want := range map[float64]string{
		0.5: "0.5 s", 10: "10 s", 60: "60 s", 599: "599 s", 900: "15 min 0 s", 3725: "1 h 2 min",
	} {
		require.Equal(t, want, seconds(v), v)
	}
	require.Equal(t, "-", pct(1, 0))
	require.Equal(t, "50.0%", pct(1, 2))
}
