//go:build unix

package exporter

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ioprobe/ioprobe/internal/testwait"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"
)

// The daemon's front (front.go): what a client without the password can
// make it do, over plain HTTP and over TLS.

// dial opens a connection to the daemon as a client would: TLS
// (handshake done) when it serves TLS.
func (s *secured) dial(t *testing.T) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", s.addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	if s.tls == nil {
		return c
	}
	tc := tls.Client(c, s.tls.Clone())
	tc.SetDeadline(time.Now().Add(time.Minute))
	require.NoError(t, tc.Handshake())
	tc.SetDeadline(time.Time{})
	return tc
}

// get makes a request with user's credentials (user "": none).
func (s *secured) get(t *testing.T, path, user, pass string) (*http.Response, time.Duration) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.base+path, nil)
	require.NoError(t, err)
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	t0 := time.Now()
	resp, err := s.client.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp, time.Since(t0)
}

// answersBy reads one answer from each connection, all by one deadline
// (a server that waits for the client makes the test fail at it, not
// hang): its status, "hung up" or "still open".
func answersBy(conns []net.Conn, deadline time.Time) []string {
	out := make([]string, len(conns))
	readers := make([]*bufio.Reader, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		readers[i] = bufio.NewReader(c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.SetReadDeadline(deadline)
			out[i] = answer(readers[i])
			if out[i] != "hung up" && out[i] != "still open" {
				out[i] += " then " + answer(readers[i])
			}
		}()
	}
	wg.Wait()
	return out
}

// TestUnauthorisedBodiesAreNotWaitedFor: 200 clients without the
// password (or with a wrong one) announce a body — a length, or chunked
// — and never send it. Each is answered at once without its body being
// read, and hung up on; an authorised scrape meanwhile is served. A
// client that never finishes its headers, or never starts TLS, is hung
// up on at the header timeout. Before the front, the 401 waited for the
// body, and the connection stayed open as long as the client liked.
func TestUnauthorisedBodiesAreNotWaitedFor(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		t.Run(map[bool]string{false: "http", true: "tls"}[useTLS], func(t *testing.T) {
			s := startSecured(t, runAPIConfig, useTLS, bcrypt.MinCost, WebOptions{EnableAdminAPI: true}, func(d *Daemon) {
				d.readHeaderTimeout = 2 * time.Second
			})
			fdRest := openFDs(t)
			wrong := "Authorization: Basic " + basic("prom", "wrong") + "\r\n"
			kinds := []string{
				"POST /api/v1/runs HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n",
				"POST /api/v1/runs HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
				"GET /metrics HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n",
				"POST /api/v1/runs HTTP/1.1\r\nHost: localhost\r\n" + wrong + "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
			}
			const n = 200
			conns := make([]net.Conn, n)
			for i := range conns {
				conns[i] = s.dial(t)
				_, err := io.WriteString(conns[i], kinds[i%len(kinds)])
				require.NoError(t, err)
			}
			// Held by their clients until the header timeout.
			silent := []net.Conn{s.dial(t)}
			_, err := io.WriteString(silent[0], "GET /metrics HTTP/1.1\r\nHost: localhost\r\n")
			require.NoError(t, err)
			if useTLS {
				raw, err := net.Dial("tcp", s.addr) // never says hello
				require.NoError(t, err)
				t.Cleanup(func() { _ = raw.Close() })
				silent = append(silent, raw)
			}

			var took []time.Duration
			for range 5 {
				resp, d := s.get(t, "/metrics", "prom", "s3cret")
				require.Equal(t, http.StatusOK, resp.StatusCode)
				took = append(took, d)
			}
			t.Logf("authorised /metrics (a new connection each) beside %d unauthorised connections announcing bodies: %v", n, took)
			if useTLS {
				// HTTP/2 (exporter-toolkit's default over TLS) goes
				// through the same front, its deadlines per stream.
				h2 := &http.Client{Transport: &http.Transport{TLSClientConfig: s.tls, ForceAttemptHTTP2: true}, Timeout: time.Minute}
				for _, pw := range []string{"s3cret", "wrong"} {
					req, err := http.NewRequest(http.MethodPost, s.base+"/api/v1/runs", strings.NewReader(`{}`))
					require.NoError(t, err)
					req.Header.Set("Content-Type", "application/json")
					req.SetBasicAuth("prom", pw)
					resp, err := h2.Do(req)
					require.NoError(t, err)
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					require.Equal(t, 2, resp.ProtoMajor)
					want := map[string]int{"s3cret": http.StatusBadRequest, "wrong": http.StatusUnauthorized}[pw]
					require.Equal(t, want, resp.StatusCode, string(b))
				}
				h2.CloseIdleConnections()
			}

			got := answersBy(conns, time.Now().Add(time.Minute))
			for i, a := range got {
				want := []string{"401 then hung up"}
				if i%len(kinds) == 3 {
					// A wrong password may find the check taken by
					// another: 503 at once, as good as a 401.
					want = append(want, "503 then hung up")
				}
				require.Contains(t, want, a, "connection %d: %q", i, kinds[i%len(kinds)])
			}
			for i, a := range answersBy(silent, time.Now().Add(time.Minute)) {
				require.Contains(t, []string{"hung up", "408 then hung up"}, a, "silent connection %d", i)
			}
			for _, c := range append(conns, silent...) {
				c.Close()
			}
			require.EventuallyWithT(t, func(c *assert.CollectT) { assert.LessOrEqual(c, fdsNow(c), fdRest) }, time.Minute, 20*time.Millisecond,
				"descriptors back to their count at rest")
		})
	}
}

