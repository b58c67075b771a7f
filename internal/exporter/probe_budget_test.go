package exporter

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/config"
	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/engine/syncio"
)

// canaryStop is how long the canary of TestProbeMeasuresWhatTheBudgetLeaves
// takes to stop: most of the probe's budget, as on a loaded host.
const canaryStop = 4 * time.Second

// A probe that waits for a slow canary to stop (on a loaded host: seconds)
// measures what its budget leaves, and succeeds within it; it used to
// measure the module's whole time regardless, overrun its budget and be
// cut, every time, with nothing in the daemon's log.
func TestProbeMeasuresWhatTheBudgetLeaves(t *testing.T) {
	d, base, dir, logs := probeDaemon(t, "6s")

	// A light run on the probe's device that is slow to stop.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped := slowCanary(ctx, t, d, dir)

	// Budget 9.5 s: the old measurement (6 s, after a quarter second of
	// setup) fits it only where the canary stops at once; what is left
	// after the canary's 4 s is ample for setting up, even on a loaded
	// host, once no BPF programs are loaded for it.
	code, body := get(t, base+"/probe?target=data&module=quick&debug=true", "X-Prometheus-Scrape-Timeout-Seconds", "10")
	<-stopped
	require.Equal(t, http.StatusOK, code, body)
	require.Regexp(t, `(?m)^ioprobe_probe_success 1$`, body, "daemon log:\n%s", logs)
	m := regexp.MustCompile(`(?m)^ioprobe_probe_duration_seconds (\S+)$`).FindStringSubmatch(body)
	require.NotNil(t, m, body)
	secs, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	require.Greater(t, secs, canaryStop.Seconds(), "the probe waited for the canary")
	require.Empty(t, logs.lines("probe cut by its time budget"), "%s", logs)
}

// A budget that the wait for the device leaves too little of fails the
// probe before it measures, and the daemon's log says why, once.
func TestProbeSaysTheBudgetRanOut(t *testing.T) {
	d, base, dir, logs := probeDaemon(t, "1s")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range 2 {
		stopped := slowCanary(ctx, t, d, dir)
		// Budget 1.5 s, all of it spent waiting for the canary.
		code, body := get(t, base+"/probe?target=data&module=quick", "X-Prometheus-Scrape-Timeout-Seconds", "2")
		<-stopped
		require.Equal(t, http.StatusOK, code, body)
		require.Regexp(t, `(?m)^ioprobe_probe_success 0$`, body)
	}
	require.Len(t, logs.lines("probe cannot start"), 1, "%s", logs)
	require.Contains(t, logs.lines("probe cannot start")[0], "did not stop within the probe's time budget", "%s", logs)
}

// probeDaemon starts a daemon whose module quick probes target data (a
// 4 MiB file in dir) for maxDuration, logging to logs.
func probeDaemon(t *testing.T, maxDuration string) (d *Daemon, base, dir string, logs *syncBuffer) {
	dir = t.TempDir()
	cfg, load := loadConfig(t, dir, `
targets:
  data: {path: DIR/probe.dat, size: 4MiB}
modules:
  quick: {profile: random-read, queue_depth: 1, ramp: 0s, max_duration: `+maxDuration+`}
`, config.Options{})
	require.NoError(t, os.WriteFile(filepath.Join(dir, "probe.dat"), make([]byte, 4<<20), 0o644))
	logs = &syncBuffer{}
	d, err := New(Options{Config: cfg, Load: load, Engines: engine.NewRegistry(syncio.New()),
		Logger: slog.New(slog.NewTextHandler(logs, nil)), ProbeTimeoutOffset: DefaultProbeTimeoutOffset})
	require.NoError(t, err)
	base, _ = start(t, d)
	return d, base, dir, logs
}

// slowCanary holds the probe's device as a light run (a canary) that
// takes canaryStop to let go once asked; the channel closes when it has.
func slowCanary(ctx context.Context, t *testing.T, d *Daemon, dir string) <-chan struct{} {
	lctx, release, err := d.devices.light(ctx, deviceKeyOf(filepath.Join(dir, "probe.dat")), func(bool) {})
	require.NoError(t, err)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-lctx.Done()
		time.Sleep(canaryStop) //hygiene:sleep the slow stop this test is about, not a wait for an event
		release()
	}()
	return stopped
}
