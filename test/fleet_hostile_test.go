package test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/fleet/fleettest"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// The fleet against hosts that do not behave: each a fake written for
// the purpose (internal/fleet/fleettest answers the clock and dry runs as
// a daemon does, then misbehaves as the test says), beside real daemons
// on 127.0.0.1. One fake per test, each request it holds ending with the
// test.

// TestFleetHostileRedirectIsRefused: a host in --hosts answers the run's
// POST with a 307 to a daemon that is not in --hosts, and the client
// config says follow_redirects: true, with credentials. The fleet refuses
// the redirect, naming the host and where it pointed; the other daemon
// runs nothing, and the run accepted by the good host is stopped before
// its start: exit 2.
func TestFleetHostileRedirectIsRefused(t *testing.T) {
	hosts := startLocalFleet(t, 2)
	good, other := hosts[0], hosts[1]
	var redirected atomic.Int32
	redirector := fleettest.Fake(t, func(w http.ResponseWriter, r *http.Request) {
		redirected.Add(1)
		http.Redirect(w, r, "http://"+other.addr+r.URL.Path, http.StatusTemporaryRedirect)
	})
	dir := t.TempDir()
	pw := filepath.Join(dir, "password")
	require.NoError(t, os.WriteFile(pw, []byte("s3cret\n"), 0o600))
	client := filepath.Join(dir, "client.yml")
	require.NoError(t, os.WriteFile(client, fmt.Appendf(nil, "follow_redirects: true\nbasic_auth:\n  username: prom\n  password_file: %s\n", pw), 0o600))

	o := ioprobe(t, dir, localFleetArgs(good.addr+","+redirector, "--client-config", client)...)
	require.Equal(t, 2, o.code, o.stderr)
	require.Positive(t, redirected.Load(), "the run was posted to the redirector")
	require.Contains(t, o.stderr, "ioprobe: fleet: host "+redirector+`: answered HTTP 307, a redirect to "http://`+other.addr+`/api/v1/runs": refused`)
	require.Contains(t, o.stderr, "stopped before their start: nothing was measured")
	require.Empty(t, apiRunsOf(t, other.addr), "nothing ran where the redirect pointed")
	require.NoFileExists(t, other.file)
	runs := apiRunsOf(t, good.addr)
	require.Len(t, runs, 1)
	require.Contains(t, string(runs[0]), "nothing was measured")
	require.NotRegexp(t, liveAPIOps, fetch(t, "http://"+good.addr+"/metrics"))
}

// TestFleetHostileSilentHost: a host that accepts connections and never
// says a word fails the pre-checks by their deadline (5 s: no answer to
// the clock reading), named; exit 2, and nothing starts on the daemon
// beside it.
func TestFleetHostileSilentHost(t *testing.T) {
	besideOthers(t)
	good := startLocalFleet(t, 1)[0]
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	accepted := make(chan net.Conn, 64)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c // never read, never answered
		}
	}()
	t.Cleanup(func() {
		for {
			select {
			case c := <-accepted:
				c.Close()
			default:
				return
			}
		}
	})
	silent := l.Addr().String()
	t0 := time.Now()
	o := ioprobe(t, t.TempDir(), localFleetArgs(good.addr+","+silent)...)
	t.Logf("the fleet ended %s after it started", time.Since(t0).Round(time.Millisecond))
	require.Equal(t, 2, o.code, o.stderr)
	require.Contains(t, o.stderr, "ioprobe: host "+silent+": unreachable: GET /api/v1/clock: no answer within 5s")
	require.Contains(t, o.stderr, "1 of 2 hosts failed the pre-checks (above): nothing was started anywhere")
	require.Empty(t, apiRunsOf(t, good.addr))
	require.NoFileExists(t, good.file)
}

// TestFleetHostileDoneWithoutResult: a host says its run is done and
// gives no result. It is a failed host, named; the real daemon's result
// is kept and merged alone; exit 1.
func TestFleetHostileDoneWithoutResult(t *testing.T) {
	besideOthers(t)
	good := startLocalFleet(t, 1)[0]
	liar := fleettest.Fake(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
			fmt.Fprint(w, `{"id": "r-1", "state": "accepted", "url": "/api/v1/runs/r-1"}`)
		default:
			fmt.Fprint(w, `{"id": "r-1", "state": "done"}`)
		}
	})
	dir := t.TempDir()
	out := filepath.Join(dir, "fleet.json")
	o := ioprobe(t, dir, localFleetArgs(good.addr+","+liar, "--output", "json", "--out", out)...)
	require.Equal(t, 1, o.code, o.stderr)
	require.Contains(t, o.stderr, liar+" (failed): answered done without a result")
	f := readFleetDoc(t, out)
	require.True(t, f.Partial)
	require.Equal(t, []string{liar}, f.FailedHosts)
	require.Equal(t, result.RunDone, f.Hosts[0].State)
	require.Equal(t, result.RunFailed, f.Hosts[1].State)
	require.Equal(t, f.Hosts[0].Result.Summary.Ops, f.Merged.Summary.Ops)
	require.Equal(t, 1, f.Merged.Merged.Runs)
}

// TestFleetHostileStartCalledOffAfterOthersMeasured: a host takes the
// run's POST and never answers it; by the time the fleet gives up on it
// (--host-timeout 4s), the real daemon beside it has started its run
// (it starts 2 s after the posts, localFleetArgs' start delay, and
// measures for 1 s) and may have finished it. The fleet
// stops it and says what it did — started, its result kept there — not
// "nothing was measured"; exit 1.
func TestFleetHostileStartCalledOffAfterOthersMeasured(t *testing.T) {
	besideOthers(t)
	good := startLocalFleet(t, 1)[0]
	slow := fleettest.Fake(t, fleettest.Hold(t))
	// 200 I/Os on the good host, not a window (which beside load may
	// complete none): its kept result is asserted below.
	o := ioprobe(t, t.TempDir(), localFleetArgs(good.addr+","+slow, "--host-timeout", "4s", "--number-ios", "200", "--duration", "50s")...)
	require.Equal(t, 1, o.code, o.stderr)
	require.Contains(t, o.stderr, "host "+slow+": unreachable: POST /api/v1/runs: no answer within 4s")
	require.NotContains(t, o.stderr, "nothing was measured")
	require.Regexp(t, `ioprobe: fleet: host `+regexp.QuoteMeta(good.addr)+`: run r-[0-9a-f]+ had (finished|started)`, o.stderr)
	require.Contains(t, o.stderr, "but 1 of 2 hosts had started (above): no fleet result")
	runs := apiRunsOf(t, good.addr)
	require.Len(t, runs, 1)
	var run struct {
		Result *result.Result `json:"result"`
	}
	require.NoError(t, json.Unmarshal(runs[0], &run))
	require.NotNil(t, run.Result, "its result is kept on the daemon")
	require.Positive(t, run.Result.Summary.Ops)
}
