package test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// localFleetHost is one daemon of a local fleet.
type localFleetHost struct {
	*daemon
	file string // its target "data"
}

// startLocalFleet starts n daemons with a target named "data" of 8 MiB each
// and the run API enabled.
func startLocalFleet(t *testing.T, n int) []localFleetHost {
	t.Helper()
	var out []localFleetHost
	for range n {
		dir := t.TempDir()
		file := filepath.Join(dir, "probe.dat")
		cfg := filepath.Join(dir, "ioprobe.yaml")
		require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, "targets:\n  data:\n    path: %s\n    size: 8MiB\napi:\n  runs:\n    max_duration: 1m\n", file), 0o600))
		d := startDaemon(t, "--config", cfg, "--web.enable-admin-api")
		out = append(out, localFleetHost{daemon: d, file: file})
	}
	return out
}

func localFleetAddrs(hosts []localFleetHost) string {
	var a []string
	for _, h := range hosts {
		a = append(a, h.addr)
	}
	return strings.Join(a, ",")
}

// localFleetArgs are a short fleet run's flags: two seconds' start delay
// (each host creates and fills its 4 MiB target before the start: 1.2 s at
// load 13, beside the package's other waiting tests, and a host not ready
// at the start rightly measures nothing), no ramp, a short measurement.
func localFleetArgs(hosts string, extra ...string) []string {
	return append([]string{"fleet", "run", "--hosts", hosts, "--target", "data", "--size", "4MiB", "--qd", "4",
		"--ramp", "0s", "--duration", "1s", "--start-delay", "2s", "--engine", "sync"}, extra...)
}

// readFleetDoc reads the fleet document a fleet run wrote to path.
func readFleetDoc(t *testing.T, path string) *result.Fleet {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var f result.Fleet
	decodeStrict(t, data, &f)
	require.Equal(t, result.FleetSchema, f.Schema)
	return &f
}

// apiRunsOf is what a daemon's run history holds.
func apiRunsOf(t *testing.T, addr string) []json.RawMessage {
	t.Helper()
	var runs struct {
		Runs []json.RawMessage `json:"runs"`
	}
	require.NoError(t, json.Unmarshal([]byte(fetch(t, "http://"+addr+"/api/v1/runs")), &runs))
	return runs.Runs
}

// waitMeasuring waits until the daemon at addr has completed I/O of an
// API run (the fleet runs have no ramp-up: it is measuring).
func waitMeasuring(t *testing.T, addr string) {
	t.Helper()
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return liveAPIOps.Match(body)
	}, 30*time.Second, 20*time.Millisecond)
}

// hostResult runs localFleetArgs on the one host good and returns the
// host's own result from the fleet document (written in dir): a real
// daemon's answer, for a fake host to edit.
func hostResult(t *testing.T, dir string, good localFleetHost) json.RawMessage {
	t.Helper()
	first := filepath.Join(dir, "first.json")
	o := ioprobe(t, dir, localFleetArgs(good.addr, "--output", "json", "--out", first)...)
	require.Equal(t, 0, o.code, o.stderr)
	var doc struct {
		Hosts []struct {
			Result json.RawMessage `json:"result"`
		} `json:"hosts"`
	}
	data, err := os.ReadFile(first)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &doc))
	require.Len(t, doc.Hosts, 1)
	return doc.Hosts[0].Result
}
