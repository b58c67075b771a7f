package cli

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

func TestParseStartAt(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at, err := parseStartAt("+30s", now)
	require.NoError(t, err)
	require.True(t, at.Equal(now.Add(30*time.Second)))
	at, err = parseStartAt("2026-12-01T10:00:00+01:00", now)
	require.NoError(t, err)
	require.True(t, at.Equal(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)))
	at, err = parseStartAt("2026-11-30T12:00:00.5Z", now)
	require.NoError(t, err)
	require.True(t, at.Equal(now.Add(500*time.Millisecond)))
	for _, v := range []string{"2026-11-30T12:00:00Z", "2026-11-30T11:00:00Z", "+0s", "+-1s", "+1", "10:00", "2026-12-01T10:00:00", ""} {
		_, err := parseStartAt(v, now)
		var fe *workload.FieldError
		require.ErrorAs(t, err, &fe, v)
		require.Equal(t, "--start-at", fe.Field)
		require.Equal(t, ExitBadInput, exitCode(err))
	}
	_, err = parseStartAt("2026-11-30T11:59:58Z", now)
	require.ErrorContains(t, err, "already past (2s ago)")
}
