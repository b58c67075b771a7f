package test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ioprobe/ioprobe/internal/testwait"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What the end-to-end tests that run the daemon share: starting
// `ioprobe serve` and a Prometheus of their own, and querying it.

// daemon is a running `ioprobe serve`.
type daemon struct {
	cmd    *exec.Cmd
	addr   string
	mu     sync.Mutex
	stderr bytes.Buffer
	exited chan struct{}
}

func (d *daemon) log() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stderr.String()
}

var listenRE = regexp.MustCompile(`msg="Listening on" address=(\S+)`)

// startDaemon starts the binary on a free port of 127.0.0.1 and returns
// once it listens.
func startDaemon(t *testing.T, args ...string) *daemon {
	t.Helper()
	return startDaemonAs(t, binary, nil, args...)
}

// startDaemonAs is startDaemon with another copy of the binary, run with
// cred (nil: as this process).
func startDaemonAs(t *testing.T, bin string, cred *syscall.Credential, args ...string) *daemon {
	t.Helper()
	// A free port unless the test names its own: --web.listen-address is
	// repeatable, and with both the daemon listened on two ports and the
	// first "Listening on" line, either of them, was taken as its address.
	if !slices.Contains(args, "--web.listen-address") {
		args = append([]string{"--web.listen-address", "127.0.0.1:0"}, args...)
	}
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	return superviseDaemon(t, cmd)
}

// superviseDaemon starts cmd, an `ioprobe serve` however it is wrapped,
// and returns once it listens; killed at cleanup by its pid.
func superviseDaemon(t *testing.T, cmd *exec.Cmd) *daemon {
	t.Helper()
	d := &daemon{cmd: cmd, exited: make(chan struct{})}
	pipe, err := d.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, d.cmd.Start())
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			d.mu.Lock()
			d.stderr.WriteString(line + "\n")
			d.mu.Unlock()
			if m := listenRE.FindStringSubmatch(line); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
		close(d.exited)
	}()
	t.Cleanup(func() {
		_ = d.cmd.Process.Kill()
		<-d.exited
		_ = d.cmd.Wait()
		if t.Failed() {
			t.Logf("ioprobe serve stderr:\n%s", d.log())
		}
	})
	select {
	case d.addr = <-addr:
	case <-d.exited:
		t.Fatalf("ioprobe serve exited:\n%s", d.log())
	case <-time.After(testwait.Patience):
		t.Fatalf("ioprobe serve did not listen:\n%s", d.log())
	}
	return d
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// startPrometheus runs a Prometheus server s of its own on a free port,
// with the flags that s needs for the shipped config.
func startPrometheus(t *testing.T, s promServer, cfg string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644))
	addr := freePort(t)
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	require.NoError(t, err)
	flags := s.flags()
	cmd := exec.Command(s.prometheus, append([]string{
		"--config.file=" + filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr,
	}, flags...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("%s %v log (tail):\n%s", s.name, flags, tail(string(b), 3000))
		}
	})
	base := "http://" + addr
	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	}, promPatience*20*time.Second, 100*time.Millisecond, "%s did not become ready", s.name)
	return base
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// sample is one element of a Prometheus query's result: an instant
// query's sample, or a range query's series.
type sample struct {
	Metric     map[string]string `json:"metric"`
	Value      []any             `json:"value"`
	Histogram  []any             `json:"histogram"`
	Values     [][]any           `json:"values"`
	Histograms [][]any           `json:"histograms"`
}

func query(t require.TestingT, prom, q string) []sample {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	resp, err := http.Get(prom + "/api/v1/query?query=" + url.QueryEscape(q))
	require.NoError(t, err)
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []sample `json:"result"`
		} `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
	require.Equal(t, "success", r.Status, "%s: %s", q, r.Error)
	return r.Data.Result
}

// promPatience stretches every wait on a Prometheus answer: within is
// what it takes on a quiet machine. make test runs the tests that start
// Prometheus beside its other tests (scripts/test.sh), and on a loaded
// 2-core machine the dashboards' three suites (41 points) took longer
// than the 60 s allowed. A wait ends as soon as the answer comes: a
// longer one costs only a failing test's time.
const promPatience = 5

// eventually polls a query until it returns at least one sample, for
// promPatience times within at most.
func eventually(t *testing.T, prom, q string, within time.Duration) []sample {
	t.Helper()
	within *= promPatience
	var got []sample
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		s := query(c, prom, q)
		require.NotEmpty(c, s)
		got = s
	}, within, 250*time.Millisecond, "no result for %s", q)
	return got
}

// promResult is the data of a Prometheus query API answer.
type promResult struct {
	ResultType string `json:"resultType"`
	// Result holds an instant query's samples (vector) or a range query's
	// series (matrix).
	Result []sample `json:"result"`
}

// promGet calls a Prometheus HTTP API and returns its data, or the error
// Prometheus gave.
func promGet(prom, path string, params url.Values, data any) error {
	resp, err := http.Get(prom + path + "?" + params.Encode())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var r struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return err
	}
	if r.Status != "success" {
		return fmt.Errorf("%s", r.Error)
	}
	return json.Unmarshal(r.Data, data)
}

// queryAt runs an instant query evaluated at a given time.
func queryAt(prom, q string, at time.Time) (promResult, error) {
	var r promResult
	err := promGet(prom, "/api/v1/query", url.Values{"query": {q}, "time": {unixSeconds(at)}}, &r)
	return r, err
}

// queryRange runs a range query.
func queryRange(prom, q string, start, end time.Time, step time.Duration) (promResult, error) {
	var r promResult
	err := promGet(prom, "/api/v1/query_range", url.Values{"query": {q}, "start": {unixSeconds(start)}, "end": {unixSeconds(end)},
		"step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)}}, &r)
	return r, err
}

func unixSeconds(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixNano())/1e9, 'f', 3, 64)
}

// float is the value of an instant sample.
func (s sample) float(t require.TestingT) float64 {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	require.Len(t, s.Value, 2, "%v", s)
	v, err := strconv.ParseFloat(s.Value[1].(string), 64)
	require.NoError(t, err)
	return v
}
