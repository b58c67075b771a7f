package target

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMarker(t *testing.T) {
	require.Equal(t, "ioprobe.target/v1 size=1073741824 sectors=v1", formatMarker(1<<30, true))
	require.Equal(t, "ioprobe.target/v1 size=1073741824", formatMarker(1<<30, false))
	tests := []struct {
		in        string
		want      int64
		formatted bool
		ok        bool
	}{
		{formatMarker(4096, true), 4096, true, true},
		{formatMarker(4096, false), 4096, false, true},
		{formatMarker(4096, true) + "\x00", 4096, true, true},
		{"ioprobe.target/v1 size=4096", 4096, false, true}, // written before the format existed
		{"ioprobe.target/v2 size=4096", 0, false, false},
		{"ioprobe.target/v1 size=", 0, false, false},
		{"ioprobe.target/v1 size= sectors=v1", 0, false, false},
		{"ioprobe.target/v1 size=-1", 0, false, false},
		{"ioprobe.target/v1 size=0", 0, false, false},
		{"ioprobe.target/v1 size=12x", 0, false, false},
		{"ioprobe.target/v1 size=4096 sectors=v2", 0, false, false},
		{"", 0, false, false},
	}
	for _, tc := range tests {
		got, formatted, ok := parseMarker([]byte(tc.in))
		require.Equal(t, tc.ok, ok, tc.in)
		require.Equal(t, tc.want, got, tc.in)
		require.Equal(t, tc.formatted, formatted, tc.in)
	}
}
