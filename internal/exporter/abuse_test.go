//go:build unix

package exporter

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// The daemon under abuse: a canary runs, a long probe holds the only
// probe slot, silent and idle connections are held open, and a storm of
// hundreds of concurrent requests — good ones, malformed ones, wrong
// methods, oversized headers, garbage, truncated ones — gets answers that
// do not wait for anything (503 when busy, 400 for bad input, never a
// queue), holds memory within a bound, and leaves no goroutine and no
// descriptor behind, neither while the daemon runs nor after it stops.
//
// Nothing here depends on how fast the machine is. The server keeps its
// own timeouts (10 s for a request's headers): the storm used to run with
// 1 s ones, and on a loaded machine a well-formed request whose goroutine
// waited a second to be scheduled was hung up on like a silent client.
// That servers hang up on silent clients is TestSilentClientsAreHungUp's,
// with nothing else running.
const abuseConfig = `
global:
  snapshot_interval: 100ms
  max_concurrent_probes: 1
  run_history: 1000
targets:
  data: {path: DIR/probe.dat, size: 16MiB}
jobs:
  canary: {target: data, profile: canary, rate_iops: 100, continuous: true, duration: 1h}
  adhoc: {target: data, profile: random-read, queue_depth: 2, duration: 200ms, ramp: 0s}
modules:
  quick: {profile: random-read, queue_depth: 1, max_duration: 200ms}
  long: {profile: random-read, queue_depth: 1, rate_iops: 50, max_duration: 5m}
`

// stormRequests is the mix fired at once: each kind this many times.
const stormEach = 20

