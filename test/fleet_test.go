package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// The fleet's end-to-end tests (issue 14's "Done when"): daemons in their
// own network namespaces (netns_test.go), driven over the run API
// directly and through `ioprobe fleet`.

// commonStartWindow is how far apart the hosts' measured windows may
// begin: a correctness bound of the common start (every daemon waits for
// the same instant on its own wall clock, here one clock), not a speed
// figure.
const commonStartWindow = 50 * time.Millisecond

// apiRunState is what GET /api/v1/runs/ID answers.
type apiRunState struct {
	ID      string         `json:"id"`
	State   string         `json:"state"`
	Target  string         `json:"target"`
	Label   string         `json:"label"`
	Error   string         `json:"error"`
	Host    result.Host    `json:"host"`
	Result  *result.Result `json:"result"`
	StartAt *time.Time     `json:"start_at"`
}

// apiCall sends a request to a daemon and decodes its JSON answer into
// out (when not nil); it returns the status code and the body.
func apiCall(t *testing.T, method, url string, body any, out any) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if out != nil && resp.StatusCode < 300 {
		require.NoError(t, json.Unmarshal(b, out), "%s", b)
	}
	return resp.StatusCode, string(b)
}

// randomReadRun is a POST /api/v1/runs body: 4 KiB random reads on the
// target data, starting at at.
func randomReadRun(at time.Time, label string) map[string]any {
	return map[string]any{
		"target": "data",
		"specs": []map[string]any{{
			"name": "random-read", "block_sizes": []map[string]any{{"bytes": 4096, "weight": 1}},
			"read_pct": 100, "random_pct": 100, "queue_depth": 4, "workers": 1,
		}},
		"ramp": "300ms", "duration": "2s",
		"start_at": at.UTC().Format(time.RFC3339Nano),
		"label":    label,
	}
}

// waitRunEnds polls a run until it has ended; the minute is a liveness
// guard for a run of a few seconds, not a speed test.
func waitRunEnds(t *testing.T, h *nsHost, id string) apiRunState {
	t.Helper()
	var st apiRunState
	require.Eventually(t, func() bool {
		code, body := apiCall(t, http.MethodGet, "http://"+h.Addr+"/api/v1/runs/"+id, nil, &st)
		require.Equal(t, http.StatusOK, code, body)
		return slices.Contains([]string{"done", "failed", "stopped"}, st.State)
	}, time.Minute, 50*time.Millisecond, "%s: run %s did not end", h.Name, id)
	return st
}

// requireExactMerge checks a merged result against its hosts' own: the
// op counts add up, the percentiles are those of the hosts' histograms
// merged (recomputed here from each host's histograms), and every host's
// measured window began within commonStartWindow of the others'.
func requireExactMerge(t *testing.T, hosts []*result.Result, merged *result.Result) {
	t.Helper()
	var ops, reads uint64
	all, rd := result.NewHistogram(), result.NewHistogram()
	var first, last time.Time
	for i, r := range hosts {
		require.Positive(t, r.Summary.Ops, r.Host.Hostname)
		ops += r.Summary.Ops
		reads += r.Summary.ReadOps
		all.Merge(r.Histogram.Combined())
		if r.Histogram.Read != nil {
			rd.Merge(r.Histogram.Read)
		}
		if i == 0 || r.StartedAt.Before(first) {
			first = r.StartedAt
		}
		if i == 0 || r.StartedAt.After(last) {
			last = r.StartedAt
		}
	}
	require.Equal(t, ops, merged.Summary.Ops, "merged op count is the hosts' sum")
	require.Equal(t, reads, merged.Summary.ReadOps)
	require.Equal(t, all.Count(), merged.Summary.Ops, "every op is in a histogram")
	want := result.LatencyOf(all)
	require.Equal(t, want.Percentiles, merged.Summary.Latency.Percentiles, "merged percentiles are those of the merged histograms")
	require.Equal(t, want.MaxSeconds, merged.Summary.Latency.MaxSeconds)
	require.Equal(t, result.LatencyOf(rd).Percentiles, merged.Summary.ReadLatency.Percentiles)
	t.Logf("%d hosts, %d ops merged, p99 %gs; measured windows began within %s", len(hosts), ops, want.Percentiles["99"], last.Sub(first))
	require.LessOrEqual(t, last.Sub(first), commonStartWindow,
		"the hosts' measured windows began %s apart (first %s, last %s)", last.Sub(first), first, last)
}

