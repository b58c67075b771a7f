package report

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// fleetHosts are three hosts of a fleet, two of them one machine's network
// namespaces (same hostname, own address), each with its own result of a
// point; their measurement windows differ by a few ms, as a fleet's do.
func fleetHosts(t *testing.T, p result.Point, n int) []result.FleetHost {
	t.Helper()
	names := []string{"node1", "node1", "node2"}
	elapsed := []float64{10.004, 9.998, 10.001}
	w := wl(p.Name, 8192, 70, 100, 8, 2)
	var hs []result.FleetHost
	for i := range n {
		h := esxHost
		h.Hostname = names[i]
		r := measured(h, p, w, 1000*float64(i+1), 10, i)
		summarise(r, r.Summary.ReadBytes, r.Summary.WriteBytes, elapsed[i])
		hs = append(hs, result.FleetHost{Address: fmt.Sprintf("10.0.0.%d:9100", i+1), Identity: h, State: result.RunDone, Result: r})
	}
	return hs
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./internal/report -update to create it")
	require.Equal(t, string(want), string(got), "differs from %s (go test ./internal/report -update rewrites it)", path)
}