func TestDaemonUnderAbuse(t *testing.T) {
	if testing.Short() {
		t.Skip("the storm takes a few seconds") //hygiene:skip -short leaves out the long tests
	}
	gStart, fdStart := runtime.NumGoroutine(), openFDs(t)
	d, _ := newDaemon(t, abuseConfig, WebOptions{EnableAdminAPI: true, EnableLifecycle: true})
	base, stop := start(t, d)
	addr := strings.TrimPrefix(base, "http://")
	reg := d.Registry()
	canary := map[string]string{"ioprobe_job": "canary", "op": "read"}
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Greater(c, value(c, reg, "ioprobe_io_operations_total", canary), 5.0) },
		time.Minute, 20*time.Millisecond, "the canary runs")
	// Results as a long job's: a thousand intervals each, so that every
	// GET /api/v1/runs answer is megabytes.
	for i := 0; i < 25; i++ {
		d.history.add(&Run{Job: "adhoc", Target: "data", Status: result.StatusOK, Result: &result.Result{Schema: result.Schema,
			Intervals: make([]result.Interval, 1000)}}, 1000)
	}

	// A scrape timeout too short to measure is a failed probe that does
	// not stop the canary.
	interrupted := map[string]string{"ioprobe_job": "canary", "status": "interrupted"}
	before := value(t, reg, "ioprobe_job_runs_total", interrupted)
	for i := 0; i < 3; i++ {
		code, body := get(t, base+"/probe?target=data&module=quick", "X-Prometheus-Scrape-Timeout-Seconds", "0.3")
		require.Equal(t, http.StatusOK, code)
		require.Contains(t, body, "ioprobe_probe_success 0")
	}
	require.Equal(t, before, value(t, reg, "ioprobe_job_runs_total", interrupted), "a probe with no time to measure stopped the canary")

	gRest, fdRest := runtime.NumGoroutine(), openFDs(t)
	heapRest := heapInuse()

	// A long probe takes the only slot (and the device: the canary pauses).
	longCtx, cancelLong := context.WithCancel(context.Background())
	defer cancelLong()
	var long sync.WaitGroup
	long.Add(1)
	go func() {
		defer long.Done()
		req, _ := http.NewRequestWithContext(longCtx, http.MethodGet, base+"/probe?target=data&module=long", nil)
		// Ended by cancelLong alone: the shared client's 30 s timeout
		// ended it while a storm under -race on a loaded machine lasted
		// longer.
		untimed := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		if resp, err := untimed.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	require.Eventually(t, func() bool { return d.probes.busy() == 1 }, time.Minute, 10*time.Millisecond)

	// Silent connections (headers never finished) and an idle kept-alive
	// one stay open through the storm: they hold no place anyone waits for.
	held := holdConnections(t, addr)

	var peak atomic.Uint64
	sampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if h := heapNow(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-sampling:
				return
			case <-tick.C:
			}
		}
	}()

	reqs := stormMix(base)
	codes := make([]string, len(reqs))
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				codes[i] = reqs[i].do(addr)
			}
		}()
	}
	for i := range reqs {
		work <- i
	}
	close(work)
	wg.Wait()
	close(sampling)
	<-sampled
	held.release(t)

	// Every probe asked for meanwhile was turned away at once: the long
	// one still holds the slot.
	require.Equal(t, 1, d.probes.busy(), "the long probe ended during the storm")
	seen := map[string]map[string]int{}
	for i, r := range reqs {
		if seen[r.kind] == nil {
			seen[r.kind] = map[string]int{}
		}
		seen[r.kind][codes[i]]++
		require.Contains(t, r.want, codes[i], "%s: %s %s", r.kind, r.method, r.target)
	}
	t.Logf("%d requests: %v; heap in use %d MiB at rest, %d MiB at most during the storm", len(reqs), seen, heapRest>>20, peak.Load()>>20)
	require.Equal(t, float64(stormEach), value(t, reg, "ioprobe_probe_rejected_total", map[string]string{"reason": "concurrency"}))
	require.Positive(t, seen["runs"]["200"], "some run API requests were served")
	require.Less(t, peak.Load()-min(peak.Load(), heapRest), uint64(160<<20), "heap in use grew by %d MiB during the storm", (peak.Load()-heapRest)>>20)

	cancelLong()
	long.Wait()
	// The job triggered during the storm ran once its device was free.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		jr := d.sched.runner("adhoc")
		assert.Equal(c, stateIdle, jr.state.Load(), "the job is idle")
		assert.Empty(c, jr.trigger, "no trigger pending")
		assert.Equal(c, 1.0, value(c, reg, "ioprobe_run_active", map[string]string{"ioprobe_job": "canary"}), "the canary runs")
	}, time.Minute, 10*time.Millisecond)

	// Back where it was: the canary running, nothing else. (EventuallyWithT
	// runs its condition on a goroutine of its own: one more.)
	if !assert.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.LessOrEqual(c, runtime.NumGoroutine()-1, gRest, "goroutines, against their count at rest")
		assert.LessOrEqual(c, fdsNow(c), fdRest, "descriptors, against their count at rest")
	}, time.Minute, 20*time.Millisecond) {
		t.Fatalf("not back at rest after the storm:\n%s", stacks())
	}
	after := heapInuse()
	t.Logf("heap in use after the storm: %d MiB", after>>20)
	require.Less(t, after, heapRest+16<<20, "heap in use after the storm")

	err, _ := stop()
	require.NoError(t, err)
	if !assert.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.LessOrEqual(c, runtime.NumGoroutine()-1, gStart, "goroutines, against their count before starting")
		assert.LessOrEqual(c, fdsNow(c), fdStart, "descriptors, against their count before starting")
	}, time.Minute, 20*time.Millisecond) {
		t.Fatalf("not back where it started after stopping:\n%s", stacks())
	}
}

// stormReq is one request of the storm and the answers it may get.
type stormReq struct {
	kind           string
	method, target string
	header         [2]string
	raw            string // sent as it is on a connection of its own
	want           []string
}

