package exporter

import (
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/config"
	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/engine/syncio"
)

// Probes of a target whose directory is missing fail (probe_success 0),
// and the daemon's log says so once, not once per probe; once the
// directory exists the next probe measures, and the log says so once.
func TestProbeFailuresLoggedOnce(t *testing.T) {
	dir := t.TempDir()
	cfg, load := loadConfig(t, dir, `
targets:
  data: {path: DIR/state/probe.dat, size: 4MiB}
modules:
  quick: {profile: random-read, queue_depth: 1, max_duration: 200ms}
`, config.Options{})
	logs := &syncBuffer{}
	d, err := New(Options{Config: cfg, Load: load, Engines: engine.NewRegistry(syncio.New()),
		Logger: slog.New(slog.NewTextHandler(logs, nil)), ProbeTimeoutOffset: DefaultProbeTimeoutOffset})
	require.NoError(t, err)
	base, _ := start(t, d)
	for range 3 {
		code, body := get(t, base+"/probe?target=data&module=quick")
		require.Equal(t, http.StatusOK, code, body)
		require.Regexp(t, `(?m)^ioprobe_probe_success 0$`, body)
	}
	require.Len(t, logs.lines("probe cannot start"), 1, "%s", logs)
	require.Contains(t, logs.lines("probe cannot start")[0], "does not exist")

	require.NoError(t, os.Mkdir(filepath.Join(dir, "state"), 0o755))
	code, body := get(t, base+"/probe?target=data&module=quick")
	require.Equal(t, http.StatusOK, code, body)
	require.Regexp(t, `(?m)^ioprobe_probe_success 1$`, body, "the sample, not the HELP line (which says \"ioprobe_probe_success 1 if\")")
	require.Len(t, logs.lines("probes start again"), 1, "%s", logs)
	require.Contains(t, logs.lines("probes start again")[0], "failed_probes=3")
	require.Len(t, logs.lines("probe cannot start"), 1)
}
