package target

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMarker(t *testing.T) {
	m := marker{size: 1 << 30, id: 0xabc, ino: 12, btime: 1700000000123456789}
	require.Equal(t, "ioprobe.target/v2 size=1073741824 id=0000000000000abc ino=12 btime=1700000000123456789", m.String())
	tests := []struct {
		in     string
		want   marker
		v1, ok bool
	}{
		{m.String(), m, false, true},
		{m.String() + "\x00", m, false, true},
		{"ioprobe.target/v2 size=4096 id=1 ino=0 btime=0", marker{size: 4096, id: 1}, false, true},
		{"ioprobe.target/v1 size=4096 sectors=v1", marker{}, true, false}, // an older ioprobe's: no identity
		{"ioprobe.target/v1 size=4096", marker{}, true, false},
		{"ioprobe.target/v2 size=4096 id=1 ino=0", marker{}, false, false},
		{"ioprobe.target/v2 size=4096 id=0 ino=0 btime=0", marker{}, false, false},
		{"ioprobe.target/v2 size=0 id=1 ino=0 btime=0", marker{}, false, false},
		{"ioprobe.target/v2 size=-1 id=1 ino=0 btime=0", marker{}, false, false},
		{"ioprobe.target/v2 size=12x id=1 ino=0 btime=0", marker{}, false, false},
		{"ioprobe.target/v2 size=4096 id=xyz ino=0 btime=0", marker{}, false, false},
		{"ioprobe.target/v2 size=4096 id=1 ino=0 btime=0 extra=1", marker{}, false, false},
		{"ioprobe.target/v3 size=4096 id=1 ino=0 btime=0", marker{}, false, false},
		{"", marker{}, false, false},
	}
	for _, tc := range tests {
		got, v1, ok := parseMarker([]byte(tc.in))
		require.Equal(t, tc.ok, ok, tc.in)
		require.Equal(t, tc.v1, v1, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}
