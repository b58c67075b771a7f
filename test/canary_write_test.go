package test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testloop"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// TestCanaryWriteStaysInItsRegion: the canary-write profile on a file
// ioprobe creates writes 4 KiB sequentially with an fdatasync after each,
// inside its 1 MiB region; on a blank loop device it is refused without
// --allow-destructive (device untouched) and, allowed, writes nothing
// past its first 1 MiB. On a file ioprobe did not create, and as a
// daemon job on the device, it is refused the same way. It runs the sync
// engine unless --engine says otherwise.
func TestCanaryWriteStaysInItsRegion(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	run := func(target string, extra ...string) outcome {
		// Four paced writes (at 5 a second), not a window: the runs that
		// are not refused must have written (a window beside load may
		// complete none).
		args := append(append([]string{"run", "--profile", "canary-write", "--target", target, "--output", "json"}, countedIOs(4)...), extra...)
		return ioprobe(t, dir, args...)
	}

	o := run(filepath.Join(dir, "canary.dat"))
	require.Equal(t, 0, o.code, o.stderr)
	r := decodeResult(t, o.stdout)
	require.Equal(t, workload.CanaryWriteRegion, r.Workload.RegionBytes)
	require.Equal(t, 1, r.Workload.Fdatasync)
	require.Equal(t, 0, r.Workload.ReadPct)
	require.Equal(t, 1, r.Workload.QueueDepth)
	require.Equal(t, workload.CanaryWriteIOPS, r.Workload.RateIOPS)
	require.Equal(t, workload.EngineSync, r.Workload.Engine, "fdatasync in the writing thread, as databases flush")
	require.NotNil(t, r.Summary.Sync)
	require.Positive(t, r.Summary.Sync.Ops)
	require.InDelta(t, float64(r.Summary.WriteOps), float64(r.Summary.Sync.Ops), 1, "an fdatasync after every write")

	user := filepath.Join(dir, "user.db")
	require.NoError(t, os.WriteFile(user, bytes.Repeat([]byte("a user's rows\n"), 1<<17), 0o644))
	before, err := os.ReadFile(user)
	require.NoError(t, err)
	o = run(user)
	require.Equal(t, 2, o.code, o.stderr)
	require.Contains(t, o.stderr, "it is an existing file that ioprobe did not create")
	after, err := os.ReadFile(user)
	require.NoError(t, err)
	require.True(t, bytes.Equal(before, after), "refused, yet the file changed")

	dev := testloop.Device(t, 8<<20)
	blank := make([]byte, 8<<20)
	o = run(dev)
	require.Equal(t, 2, o.code, o.stderr)
	require.Equal(t, 1, strings.Count(o.stderr, "\n"), "one line: %q", o.stderr)
	require.Contains(t, o.stderr, "block devices are read-only by default")
	b, err := os.ReadFile(dev)
	require.NoError(t, err)
	require.True(t, bytes.Equal(blank, b), "refused, yet the device changed")

	cfg := filepath.Join(dir, "ioprobe.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("targets:\n  disk: {path: "+dev+"}\njobs:\n  cw: {target: disk, profile: canary-write, continuous: true}\n"), 0o644))
	o = ioprobe(t, dir, "serve", "--config.check", cfg)
	require.Equal(t, 2, o.code, o.stderr)
	require.Contains(t, o.stderr, "job cw cannot start: refusing to write to "+dev)

	o = run(dev, "--allow-destructive", "--engine", "uring")
	if strings.Contains(o.stderr, "cannot run here") {
		o = run(dev, "--allow-destructive")
	}
	require.Equal(t, 0, o.code, o.stderr)
	r = decodeResult(t, o.stdout)
	require.Positive(t, r.Summary.WriteOps)
	b, err = os.ReadFile(dev)
	require.NoError(t, err)
	region := int(workload.CanaryWriteRegion)
	require.False(t, bytes.Equal(blank[:region], b[:region]), "the canary wrote its region")
	require.True(t, bytes.Equal(blank[region:], b[region:]), "nothing past the 1 MiB region changed")
}
