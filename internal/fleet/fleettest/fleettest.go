// Package fleettest writes hosts that misbehave, for the fleet's tests:
// a fake that answers what a daemon answers up to the point where it does
// not. It is imported by tests only.
package fleettest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Fake starts a host that answers the clock (this machine's) and dry
// runs as a daemon does, and hands every other request to rest. It
// returns its HOST:PORT; it stops when the test ends.
func Fake(t testing.TB, rest http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/clock" {
			fmt.Fprintf(w, `{"unix_nano": %d}`, time.Now().UnixNano())
			return
		}
		if r.Method == http.MethodPost && r.URL.Path == "/api/v1/runs" {
			var req struct {
				DryRun bool `json:"dry_run"`
			}
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
			if err == nil && json.Unmarshal(body, &req) == nil && req.DryRun {
				fmt.Fprint(w, `{"ok": true}`)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body)) // rest reads it too
		}
		rest(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// Hold holds each request until its client gives up or the test ends:
// a host that never answers.
func Hold(t testing.TB) http.HandlerFunc {
	end := make(chan struct{})
	t.Cleanup(func() { close(end) })
	return func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-end:
		}
	}
}
