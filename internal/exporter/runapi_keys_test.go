package exporter

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/runapi"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// TestRunAPIKeysAsWritten: encoding/json matches keys case-insensitively
// and keeps the last of two, while the run API's checks read the keys as
// written. On main "Lines" with a line that has no read_pct ran as writes
// (202), and "LINES" with a share of 0 was accepted: every such request is
// now 400 naming the key, and nothing runs.
func TestRunAPIKeysAsWritten(t *testing.T) {
	d, dir := newDaemon(t, runAPIConfig, WebOptions{EnableAdminAPI: true})
	base, _ := start(t, d)
	const spec = `"block_sizes": [{"bytes": 4096, "weight": 1}], "random_pct": 100, "queue_depth": 1, "workers": 1, "engine": "sync"`
	for _, c := range []struct{ name, body, want string }{
		// read_pct and random_pct 0 satisfy the spec's required keys and
		// combine with lines; the line's missing read_pct is 0: writes.
		{"Lines without read_pct", `{"target": "data", "duration": "1s", "specs": [{"read_pct": 0, "random_pct": 0, "queue_depth": 1, "workers": 1,
			"Lines": [{"bytes": 4096, "share": 100, "random_pct": 100}]}]}`,
			`specs[0]: unknown field "Lines" (keys are case-sensitive: did you mean "lines"?)`},
		{"LINES with share 0", `{"target": "data", "duration": "1s", "specs": [{"read_pct": 0, "random_pct": 0, "queue_depth": 1, "workers": 1,
			"LINES": [{"bytes": 4096, "share": 0, "read_pct": 100, "random_pct": 100}, {"bytes": 4096, "share": 100, "read_pct": 100, "random_pct": 100}]}]}`,
			`specs[0]: unknown field "LINES" (keys are case-sensitive: did you mean "lines"?)`},
		{"Read_Pct", `{"target": "data", "duration": "1s", "specs": [{"Read_Pct": 100, ` + spec + `}]}`,
			`specs[0]: unknown field "Read_Pct" (keys are case-sensitive: did you mean "read_pct"?)`},
		{"Read_Pct in a line", `{"target": "data", "duration": "1s", "specs": [{"random_pct": 100, "queue_depth": 1, "workers": 1,
			"lines": [{"bytes": 4096, "share": 100, "Read_Pct": 100, "random_pct": 100}]}]}`,
			`specs[0].lines[0]: unknown field "Read_Pct" (keys are case-sensitive: did you mean "read_pct"?)`},
		{"Target", `{"Target": "data", "duration": "1s", "specs": [{"read_pct": 100, ` + spec + `}]}`,
			`bad request body: unknown field "Target" (keys are case-sensitive: did you mean "target"?)`},
		{"Dry_Run", `{"target": "data", "Dry_Run": true, "duration": "1s", "specs": [{"read_pct": 100, ` + spec + `}]}`,
			`bad request body: unknown field "Dry_Run" (keys are case-sensitive: did you mean "dry_run"?)`},
		{"unknown key", `{"target": "data", "duration": "1s", "specs": [{"read_pct": 100, "burst": 1, ` + spec + `}]}`,
			`specs[0]: unknown field "burst"`},
		{"lines twice", `{"target": "data", "duration": "1s", "specs": [{"random_pct": 100, "queue_depth": 1, "workers": 1,
			"lines": [{"bytes": 4096, "share": 100, "read_pct": 100, "random_pct": 100}],
			"lines": [{"bytes": 4096, "share": 100, "random_pct": 100}]}]}`,
			`specs[0]: field "lines" is given twice`},
		{"read_pct twice", `{"target": "data", "duration": "1s", "specs": [{"read_pct": 100, "read_pct": 0, ` + spec + `}]}`,
			`specs[0]: field "read_pct" is given twice`},
		{"line without read_pct", `{"target": "data", "duration": "1s", "specs": [{"random_pct": 100, "queue_depth": 1, "workers": 1,
			"lines": [{"bytes": 4096, "share": 100, "random_pct": 100}]}]}`,
			`specs[0].lines[0]: share, read_pct and random_pct are required`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, b := postJSON(t, http.MethodPost, base+"/api/v1/runs", []byte(c.body))
			require.Equal(t, http.StatusBadRequest, code, string(b))
			require.Equal(t, c.want, errorOf(t, b))
		})
	}
	require.NoFileExists(t, filepath.Join(dir, "data.dat"), "nothing ran")
	require.Empty(t, d.history.list(apiJob, 0))

	// What the fleet sends (runapi's and workload.Spec's own JSON) is
	// accepted, lines included.
	s := workload.Spec{Name: "mixed", Workers: 1, QueueDepth: 1, Engine: "sync",
		Lines: []workload.Line{{Bytes: 4096, Share: 70, ReadPct: 100, RandomPct: 100}, {Bytes: 8192, Share: 30, ReadPct: 100}}}
	req := runapi.RunRequest{Target: "data", Duration: "1s", Ramp: "0s", DryRun: true}
	require.NoError(t, req.SetSpecs([]workload.Spec{s}))
	out, err := json.Marshal(req)
	require.NoError(t, err)
	code, b := postJSON(t, http.MethodPost, base+"/api/v1/runs", out)
	require.Equal(t, http.StatusOK, code, string(b))
}

// TestRunAPINamesArePrintable: a label, pattern or spec name with a
// control character or a bidi override is refused (on main the pattern
// and the spec's name were taken as sent, into results and reports).
func TestRunAPINamesArePrintable(t *testing.T) {
	d, dir := newDaemon(t, runAPIConfig, WebOptions{EnableAdminAPI: true})
	base, _ := start(t, d)
	for _, c := range []struct {
		change func(r map[string]any)
		want   string
	}{
		{func(r map[string]any) { r["label"] = "x\x1b[2J" }, "label: at most 128 printable characters"},
		{func(r map[string]any) { r["pattern"] = "Random Read\r\nFORGED" }, "pattern: at most 256 printable characters"},
		{func(r map[string]any) { r["specs"].([]any)[0].(map[string]any)["name"] = "rr\u202eevil" }, "specs[0].name: at most 256 printable characters"},
	} {
		code, b := postJSON(t, http.MethodPost, base+"/api/v1/runs", body("data", c.change))
		require.Equal(t, http.StatusBadRequest, code, string(b))
		require.Equal(t, c.want, errorOf(t, b))
	}
	require.NoFileExists(t, filepath.Join(dir, "data.dat"))
}
