package exporter

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/ioprobe/ioprobe/internal/config"
	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/engine/syncio"
	"github.com/ioprobe/ioprobe/internal/testcert"
	"github.com/ioprobe/ioprobe/internal/testwait"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// loadConfig writes doc (with DIR replaced by dir) to dir/ioprobe.yaml and
// loads it.
func loadConfig(t *testing.T, dir, doc string, opts config.Options) (*config.Config, func() (*config.Config, error)) {
	t.Helper()
	path := filepath.Join(dir, "ioprobe.yaml")
	require.NoError(t, os.WriteFile(path, []byte(strings.ReplaceAll(doc, "DIR", dir)), 0o644))
	load := func() (*config.Config, error) { return config.Load(path, opts) }
	cfg, err := load()
	require.NoError(t, err)
	return cfg, load
}

func testLogger(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// newDaemon builds a daemon for doc in a fresh directory.
func newDaemon(t *testing.T, doc string, web WebOptions) (*Daemon, string) {
	return newDaemonFor(t, doc, config.Options{}, web)
}

// newDaemonFor is newDaemon with the config's options (its suites).
func newDaemonFor(t *testing.T, doc string, copts config.Options, web WebOptions) (*Daemon, string) {
	t.Helper()
	dir := t.TempDir()
	cfg, load := loadConfig(t, dir, doc, copts)
	d, err := New(Options{Config: cfg, Load: load, Engines: engine.NewRegistry(syncio.New()), Logger: testLogger(t), Web: web,
		ProbeTimeoutOffset: DefaultProbeTimeoutOffset})
	require.NoError(t, err)
	return d, dir
}

// start runs d on a free port of 127.0.0.1 and returns its base URL and a
// function that stops it and returns Run's error and how long stopping took.
func start(t *testing.T, d *Daemon) (string, func() (error, time.Duration)) {
	t.Helper()
	base, stop := startNoReady(t, d)
	require.Eventually(t, func() bool {
		resp, err := client.Get(base + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, testwait.Patience, 10*time.Millisecond)
	return base, stop
}

// startNoReady is start without waiting for /-/ready.
func startNoReady(t *testing.T, d *Daemon) (string, func() (error, time.Duration)) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	d.opts.Listener = l
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	stopped := false
	//lint:ignore ST1008 the callers (several engineers' tests) read err first; not worth the churn
	stop := func() (error, time.Duration) {
		stopped = true
		t0 := time.Now()
		cancel()
		select {
		case err := <-done:
			return err, time.Since(t0)
		case <-time.After(testwait.Patience):
			t.Fatalf("Run did not return %s after its context ended", testwait.Patience)
		}
		return nil, 0
	}
	t.Cleanup(func() {
		if !stopped {
			stop()
		}
	})
	base := "http://" + l.Addr().String()
	// Wait until it listens (any answer will do).
	require.Eventually(t, func() bool {
		resp, err := client.Get(base + "/-/healthy")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	}, testwait.Patience, 10*time.Millisecond)
	return base, stop
}

// runPatience bounds a wait for whole runs (file preparation, safety
// checks, the measured time): a hang bound, as any wait for what will
// happen (testwait.Patience says why).
const runPatience = testwait.Patience

// client keeps no connections, so that no goroutine outlives a request.
var client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}

// The request and metric helpers take the test's t or the collect of
// require.EventuallyWithT (whose failures end only that attempt).

func get(t require.TestingT, url string, header ...string) (int, string) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	return do(t, http.MethodGet, url, header...)
}

func do(t require.TestingT, method, url string, header ...string) (int, string) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	code, b := send(t, method, url, nil, header...)
	return code, string(b)
}

// send makes a request with body (nil: none) and returns the answer.
func send(t require.TestingT, method, url string, body io.Reader, header ...string) (int, []byte) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	req, err := http.NewRequest(method, url, body)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b
}

// find returns the metric of family name whose labels include want.
func find(t require.TestingT, g prometheus.Gatherer, name string, want map[string]string) *dto.Metric {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	mfs, err := g.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, lp := range m.GetLabel() {
				have[lp.GetName()] = lp.GetValue()
			}
			for k, v := range want {
				if have[k] != v {
					continue next
				}
			}
			return m
		}
	}
	return nil
}

// value is the value of a gauge or counter, or -1 when it does not exist.
func value(t require.TestingT, g prometheus.Gatherer, name string, labels map[string]string) float64 {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	m := find(t, g, name, labels)
	switch {
	case m == nil:
		return -1
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	}
	return -1
}

// readAnswer reads one response from c: its status code, or "hung up".
func readAnswer(c net.Conn) string {
	// Only so that a server that never answers fails the test instead of
	// hanging it.
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Minute))
	return answer(bufio.NewReader(c))
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

