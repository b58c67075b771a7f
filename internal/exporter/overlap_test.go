package exporter

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/config"
)

// A target's device lookup that fails while a canary runs (here its
// directory goes away; in the field another run created or removed the
// file at that moment) must not give an on-demand job on the same target
// a lock of its own: the job stops the canary and runs alone. On main the
// job ran beside the canary (testinfra's Prometheus aggregate failure).
func TestJobsOnOneTargetNeverOverlapWhenItsLookupFails(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	doc := strings.ReplaceAll(`
targets:
  data: {path: SUB/probe.dat, size: 16MiB}
jobs:
  canary: {target: data, profile: canary, continuous: true}
  adhoc: {target: data, profile: random-read, duration: 1s}
`, "SUB", sub)
	cfg, err := config.Parse("ioprobe.yaml", []byte(doc), config.Options{})
	require.NoError(t, err)
	logger := slog.New(slog.DiscardHandler)
	_, m := newRegistry(newLiveStore(), newRunStore(), newDeviceWatch(logger), newDeviceInfo("", ""), "", logger)

	var mu sync.Mutex
	var active []string // the jobs running now
	var overlaps []string
	canaryUp, adhocRan := make(chan struct{}, 100), make(chan struct{})
	run := func(ctx context.Context, r *jobRunner, trigger string, started func()) error {
		mu.Lock()
		if len(active) > 0 {
			overlaps = append(overlaps, r.job.Name+" started beside "+strings.Join(active, ", "))
		}
		active = append(active, r.job.Name)
		mu.Unlock()
		defer func() {
			mu.Lock()
			for i, n := range active {
				if n == r.job.Name {
					active = append(active[:i], active[i+1:]...)
					break
				}
			}
			mu.Unlock()
		}()
		started()
		if r.job.Name == "adhoc" {
			close(adhocRan)
			return nil
		}
		canaryUp <- struct{}{}
		<-ctx.Done() // a canary runs until a heavier run stops it
		return ctx.Err()
	}
	s := newScheduler(schedDeps{clock: wallClock{}, devices: newDevices(), m: m, logger: logger, run: run,
		deviceKey: deviceKeyOf, rand: rand.Int64N})
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		s.stop()
	}()
	s.start(ctx, cfg)

	// Deadlines here only stop a hang: nothing waits for time to pass.
	const hang = time.Minute
	select {
	case <-canaryUp:
	case <-time.After(hang):
		t.Fatal("the canary never ran")
	}
	require.NoError(t, os.Rename(sub, filepath.Join(dir, "gone")))
	ok, err := s.trigger("adhoc")
	require.True(t, ok)
	require.NoError(t, err)
	select {
	case <-adhocRan:
	case <-time.After(hang):
		t.Fatal("the on-demand job never ran")
	}
	mu.Lock()
	seen := append([]string(nil), overlaps...)
	mu.Unlock()
	require.Empty(t, seen)
	select {
	case <-canaryUp: // and the canary goes on after it
	case <-time.After(hang):
		t.Fatal("the canary did not resume")
	}
}
