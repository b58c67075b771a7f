package test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testdeps"
)

// rebindPage is what an attacker's page does once its name points at the
// daemon: same-origin requests to every endpoint that runs or reads
// something, each status written into the page ("runs=202 jobs=202 …";
// 0 when the request itself failed).
const rebindPage = `<!doctype html><html><body><pre id="out">pending</pre><script>
(async () => {
  const json = {'Content-Type': 'application/json'};
  const spec = {block_sizes: [{bytes: 4096, weight: 1}], read_pct: 100, random_pct: 100, queue_depth: 1, workers: 1, engine: 'sync'};
  const tries = [
    ['runs', '/api/v1/runs', {method: 'POST', headers: json, body: JSON.stringify({target: 'data', specs: [spec], ramp: '0s', duration: '200ms'})}],
    ['job', '/api/v1/jobs/adhoc/run', {method: 'POST'}],
    ['reload', '/-/reload', {method: 'POST'}],
    ['results', '/api/v1/runs', {}],
    ['metrics', '/metrics', {}],
  ];
  const out = [];
  for (const [name, path, init] of tries) {
    let status = 0;
    try { status = (await fetch(path, init)).status; } catch (e) {}
    out.push(name + '=' + status);
  }
  document.getElementById('out').textContent = out.join(' ');
})();
</script></body></html>`

// rebinder stands where DNS rebinding puts the daemon: the first
// connection to it asks for the attacker's page and gets it (then is
// closed, so the browser connects again), and every other connection is
// spliced, byte for byte, to the daemon, as if the page's name now
// resolved to the daemon's address. It returns its port.
func rebinder(t *testing.T, daemonAddr string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
	})
	serve := func(c net.Conn) {
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(time.Minute))
		br := bufio.NewReader(c)
		line, err := br.Peek(len("GET /attack "))
		if err != nil {
			return
		}
		if string(line) == "GET /attack " {
			if _, err := http.ReadRequest(br); err == nil {
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(rebindPage), rebindPage)
			}
			return
		}
		up, err := net.DialTimeout("tcp", daemonAddr, 10*time.Second)
		if err != nil {
			return
		}
		defer up.Close()
		_ = up.SetDeadline(time.Now().Add(time.Minute))
		done := make(chan struct{})
		go func() {
			_, _ = io.Copy(c, up)
			c.Close()
			close(done)
		}()
		_, _ = io.Copy(up, br)
		up.Close()
		<-done
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				serve(c)
			}()
		}
	}()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

var outRE = regexp.MustCompile(`<pre id="out">([^<]*)</pre>`)

// openInChromium loads url in headless Chromium, whose resolver maps
// rebind.test to 127.0.0.1, lets its scripts and their requests finish,
// and returns what the page wrote into #out.
func openInChromium(t *testing.T, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "chromium", "--headless", "--no-sandbox", "--disable-gpu",
		"--host-resolver-rules=MAP rebind.test 127.0.0.1", "--user-data-dir="+t.TempDir(),
		"--no-first-run", "--disable-background-networking", "--disable-component-update",
		// Virtual time stands still while requests are pending: the
		// page's five requests all end before the DOM is dumped.
		"--virtual-time-budget=30000", "--dump-dom", url)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "chromium: %s", tail(stderr.String(), 3000))
	m := outRE.FindStringSubmatch(stdout.String())
	require.NotNil(t, m, "no #out in the page Chromium dumped:\n%s", tail(stdout.String(), 3000))
	return m[1]
}

// TestServeRefusesDNSRebinding: a real page, loaded by headless Chromium
// from http://rebind.test:PORT/ and then talking to the daemon under
// that name (the daemon has no basic auth and the admin API and lifecycle
// on, as the round-3 tester found it), starts no run, triggers no job,
// reloads nothing and reads no result: every request is 421. On main the
// run was accepted (202): the cross-origin check compared Origin with
// that same Host. The same page under a name the daemon answers
// (localhost) does start its run, so the harness does reach the daemon.
func TestServeRefusesDNSRebinding(t *testing.T) {
	besideOthers(t)
	testdeps.Need(t, testdeps.Tool("chromium"))
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ioprobe.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`
global: {snapshot_interval: 200ms}
api: {runs: {max_duration: 1m}}
targets:
  data: {path: %s, size: 4MiB}
jobs:
  adhoc: {target: data, profile: random-read, duration: 200ms, ramp: 0s}
`, filepath.Join(dir, "data.dat"))), 0o644))
	d := startDaemon(t, "--config", cfg, "--web.enable-admin-api", "--web.enable-lifecycle")
	base := "http://" + d.addr
	port := rebinder(t, d.addr)

	got := openInChromium(t, "http://rebind.test:"+port+"/attack")
	require.Equal(t, "runs=421 job=421 reload=421 results=421 metrics=421", got, "daemon log:\n%s", d.log())
	var runs struct{ Runs []json.RawMessage }
	require.NoError(t, json.Unmarshal([]byte(fetch(t, base+"/api/v1/runs")), &runs))
	require.Empty(t, runs.Runs, "nothing ran")
	require.Contains(t, fetch(t, base+"/api/v1/jobs"), `"runs_started": 0`)
	require.NoFileExists(t, filepath.Join(dir, "data.dat"), "the target was never prepared")
	require.NotContains(t, d.log(), "configuration reloaded")

	// The control: the daemon's own name.
	got = openInChromium(t, "http://localhost:"+port+"/attack")
	require.True(t, strings.HasPrefix(got, "runs=202 "), "%s", got)
}
