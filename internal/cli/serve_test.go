package cli

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sync"
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

// runServe returns nil (exit 0) when its context ends: a daemon that
// serves — it listens and answers /-/healthy — stops when its context is
// cancelled and exits 0. It waits for the daemon to listen rather than a
// while: a serve that never listens, or ends by itself, fails the test.
func TestServeStopsOnCancel(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("targets:\n  d: {path: "+dir+"/p.dat, size: 4MiB}\nmodules:\n  m: {profile: random-read}\n"), 0o644))
	g, _, _ := testGlobals()
	logs := newServeLog()
	g.stderr = logs
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- execute(ctx, g, []string{"serve", "--config", cfg, "--web.listen-address", "127.0.0.1:0"})
	}()
	var addr string
	select {
	case addr = <-logs.listening:
	case code := <-done:
		t.Fatalf("serve ended (exit %d) before it listened:\n%s", code, logs)
	case <-time.After(time.Minute):
		t.Fatalf("serve did not listen:\n%s", logs)
	}
	resp, err := http.Get("http://" + addr + "/-/healthy")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	select {
	case code := <-done:
		t.Fatalf("serve ended (exit %d) before its context did:\n%s", code, logs)
	default:
	}

	cancel()
	select {
	case code := <-done:
		require.Equal(t, ExitOK, code, logs.String())
	case <-time.After(time.Minute):
		t.Fatalf("serve did not stop when its context ended:\n%s", logs)
	}
	require.Contains(t, logs.String(), "msg=stopped")
}

// serveLog is serve's stderr, written by its goroutines and read by the
// test: it sends the address of the first "Listening on" line.
type serveLog struct {
	mu        sync.Mutex
	b         bytes.Buffer
	listening chan string
}

var listeningRE = regexp.MustCompile(`msg="Listening on" address=(\S+)`)

func newServeLog() *serveLog { return &serveLog{listening: make(chan string, 1)} }

func (l *serveLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Write(p)
	if m := listeningRE.FindSubmatch(p); m != nil {
		select {
		case l.listening <- string(m[1]):
		default:
		}
	}
	return len(p), nil
}

func (l *serveLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
