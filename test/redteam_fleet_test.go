package test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/fleet/fleettest"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// TestRedteamFleetOneHostCannotSinkTheMerge: a host whose answer cannot
// be merged with the others' — another workload than the one posted,
// counts that wrap only once added to the others', a replay of an
// earlier run — is a failed host named with the reason; the fleet writes
// its document with the other host merged (exit 1, partial). Before, the
// first two failed the merge as a whole and no document was written (one
// hostile host threw away every host's measurement), and the replay was
// merged as a second host's measurement of this run.
func TestRedteamFleetOneHostCannotSinkTheMerge(t *testing.T) {
	besideOthers(t)
	good := startLocalFleet(t, 1)[0]
	dir := t.TempDir()
	own := hostResult(t, dir, good)

	// edit is the earlier result changed, as the answer to the run that
	// starts at startAt.
	edit := func(startAt string, change func(doc map[string]any)) []byte {
		var m map[string]any
		require.NoError(t, json.Unmarshal(own, &m))
		m["start_at"], m["run_id"] = startAt, "liar-"+startAt
		m["host"].(map[string]any)["hostname"] = "liar"
		change(m)
		b, err := json.Marshal(m)
		require.NoError(t, err)
		return b
	}
	for name, c := range map[string]struct {
		answer func(startAt string) []byte
		why    string
	}{
		"another workload": {func(at string) []byte {
			return edit(at, func(m map[string]any) { m["workload"].(map[string]any)["queue_depth"] = 32 })
		}, "its result cannot be merged with the other hosts': cannot merge 4KiB random read (vm) with 4KiB random read (liar): QD/workers differ (4/1 and 32/1)"},
		"counts that wrap": {func(at string) []byte {
			return edit(at, func(m map[string]any) {
				h := m["histogram"].(map[string]any)["read"].(map[string]any)
				b := h["buckets"].([]any)[0].([]any)
				b[1] = json.Number("18446744073709551615")
				h["buckets"], h["count"] = []any{b}, json.Number("18446744073709551615")
				lo, _ := result.BucketBounds(int(b[0].(float64)))
				h["min_ns"], h["max_ns"], h["sum_ns"] = lo, lo, 0
				s := m["summary"].(map[string]any)
				s["read_ops"], s["ops"] = json.Number("18446744073709551615"), json.Number("18446744073709551615")
			})
		}, "its result does not add up with the other hosts': summary.ops: the counts add up to more than 2^64"},
		"a replay": {func(string) []byte { return own }, "answered the result of another run: it was to start at "},
	} {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var answer []byte
			liar := fleettest.Fake(t, func(w http.ResponseWriter, r *http.Request) {
				switch r.Method {
				case http.MethodPost:
					var req struct {
						StartAt string `json:"start_at"`
					}
					body, _ := io.ReadAll(r.Body)
					_ = json.Unmarshal(body, &req)
					mu.Lock()
					answer = c.answer(req.StartAt)
					mu.Unlock()
					fmt.Fprint(w, `{"id": "r-1", "state": "accepted", "url": "/api/v1/runs/r-1"}`)
				default:
					mu.Lock()
					defer mu.Unlock()
					fmt.Fprintf(w, `{"id": "r-1", "state": "done", "result": %s}`, answer)
				}
			})
			out := filepath.Join(dir, name+".json")
			o := ioprobe(t, dir, localFleetArgs(good.addr+","+liar, "--output", "json", "--out", out)...)
			require.Equal(t, 1, o.code, o.stderr)
			require.Contains(t, o.stderr, liar)
			require.Contains(t, o.stderr, c.why)
			f := readFleetDoc(t, out)
			require.True(t, f.Partial)
			require.Equal(t, []string{liar}, f.FailedHosts)
			require.Equal(t, 1, f.Merged.Merged.Runs)
			require.Equal(t, f.Hosts[0].Result.Summary.Ops, f.Merged.Summary.Ops, "the good host's I/Os, counted once")
		})
	}
}

// TestRedteamFleetHostileRunAnswers: a host whose run answer has an id
// that is no daemon's ("../../-/reload": the controller's polls and stop
// went to that path) refuses the start as a host that refuses the run
// does (exit 2, named, the path never asked for); a host whose run is in
// a state no daemon answers (with a terminal's control characters: it
// was polled until a minute past the planned end, then written into the
// document as the host's state) is a failed host at once, named with no
// control character, and the other host is merged (exit 1, partial).
func TestRedteamFleetHostileRunAnswers(t *testing.T) {
	besideOthers(t)
	good := startLocalFleet(t, 1)[0]
	dir := t.TempDir()
	var mu sync.Mutex
	var paths []string
	badID := fleettest.Fake(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.Method+" "+r.URL.Path)
		mu.Unlock()
		if r.Method == http.MethodPost {
			fmt.Fprint(w, `{"id": "../../-/reload", "state": "accepted", "url": "/api/v1/runs/x"}`)
			return
		}
		fmt.Fprint(w, `{"id": "x", "state": "running"}`)
	})
	o := bounded(t, dir, localFleetArgs(good.addr+","+badID)...)
	require.Equal(t, 2, o.code, o.stderr)
	require.Contains(t, o.stderr, badID)
	require.Contains(t, o.stderr, `run id "../../-/reload": want 1 to 64 letters, digits`)
	mu.Lock()
	for _, p := range paths {
		require.NotContains(t, p, "reload", "the controller asked the liar for %s", p)
	}
	mu.Unlock()

	badState := fleettest.Fake(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			fmt.Fprint(w, `{"id": "r-1", "state": "accepted", "url": "/api/v1/runs/r-1"}`)
			return
		}
		fmt.Fprint(w, `{"id": "r-1", "state": "\u001b]0;pwned\u0007running"}`)
	})
	out := filepath.Join(dir, "fleet.json")
	o = bounded(t, dir, localFleetArgs(good.addr+","+badState, "--output", "json", "--out", out)...)
	require.Equal(t, 1, o.code, o.stderr)
	require.NotContains(t, o.stderr, "\x1b")
	require.Contains(t, o.stderr, badState)
	require.Contains(t, o.stderr, `unknown run state "\x1b]0;pwned\arunning"`)
	f := readFleetDoc(t, out)
	require.True(t, f.Partial)
	require.Equal(t, []string{badState}, f.FailedHosts)
	require.Equal(t, 1, f.Merged.Merged.Runs)
	for _, h := range f.Hosts {
		require.True(t, h.State.Answered(), "%s: state %q", h.Address, h.State)
	}
}
