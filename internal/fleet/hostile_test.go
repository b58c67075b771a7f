package fleet

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/fleet/fleettest"
	"github.com/ioprobe/ioprobe/internal/testwait"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// Hosts that do not behave as daemons: each is a fake written for the
// purpose, answering what a daemon answers up to the point where it
// misbehaves. The end-to-end tests (test/fleet_hostile_test.go) put such
// hosts beside real daemons.

// TestEveryRequestHasADeadline: a host that accepts connections and
// never answers fails the pre-checks by AnswerWithin; one that answers
// the checks but not its POST fails the start by AnswerWithin; one that
// never answers a DELETE is given up after StopWait. Nothing waits on a
// silent host for ever.
//
// The short deadlines (200 ms, 300 ms) are only ever waited out by a
// silent host, where they must fire. A host that must answer in time
// (the checks that pass, the POST that is accepted) is asked by a
// controller as patient as any wait for what will happen
// (testwait.Patience): under -race at load 30 a local fake took over
// 200 ms to answer GET /api/v1/clock, and failing it then tested the
// machine's speed, not the deadline.
func TestEveryRequestHasADeadline(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	accepted := make(chan net.Conn, 16)
	go func() {
		defer close(accepted)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c // accepted, never answered
		}
	}()
	defer func() {
		l.Close()
		for c := range accepted {
			c.Close()
		}
	}()
	silent := NewClient(l.Addr().String(), http.DefaultClient, false)
	ctl := &Controller{AnswerWithin: 200 * time.Millisecond, StopWait: 300 * time.Millisecond, StartDelay: time.Second}
	// patient is ctl for the requests that are answered: its StopWait is
	// still ctl's, waited out by the host that never answers its DELETE.
	// Nor does it judge the clock (TestCheckRefusesASkewedClock does): a
	// reading whose round trip is over 2 × MaxSkew (50 ms by default) is
	// refused, and under load a local one can take that long.
	patient := *ctl
	patient.AnswerWithin, patient.LostAfter, patient.MaxSkew = testwait.Patience, testwait.Patience, testwait.Patience
	_, errs := ctl.Check(context.Background(), []*Client{silent}, []RunRequest{{Target: "data"}})
	require.Len(t, errs, 1)
	require.Equal(t, silent.Address, errs[0].Address)
	require.ErrorContains(t, errs[0], "unreachable: GET /api/v1/clock: no answer within 200ms")

	silentPost := fakeDaemon(t, fleettest.Hold(t))
	_, errs = patient.Check(context.Background(), []*Client{silentPost}, []RunRequest{{Target: "data", Duration: "1s"}})
	require.Empty(t, errs, "the checks pass")
	_, hosts, err := ctl.Run(context.Background(), []*Client{silentPost}, RunRequest{Target: "data", Duration: "1s"})
	require.Nil(t, hosts)
	var se *StartError
	require.ErrorAs(t, err, &se)
	require.ErrorContains(t, err, silentPost.Address+": unreachable: POST /api/v1/runs: no answer within 200ms")

	var deletes atomic.Int32
	hold := fleettest.Hold(t)
	silentDelete := fakeDaemon(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
			fmt.Fprint(w, `{"id": "r-1", "state": "accepted"}`)
		case http.MethodDelete:
			deletes.Add(1)
			hold(w, r)
		default:
			w.WriteHeader(http.StatusTeapot)
		}
	})
	refuses := fakeDaemon(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusConflict) })
	_, _, err = patient.Run(context.Background(), []*Client{silentDelete, refuses}, RunRequest{Target: "data", Duration: "1s"})
	require.ErrorAs(t, err, &se)
	require.Equal(t, int32(1), deletes.Load(), "the accepted run is stopped")
	require.Len(t, se.Hosts, 2)
	require.Contains(t, se.Hosts[0].String(), "run r-1 could not be stopped")
	require.Contains(t, se.Hosts[0].String(), "DELETE /api/v1/runs/r-1: no answer within 300ms")
	require.Equal(t, []Cancelled{se.Hosts[0]}, se.Measured(), "a run that could not be stopped may have measured")
	require.Equal(t, refuses.Address+": no run accepted", se.Hosts[1].String())
}

