package target

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMarker(t *testing.T) {
	ready := marker{size: 1 << 30, id: 0xabc, ino: 12, btime: 1700000000123456789, gen: 3, mtime: 1700000001000000001, ctime: 1700000001000000002}
	require.Equal(t, "ioprobe.target/v3 size=1073741824 id=0000000000000abc ino=12 btime=1700000000123456789 gen=3 state=ready mtime=1700000001000000001 ctime=1700000001000000002", ready.String())
	busy := marker{size: 0, id: 0xabc, ino: 12, btime: 7, gen: 1, busy: true, run: 0xf00}
	require.Equal(t, "ioprobe.target/v3 size=0 id=0000000000000abc ino=12 btime=7 gen=1 state=busy run=0000000000000f00", busy.String())
	tests := []struct {
		in     string
		want   marker
		v1, ok bool
	}{
		{ready.String(), ready, false, true},
		{ready.String() + "\x00", ready, false, true},
		{busy.String(), busy, false, true},
		{"ioprobe.target/v2 size=4096 id=1 ino=0 btime=0", marker{size: 4096, id: 1, legacy: true}, false, true},
		{"ioprobe.target/v1 size=4096 sectors=v1", marker{}, true, false}, // an older ioprobe's: no identity
		{"ioprobe.target/v1 size=4096", marker{}, true, false},
		{"ioprobe.target/v2 size=4096 id=1 ino=0", marker{}, false, false},
		{"ioprobe.target/v2 size=4096 id=0 ino=0 btime=0", marker{}, false, false},
		{"ioprobe.target/v2 size=0 id=1 ino=0 btime=0", marker{}, false, false},
		{"ioprobe.target/v2 size=-1 id=1 ino=0 btime=0", marker{}, false, false},
		{"ioprobe.target/v2 size=12x id=1 ino=0 btime=0", marker{}, false, false},
		{"ioprobe.target/v2 size=4096 id=xyz ino=0 btime=0", marker{}, false, false},
		{"ioprobe.target/v2 size=4096 id=1 ino=0 btime=0 extra=1", marker{}, false, false},
		{"ioprobe.target/v2 size=4096 id=1 ino=0 btime=0 gen=1 state=ready mtime=1 ctime=1", marker{}, false, false},
		{"ioprobe.target/v3 size=4096 id=1 ino=0 btime=0", marker{}, false, false},                                  // no state
		{"ioprobe.target/v3 size=4096 id=1 ino=0 btime=0 gen=1 state=ready mtime=1", marker{}, false, false},        // no ctime
		{"ioprobe.target/v3 size=4096 id=1 ino=0 btime=0 gen=1 state=busy mtime=1 ctime=1", marker{}, false, false}, // busy has no times
		{"ioprobe.target/v3 size=4096 id=1 ino=0 btime=0 gen=1 state=ready run=1 mtime=1 ctime=1", marker{}, false, false},
		{"ioprobe.target/v3 size=4096 id=1 ino=0 btime=0 state=ready mtime=1 ctime=1", marker{}, false, false}, // no gen
		{"ioprobe.target/v3 size=0 id=1 ino=0 btime=0 gen=1 state=ready mtime=1 ctime=1", marker{}, false, false},
		{"ioprobe.target/v3 size=4096 id=1 ino=0 btime=0 gen=1 state=idle mtime=1 ctime=1", marker{}, false, false},
		{"ioprobe.target/v3 size=4096 id=1 ino=0 btime=0 gen=1 gen=2 state=ready mtime=1 ctime=1", marker{}, false, false},
		{"", marker{}, false, false},
	}
	for _, tc := range tests {
		got, v1, ok := parseMarker([]byte(tc.in))
		require.Equal(t, tc.ok, ok, tc.in)
		require.Equal(t, tc.v1, v1, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}