func openFDs(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err) //hygiene:skip not Linux
	}
	return len(fds)
}

// fdsNow is openFDs for the collect of require.EventuallyWithT, once
// openFDs has found /proc/self/fd (reading it can fail when descriptors
// run out: the attempt fails, and the next one tries again).
func fdsNow(t require.TestingT) int {
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(fds)
}

func stacks() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}

// family is the gathered metric family name of reg; the test fails
// without it.
func family(t *testing.T, reg *prometheus.Registry, name string) *dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf
		}
	}
	require.Failf(t, "not exported", "%s", name)
	return nil
}

func answer(br *bufio.Reader) string {
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		if isTimeout(err) {
			return "still open"
		}
		return "hung up"
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return fmt.Sprint(resp.StatusCode)
}

// body is a run request on target with the given changes.
func body(target string, change func(req map[string]any)) map[string]any {
	req := map[string]any{"target": target, "specs": []any{readSpec(100)}, "ramp": "0s", "duration": "1s"}
	if change != nil {
		change(req)
	}
	return req
}

func errorOf(t *testing.T, b []byte) string {
	t.Helper()
	var e apiError
	require.NoError(t, json.Unmarshal(b, &e), string(b))
	require.NotEmpty(t, e.Error)
	require.NotContains(t, e.Error, "\n", "one line")
	return e.Error
}

// readSpec is a 4 KiB random read in the form result files carry.
func readSpec(readPct int) map[string]any {
	return map[string]any{"name": "rr", "block_sizes": []map[string]any{{"bytes": 4096, "weight": 1}},
		"read_pct": readPct, "random_pct": 100, "queue_depth": 2, "workers": 1, "engine": "sync"}
}

// postJSON sends body (bytes as they are, anything else as JSON, nil:
// none) with method, as application/json.
func postJSON(t require.TestingT, method, url string, body any) (int, []byte) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	var r io.Reader
	switch b := body.(type) {
	case nil:
		return send(t, method, url, nil)
	case []byte:
		r = bytes.NewReader(b)
	default:
		data, err := json.Marshal(body)
		require.NoError(t, err)
		r = bytes.NewReader(data)
	}
	return send(t, method, url, r, "Content-Type", "application/json")
}

// waitRun polls a run until it has ended and returns its state.
func waitRun(t *testing.T, base, id string) RunState {
	t.Helper()
	var st RunState
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		code, body := postJSON(c, http.MethodGet, base+"/api/v1/runs/"+id, nil)
		require.Equal(c, http.StatusOK, code, string(body))
		var now RunState
		require.NoError(c, json.Unmarshal(body, &now))
		require.Contains(c, []result.RunState{result.RunDone, result.RunFailed, result.RunStopped}, now.State, "the run has ended")
		st = now
	}, 30*time.Second, 50*time.Millisecond)
	return st
}

// secured is a daemon behind basic auth (prom / s3cret, and ops /
// opsword) and, when tls, TLS.
type secured struct {
	d      *Daemon
	base   string // http:// or https://
	addr   string
	client *http.Client // trusts the daemon's certificate
	tls    *tls.Config  // the client side of it (nil: plain)
}

// startSecured starts doc's daemon with a web config whose passwords are
// bcrypt hashes of cost; change, when set, adjusts the daemon first.
func startSecured(t *testing.T, doc string, useTLS bool, cost int, web WebOptions, change func(*Daemon)) *secured {
	t.Helper()
	dir := t.TempDir()
	var cfg strings.Builder
	s := &secured{}
	if useTLS {
		cert, key, pool := testcert.Write(t, dir)
		fmt.Fprintf(&cfg, "tls_server_config:\n  cert_file: %s\n  key_file: %s\n", cert, key)
		s.tls = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	}
	cfg.WriteString("basic_auth_users:\n")
	for _, u := range [][2]string{{"prom", "s3cret"}, {"ops", "opsword"}} {
		h, err := bcrypt.GenerateFromPassword([]byte(u[1]), cost)
		require.NoError(t, err)
		fmt.Fprintf(&cfg, "  %s: %s\n", u[0], h)
	}
	path := filepath.Join(dir, "web.yml")
	require.NoError(t, os.WriteFile(path, []byte(cfg.String()), 0o600))
	require.NoError(t, CheckWebConfig(path))
	web.ConfigFile = path
	d, _ := newDaemon(t, doc, web)
	if change != nil {
		change(d)
	}
	base, _ := startNoReady(t, d)
	s.d, s.addr = d, strings.TrimPrefix(base, "http://")
	s.base = base
	s.client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true, TLSClientConfig: s.tls}, Timeout: time.Minute}
	if useTLS {
		s.base = "https://" + s.addr
	}
	return s
}