// TestAnswersAreBounded: a host that answers a poll with an endless body
// is a failed host once the fleet has read its bound (a run's state
// with its result), not a fleet that reads on: the host wrote little
// more than the bound before the fleet hung up.
func TestAnswersAreBounded(t *testing.T) {
	var written atomic.Int64
	chunk := []byte(strings.Repeat(" ", 64<<10))
	endless := fakeDaemon(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
			fmt.Fprint(w, `{"id": "r-1", "state": "accepted"}`)
		case http.MethodGet:
			_, _ = io.WriteString(w, `{"id": "r-1", "state": "running", "error": "`)
			for range 4 * maxResultBase / len(chunk) {
				n, err := w.Write(chunk)
				written.Add(int64(n))
				if err != nil {
					return
				}
			}
		default:
			fmt.Fprint(w, `{"id": "r-1", "state": "stopped"}`)
		}
	})
	ctl := &Controller{StartDelay: 100 * time.Millisecond}
	_, hosts, err := ctl.Run(context.Background(), []*Client{endless}, RunRequest{Target: "data", Duration: "1s"})
	require.NoError(t, err)
	require.Len(t, hosts, 1)
	h := hosts[0]
	require.Equal(t, result.RunFailed, h.State)
	limit := resultLimit(withResultLimit(context.Background(), time.Second))
	require.Contains(t, h.Error, fmt.Sprintf("GET /api/v1/runs/r-1: not the answer of an ioprobe daemon: the answer is larger than %d bytes", limit))
	// What the kernel buffers on both sides of a loopback connection is
	// far less than the bound again.
	require.Less(t, written.Load(), 2*limit, "the fleet stopped reading at its bound")
}

// TestDoneWithoutAResultFails: "done" is a result; a host that says done
// and gives none has failed, named as such.
func TestDoneWithoutAResultFails(t *testing.T) {
	liar := fakeDaemon(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			fmt.Fprint(w, `{"id": "r-1", "state": "accepted"}`)
			return
		}
		fmt.Fprint(w, `{"id": "r-1", "state": "done"}`)
	})
	ctl := &Controller{StartDelay: 100 * time.Millisecond}
	_, hosts, err := ctl.Run(context.Background(), []*Client{liar}, RunRequest{Target: "data", Duration: "1s"})
	require.NoError(t, err)
	require.Equal(t, result.RunFailed, hosts[0].State)
	require.Equal(t, "answered done without a result", hosts[0].Error)
	require.True(t, hosts[0].Failed())
}

// TestRedirectsAreNeverFollowed: whatever the client config says, a 307
// is an error naming where it pointed, and nothing reaches that place.
func TestRedirectsAreNeverFollowed(t *testing.T) {
	var reached atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Add(1) }))
	defer elsewhere.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	require.NoError(t, os.WriteFile(pw, []byte("s3cret"), 0o600))
	file := filepath.Join(dir, "client.yml")
	require.NoError(t, os.WriteFile(file, fmt.Appendf(nil, "follow_redirects: true\nbasic_auth:\n  username: prom\n  password_file: %s\n", pw), 0o600))
	for _, f := range []string{"", file} {
		hc, _, err := NewHTTPClient(f)
		require.NoError(t, err)
		c := NewClient(strings.TrimPrefix(redirector.URL, "http://"), hc, false)
		_, err = c.Clock(context.Background(), 1)
		var re *RedirectError
		require.ErrorAs(t, err, &re, f)
		require.Equal(t, http.StatusTemporaryRedirect, re.Status)
		require.Equal(t, elsewhere.URL+"/api/v1/clock", re.Location)
		require.ErrorContains(t, err, "refused (the fleet follows no redirect")
		// Given time to answer (the redirect is its answer): a slow one is
		// not what this test is about.
		patient := &Controller{AnswerWithin: testwait.Patience, LostAfter: testwait.Patience}
		_, errs := patient.Check(context.Background(), []*Client{c}, []RunRequest{{Target: "data"}})
		require.Len(t, errs, 1)
		require.NotContains(t, errs[0].Error(), "unreachable", "it answered")
	}
	require.Zero(t, reached.Load(), "nothing reached where the redirects pointed")
}