func basic(user, pass string) string {
	r, _ := http.NewRequest(http.MethodGet, "/", nil)
	r.SetBasicAuth(user, pass)
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Basic ")
}

// TestPasswordChecksTakeTurns: while a password check is going on (the
// test holds the only slot), credentials that passed before are served
// at once; any others — wrong, or right but not seen yet — wait their
// turn, and get 503 when it does not come in time. Once the slot is
// free, a wrong password is 401 and a right one 200, which makes it
// known.
func TestPasswordChecksTakeTurns(t *testing.T) {
	s := startSecured(t, runAPIConfig, false, bcrypt.MinCost, WebOptions{}, func(d *Daemon) {
		d.authWait = 100 * time.Millisecond
	})
	resp, _ := s.get(t, "/metrics", "prom", "s3cret")
	require.Equal(t, http.StatusOK, resp.StatusCode)

	s.d.auth.slots <- struct{}{} // a check in progress
	resp, _ = s.get(t, "/metrics", "prom", "s3cret")
	require.Equal(t, http.StatusOK, resp.StatusCode, "credentials that passed skip the queue")
	resp, _ = s.get(t, "/metrics", "prom", "wrong")
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.Equal(t, "1", resp.Header.Get("Retry-After"))
	resp, _ = s.get(t, "/metrics", "ops", "opsword")
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "right credentials not seen yet wait like any")
	resp, _ = s.get(t, "/metrics", "", "")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "no credentials, no check: 401 at once")
	<-s.d.auth.slots

	resp, _ = s.get(t, "/metrics", "prom", "wrong")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	resp, _ = s.get(t, "/metrics", "ops", "opsword")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	s.d.auth.slots <- struct{}{}
	resp, _ = s.get(t, "/metrics", "ops", "opsword")
	require.Equal(t, http.StatusOK, resp.StatusCode, "now known")
	resp, _ = s.get(t, "/metrics", "ops", "wrong")
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "a user's known password does not excuse another")
	<-s.d.auth.slots
}

// TestAuthGateRemembersOnlyWhatPassed: the set of credentials that
// passed is bounded, forgets the least recently passed, and keys them
// by a digest under the process's key (no password kept).
func TestAuthGateRemembersOnlyWhatPassed(t *testing.T) {
	g, other := newAuthGate(), newAuthGate()
	a := g.digestOf("prom", "s3cret")
	require.NotEqual(t, a, other.digestOf("prom", "s3cret"), "a digest means nothing to another process")
	require.NotEqual(t, a, g.digestOf("proms", "3cret"), "the user's length is part of it")
	require.False(t, g.known(a))
	g.remember(a)
	for i := range knownCredentials - 1 {
		g.remember(g.digestOf("user", fmt.Sprint(i)))
	}
	g.remember(a) // passed again: the most recent
	g.remember(g.digestOf("user", "new"))
	require.Len(t, g.seen, knownCredentials)
	require.True(t, g.known(a))
	require.False(t, g.known(g.digestOf("user", "0")), "the least recently passed is forgotten")
}