// requireDeviceSawOps: the kernel's count for a host's loop device grew
// by at least the ops the host counted (ramp-up I/O comes on top).
func requireDeviceSawOps(t *testing.T, h *nsHost, before diskIOs, r *result.Result) {
	t.Helper()
	after := deviceIOs(t, h.Dev)
	t.Logf("%s: %d reads counted, the kernel saw %d on %s", h.Name, r.Summary.ReadOps, after.Reads-before.Reads, h.Dev)
	require.GreaterOrEqual(t, after.Reads-before.Reads, r.Summary.ReadOps, "%s: the kernel saw fewer reads on %s than counted", h.Name, h.Dev)
	require.GreaterOrEqual(t, after.Writes-before.Writes, r.Summary.WriteOps, "%s: the kernel saw fewer writes on %s than counted", h.Name, h.Dev)
}

// TestFleetOverTheRunAPI: three daemons, each in its namespace, given the
// same run with the same start_at over plain HTTP (what `ioprobe fleet
// run` does, without it): each host's result carries its own hostname,
// its loop device saw every op it counted, the merge is exact, and the
// measured windows began together.
func TestFleetOverTheRunAPI(t *testing.T) {
	f := newNetFleet(t, 3, 64<<20)
	before := map[string]diskIOs{}
	for _, h := range f.Hosts {
		before[h.Name] = deviceIOs(t, h.Dev)
	}
	at := time.Now().Add(2 * time.Second)
	ids := map[string]string{}
	for _, h := range f.Hosts {
		var acc struct {
			ID    string `json:"id"`
			State string `json:"state"`
			URL   string `json:"url"`
		}
		code, body := apiCall(t, http.MethodPost, "http://"+h.Addr+"/api/v1/runs", randomReadRun(at, "netns-direct"), &acc)
		require.Equal(t, http.StatusAccepted, code, "%s: %s", h.Name, body)
		require.Equal(t, "accepted", acc.State)
		require.Equal(t, "/api/v1/runs/"+acc.ID, acc.URL)
		ids[h.Name] = acc.ID
	}
	var results []*result.Result
	for _, h := range f.Hosts {
		st := waitRunEnds(t, h, ids[h.Name])
		require.Equal(t, "done", st.State, "%s: %s", h.Name, st.Error)
		require.Equal(t, h.Name, st.Host.Hostname, "the daemon reports its own host")
		require.NotNil(t, st.Result)
		r := st.Result
		require.Equal(t, h.Name, r.Host.Hostname)
		require.Equal(t, result.StatusOK, r.Status)
		require.True(t, r.StartAt.Equal(at), "%s: start_at %s, asked %s", h.Name, r.StartAt, at)
		require.False(t, r.StartedAt.Before(at), "%s began before the instant", h.Name)
		require.Equal(t, h.Dev, r.Targets[0].Path)
		requireDeviceSawOps(t, h, before[h.Name], r)
		results = append(results, r)
	}
	merged, err := result.Merge(results...)
	require.NoError(t, err)
	require.Equal(t, []string{"node1", "node2", "node3"}, merged.Merged.Hosts)
	requireExactMerge(t, results, merged)
}

// hostsLine is a list of host names for messages.
func hostsLine(hs []*nsHost) string {
	var n []string
	for _, h := range hs {
		n = append(n, fmt.Sprintf("%s=%s", h.Name, h.Addr))
	}
	return strings.Join(n, " ")
}
