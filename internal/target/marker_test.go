package target

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMarker(t *testing.T) {
	require.Equal(t, "ioprobe.target/v1 size=1073741824", formatMarker(1<<30))
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{formatMarker(4096), 4096, true},
		{formatMarker(4096) + "\x00", 4096, true},
		{"ioprobe.target/v2 size=4096", 0, false},
		{"ioprobe.target/v1 size=", 0, false},
		{"ioprobe.target/v1 size=-1", 0, false},
		{"ioprobe.target/v1 size=0", 0, false},
		{"ioprobe.target/v1 size=12x", 0, false},
		{"", 0, false},
	}
	for _, tc := range tests {
		got, ok := parseMarker([]byte(tc.in))
		require.Equal(t, tc.ok, ok, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}