// TestCrossSiteRequestsAreRefused: what a web page could make a browser
// send to the daemon — a form (text/plain, form-urlencoded), a typeless
// fetch, anything with another Origin or Sec-Fetch-Site: cross-site — is
// refused and starts nothing; the fleet's requests (JSON, no Origin) and
// the daemon's own origin are served.
func TestCrossSiteRequestsAreRefused(t *testing.T) {
	d, dir := newDaemon(t, runAPIConfig+"jobs:\n  adhoc: {target: logs, profile: random-read, duration: 200ms, ramp: 0s}\n",
		WebOptions{EnableAdminAPI: true, EnableLifecycle: true})
	base, _ := start(t, d)
	host := strings.TrimPrefix(base, "http://")
	loaded := value(t, d.Registry(), "ioprobe_config_last_reload_success_timestamp_seconds", nil)
	run := `{"target":"data","specs":[{"block_sizes":[{"bytes":4096,"weight":1}],"read_pct":100,"random_pct":100,"queue_depth":1}],"ramp":"0s","duration":"1s"}`
	for _, c := range []struct {
		name, method, path, body string
		header                   []string
		code                     int
		want                     string
	}{
		{"form text/plain", "POST", "/api/v1/runs", run, []string{"Content-Type", "text/plain"}, 415, `Content-Type "text/plain": the body must be application/json`},
		{"form urlencoded", "POST", "/api/v1/runs", run, []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, "must be application/json"},
		{"multipart", "POST", "/api/v1/runs", run, []string{"Content-Type", "multipart/form-data; boundary=x"}, 415, "must be application/json"},
		{"no content type", "POST", "/api/v1/runs", run, nil, 415, `Content-Type ""`},
		{"another origin", "POST", "/api/v1/runs", run, []string{"Content-Type", "application/json", "Origin", "http://evil.example"}, 403, "cross-origin"},
		{"origin null", "POST", "/api/v1/runs", run, []string{"Content-Type", "application/json", "Origin", "null"}, 403, "cross-origin"},
		{"cross-site fetch", "POST", "/api/v1/runs", run, []string{"Content-Type", "application/json", "Sec-Fetch-Site", "cross-site"}, 403, "cross-origin"},
		{"same-site fetch", "POST", "/api/v1/runs", run, []string{"Content-Type", "application/json", "Sec-Fetch-Site", "same-site", "Origin", "http://other.example"}, 403, "cross-origin"},
		{"job run from another origin", "POST", "/api/v1/jobs/adhoc/run", "", []string{"Origin", "http://evil.example"}, 403, "cross-origin"},
		{"stop from another origin", "DELETE", "/api/v1/runs/r-0011223344556677", "", []string{"Origin", "http://evil.example"}, 403, "cross-origin"},
		{"reload from another origin", "POST", "/-/reload", "", []string{"Origin", "http://evil.example"}, 403, "cross-origin"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var rd io.Reader
			if c.body != "" {
				rd = strings.NewReader(c.body)
			}
			code, b := send(t, c.method, base+c.path, rd, c.header...)
			require.Equal(t, c.code, code, string(b))
			msg := strings.TrimSpace(string(b))
			if strings.HasPrefix(c.path, "/api/") {
				msg = errorOf(t, b)
			}
			require.Contains(t, msg, c.want)
		})
	}
	require.Empty(t, d.history.list(apiJob, 0), "no run was accepted")
	require.Empty(t, d.history.list("adhoc", 0), "no job was run")
	require.Equal(t, loaded, value(t, d.Registry(), "ioprobe_config_last_reload_success_timestamp_seconds", nil), "no reload")
	require.NoFileExists(t, filepath.Join(dir, "data.dat"))
	require.NoFileExists(t, filepath.Join(dir, "logs.dat"))

	// The daemon's own origin (its landing page) and the fleet are served.
	dry := strings.Replace(run, `"duration":"1s"`, `"duration":"1s","dry_run":true`, 1)
	code, b := send(t, "POST", base+"/api/v1/runs", strings.NewReader(dry), "Content-Type", "application/json; charset=utf-8", "Origin", "http://"+host, "Sec-Fetch-Site", "same-origin")
	require.Equal(t, http.StatusOK, code, string(b))
	code, b = send(t, "POST", base+"/api/v1/runs", strings.NewReader(dry), "Content-Type", "application/json")
	require.Equal(t, http.StatusOK, code, string(b))
}

// TestSeveralListenersEachBehindTheFront: each --web.listen-address is
// served by its own server, each with basic auth once and the front
// around it (exporter-toolkit's ServeMultiple shares one server, whose
// handler its goroutines replace at once: a data race, and basic auth
// wrapped twice).
func TestSeveralListenersEachBehindTheFront(t *testing.T) {
	dir := t.TempDir()
	h, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	require.NoError(t, err)
	path := filepath.Join(dir, "web.yml")
	require.NoError(t, os.WriteFile(path, fmt.Appendf(nil, "basic_auth_users:\n  prom: %s\n", h), 0o600))
	var addrs []string
	for range 2 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addrs = append(addrs, l.Addr().String())
		l.Close()
	}
	d, _ := newDaemon(t, runAPIConfig, WebOptions{ConfigFile: path, ListenAddresses: addrs})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	for _, a := range addrs {
		require.Eventually(t, func() bool {
			resp, err := client.Get("http://" + a + "/-/healthy")
			if err == nil {
				resp.Body.Close()
			}
			return err == nil
		}, testwait.Patience, 10*time.Millisecond)
		code, _ := get(t, "http://"+a+"/metrics")
		require.Equal(t, http.StatusUnauthorized, code, a)
		code, _ = get(t, "http://"+a+"/metrics", "Authorization", "Basic "+basic("prom", "s3cret"))
		require.Equal(t, http.StatusOK, code, a)
	}
	require.Len(t, d.auth.seen, 1, "one gate for every listener")
}
