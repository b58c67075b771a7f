package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func testGlobals() (*globalOptions, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &globalOptions{stdout: &out, stderr: &errb, engines: newEngines()}, &out, &errb
}

func TestServeConfigCheck(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	require.NoError(t, os.WriteFile(good, []byte("targets:\n  d: {path: "+dir+"/p.dat}\njobs:\n  c: {target: d, profile: canary, continuous: true}\n"), 0o644))
	g, out, _ := testGlobals()
	require.Equal(t, ExitOK, execute(context.Background(), g, []string{"serve", "--config.check", good}))
	require.Equal(t, good+": ok: 1 target(s), 1 job(s) [c (continuous)], 0 module(s) []\n", out.String())

	// A daemon for the run API only: its limits are checked and said.
	apiOnly := filepath.Join(dir, "api.yaml")
	require.NoError(t, os.WriteFile(apiOnly, []byte("api: {runs: {max_duration: 5m, allow_writes: false}}\ntargets:\n  d: {path: "+dir+"/p.dat}\n"), 0o644))
	g, out, _ = testGlobals()
	require.Equal(t, ExitOK, execute(context.Background(), g, []string{"serve", "--config.check", apiOnly}))
	require.Equal(t, apiOnly+": ok: 1 target(s), 0 job(s) [], 0 module(s) [], run API runs up to 5m0s (ramp 2m0s), qd 256, 64 workers, start 10m0s ahead, writes false, 50 kept\n", out.String())
	require.NoError(t, os.WriteFile(apiOnly, []byte("api: {runs: {max_workers: 0}}\ntargets:\n  d: {path: "+dir+"/p.dat}\n"), 0o644))
	g, _, errb := testGlobals()
	require.Equal(t, ExitBadInput, execute(context.Background(), g, []string{"serve", "--config.check", apiOnly}))
	require.Equal(t, "ioprobe: "+apiOnly+":1: api.runs.max_workers: must be between 1 and 1024 (got 0)\n", errb.String())

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("targets:\n  d: {path: p.dat}\nmodules:\n  m: {profile: nope}\n"), 0o644))
	g, out, errb = testGlobals()
	require.Equal(t, ExitBadInput, execute(context.Background(), g, []string{"serve", "--config.check", bad}))
	require.Empty(t, out.String())
	require.Equal(t, "ioprobe: "+bad+`:2: targets.d.path: must be an absolute path (got "p.dat")`+"\n"+
		"ioprobe: "+bad+`:4: modules.m.profile: unknown profile "nope" (known: all-in-one, canary, canary-write, cpu-cost, exchange-db, file-server, log, oltp, random-read, random-write, sequential-read, sequential-write, video-on-demand)`+"\n", errb.String())

	// Valid, but it cannot work on this machine: every problem, exit 2,
	// nothing created.
	nowhere := filepath.Join(dir, "nowhere")
	unrunnable := filepath.Join(dir, "unrunnable.yaml")
	require.NoError(t, os.WriteFile(unrunnable, []byte("targets:\n  d: {path: "+nowhere+"/p.dat}\n  n: {path: /dev/null}\njobs:\n  c: {target: d, profile: canary, continuous: true}\n  z: {target: n, profile: random-read}\n"), 0o644))
	g, out, errb = testGlobals()
	require.Equal(t, ExitBadInput, execute(context.Background(), g, []string{"serve", "--config.check", unrunnable}))
	require.Empty(t, out.String())
	require.Equal(t, "ioprobe: "+unrunnable+":2: targets.d.path: job c cannot start: target "+nowhere+"/p.dat: cannot create it: directory "+nowhere+" does not exist\n"+
		"ioprobe: "+unrunnable+":3: targets.n.path: job z cannot start: target /dev/null: is a character device; a target is a regular file or a block device\n", errb.String())
	_, err := os.Stat(filepath.Join(dir, "p.dat"))
	require.ErrorIs(t, err, os.ErrNotExist)

	for _, args := range [][]string{
		{"serve"},
		{"serve", "--config.check", filepath.Join(dir, "missing.yaml")},
		{"serve", "--config", good, "--log.level", "loud"},
		{"serve", "--config", good, "--web.config.file", filepath.Join(dir, "missing-web.yml")},
	} {
		g, _, errb := testGlobals()
		require.Equal(t, ExitBadInput, execute(context.Background(), g, args), "%v: %s", args, errb.String())
		require.NotEmpty(t, errb.String())
	}
}

// runServe returns nil (exit 0) when its context ends.
func TestServeStopsOnCancel(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("targets:\n  d: {path: "+dir+"/p.dat, size: 4MiB}\nmodules:\n  m: {profile: random-read}\n"), 0o644))
	g, _, errb := testGlobals()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		done <- execute(ctx, g, []string{"serve", "--config", cfg, "--web.listen-address", "127.0.0.1:0"})
	}()
	time.Sleep(200 * time.Millisecond)
	cancel()
	select {
	case code := <-done:
		require.Equal(t, ExitOK, code, errb.String())
	case <-time.After(5 * time.Second):
		t.Fatal("serve did not stop")
	}
}