func stormMix(base string) []stormReq {
	var reqs []stormReq
	add := func(r stormReq) {
		for i := 0; i < stormEach; i++ {
			reqs = append(reqs, r)
		}
	}
	busy, bad := []string{"503"}, []string{"400"}
	add(stormReq{kind: "probe", method: "GET", target: "/probe?target=data&module=quick", header: [2]string{"X-Prometheus-Scrape-Timeout-Seconds", "5"}, want: busy})
	for _, q := range []string{"target=data&module=nope", "target=nope&module=quick", "target=/etc/passwd&module=quick",
		"module=quick", "target=data", "target=data&module=quick&%zz", "target=data;module=quick"} {
		add(stormReq{kind: "probe-bad", method: "GET", target: "/probe?" + q, want: bad})
	}
	for _, v := range []string{"NaN", "Inf", "-1", "0", "1e", "ten"} {
		add(stormReq{kind: "probe-timeout", method: "GET", target: "/probe?target=data&module=quick", header: [2]string{"X-Prometheus-Scrape-Timeout-Seconds", v}, want: bad})
	}
	for _, mp := range [][2]string{{"POST", "/probe"}, {"DELETE", "/metrics"}, {"PUT", "/api/v1/runs"}, {"GET", "/api/v1/jobs/adhoc/run"}, {"PATCH", "/-/reload"}} {
		add(stormReq{kind: "method", method: mp[0], target: mp[1], want: []string{"405"}})
	}
	add(stormReq{kind: "path", method: "GET", target: "/" + strings.Repeat("x/", 500), want: []string{"404"}})
	for i := 0; i < 3; i++ { // the heavy one
		add(stormReq{kind: "runs", method: "GET", target: "/api/v1/runs", want: []string{"200", "503"}})
	}
	add(stormReq{kind: "runs", method: "GET", target: "/api/v1/runs?job=adhoc&limit=3", want: []string{"200", "503"}})
	for _, l := range []string{"-1", "x", "99999999999999999999"} {
		add(stormReq{kind: "runs-bad", method: "GET", target: "/api/v1/runs?limit=" + l, want: bad})
	}
	add(stormReq{kind: "jobs", method: "GET", target: "/api/v1/jobs", want: []string{"200", "503"}})
	add(stormReq{kind: "metrics", method: "GET", target: "/metrics", want: []string{"200", "503"}})
	add(stormReq{kind: "trigger", method: "POST", target: "/api/v1/jobs/adhoc/run", want: []string{"202", "409"}})
	add(stormReq{kind: "trigger", method: "POST", target: "/api/v1/jobs/canary/run", want: []string{"409"}})
	add(stormReq{kind: "trigger", method: "POST", target: "/api/v1/jobs/" + url.PathEscape("../../x") + "/run", want: []string{"404"}})
	add(stormReq{kind: "reload", method: "POST", target: "/-/reload", want: []string{"200"}})
	add(stormReq{kind: "health", method: "GET", target: "/-/ready", want: []string{"200"}})
	add(stormReq{kind: "huge-header", method: "GET", target: "/metrics", header: [2]string{"X-Junk", strings.Repeat("j", 256<<10)}, want: []string{"431"}})
	add(stormReq{kind: "garbage", raw: "\x00\xff GARBAGE \r\n\r\n", want: []string{"400"}})
	add(stormReq{kind: "garbage", raw: "GET /metrics HTTP/9.9\r\n\r\n", want: []string{"505"}})
	add(stormReq{kind: "garbage", raw: "GET /metrics HTTP/1.1\r\nHost: localhost\r\nContent-Length: -5\r\n\r\n", want: []string{"400"}})
	// Truncated: a request line cut short, a body shorter than announced.
	add(stormReq{kind: "truncated", raw: "GET /probe?target=da", want: []string{"400", "closed"}})
	add(stormReq{kind: "truncated", raw: "POST /api/v1/jobs/adhoc/run HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000\r\n\r\nabc", want: []string{"202", "409"}})
	_ = base
	return reqs
}

// do sends the request and returns the status code it got (or what
// happened to the connection).
func (r stormReq) do(addr string) string {
	if r.raw == "" {
		req, err := http.NewRequest(r.method, "http://"+addr+r.target, nil)
		if err != nil {
			return "bad request: " + err.Error()
		}
		if r.header[0] != "" {
			req.Header.Set(r.header[0], r.header[1])
		}
		resp, err := stormClient.Do(req)
		if err != nil {
			return "error: " + err.Error()
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return fmt.Sprint(resp.StatusCode)
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return "error: " + err.Error()
	}
	defer conn.Close()
	// Only so that a server that never answers fails the test instead of
	// hanging it.
	_ = conn.SetDeadline(time.Now().Add(2 * time.Minute))
	if _, err := io.WriteString(conn, r.raw); err != nil {
		return "error: " + err.Error()
	}
	if cw, ok := conn.(*net.TCPConn); ok && !strings.Contains(r.raw, "\r\n\r\n") {
		_ = cw.CloseWrite() // truncated: the client is gone
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return "closed"
	}
	resp.Body.Close()
	return fmt.Sprint(resp.StatusCode)
}

// stormClient keeps no connections, like client, and gives a request two
// minutes (a liveness guard only): a storm under -race on a loaded machine
// outlasted client's 30 s.
var stormClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 2 * time.Minute}

// heldConns are connections a client keeps open and silent: some sent
// headers that never end, one got its answer and keeps the connection
// alive without a second request.
type heldConns struct{ silent, idle []net.Conn }

func holdConnections(t *testing.T, addr string) *heldConns {
	t.Helper()
	h := &heldConns{}
	dial := func(raw string) net.Conn {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		_, err = io.WriteString(c, raw)
		require.NoError(t, err)
		return c
	}
	for i := 0; i < stormEach; i++ {
		h.silent = append(h.silent, dial("GET /metrics HTTP/1.1\r\nHost: localhost\r\n"))
		c := dial("GET /-/healthy HTTP/1.1\r\nHost: localhost\r\n\r\n")
		require.Equal(t, "200", readAnswer(c), "the answer before a kept-alive connection goes idle")
		h.idle = append(h.idle, c)
	}
	return h
}

// release checks that the server answered no held connection during the
// storm (a silent client's request was never complete; an idle one asked
// for nothing more), then closes them all. Whether the server hung up on
// one meanwhile depends on how long the storm took against its timeouts.
func (h *heldConns) release(t *testing.T) {
	t.Helper()
	for _, c := range append(h.silent, h.idle...) {
		require.Contains(t, []string{"open, nothing to read", "hung up"}, peek(t, c))
		require.NoError(t, c.Close())
	}
}

// peek says, without waiting, what a connection has for its reader.
func peek(t *testing.T, c net.Conn) string {
	t.Helper()
	rc, err := c.(*net.TCPConn).SyscallConn()
	require.NoError(t, err)
	var n int
	var rerr error
	require.NoError(t, rc.Control(func(fd uintptr) {
		var b [1]byte
		n, _, rerr = unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
	}))
	switch {
	case errors.Is(rerr, unix.EAGAIN):
		return "open, nothing to read"
	case rerr != nil:
		return "error: " + rerr.Error()
	case n == 0:
		return "hung up"
	}
	return "an answer"
}

// The server hangs up on a client that never finishes its headers and on
// a kept-alive connection left idle (ReadHeaderTimeout, IdleTimeout): such
// clients cannot pile up. Only the order is asserted: the server closes
// each connection before the client gives up waiting.
func TestSilentClientsAreHungUp(t *testing.T) {
	d, _ := newDaemon(t, "targets:\n  data: {path: DIR/probe.dat, size: 16MiB}\nmodules:\n  quick: {profile: random-read, max_duration: 200ms}\n", WebOptions{})
	d.readHeaderTimeout, d.idleTimeout = 100*time.Millisecond, 100*time.Millisecond
	base, stop := start(t, d)
	addr := strings.TrimPrefix(base, "http://")
	dial := func(raw string) net.Conn {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		_, err = io.WriteString(c, raw)
		require.NoError(t, err)
		return c
	}
	silent := dial("GET /metrics HTTP/1.1\r\nHost: localhost\r\n")
	idle := dial("GET /-/healthy HTTP/1.1\r\nHost: localhost\r\n\r\n")
	require.Equal(t, "200", readAnswer(idle))
	// A server that times a silent client out answers 408 before it hangs
	// up, or hangs up at once; either way the connection ends.
	require.Contains(t, []string{"hung up", "408"}, readAnswer(silent))
	require.Equal(t, "hung up", readAnswer(idle))
	err, _ := stop()
	require.NoError(t, err)
}

// busy is how many requests hold a place.
func (l *limiter) busy() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.active
}

// heapInuse is the heap in use after two collections: the first moves
// what sync.Pools hold (encoding/json's buffers of megabytes among them)
// to their victim caches, the second frees it.
func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	return heapNow()
}

// heapNow is the heap in use now, garbage included.
func heapNow() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// A reload that removes a job drops its runs; one that lowers
// run_history trims the others.
func TestHistoryForget(t *testing.T) {
	h := newHistory()
	for i := 0; i < 5; i++ {
		h.add(&Run{Job: "kept"}, 10)
		h.add(&Run{Job: "removed"}, 10)
	}
	h.forget(func(job string) int {
		if job == "kept" {
			return 2
		}
		return 0
	})
	runs := h.list("", 0)
	require.Len(t, runs, 2)
	require.Equal(t, []uint64{9, 7}, []uint64{runs[0].ID, runs[1].ID})
	require.Equal(t, "kept", runs[1].Job)
}
