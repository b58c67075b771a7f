package test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testdeps"
	"github.com/ioprobe/ioprobe/internal/testjson"
)

// The paths of fio's json+ document that fio-plot (fiolib/jsonparsing*.py)
// and fio_jsonplus_clat2csv read. "*" is every element of an array; a
// trailing "{}" means the object's key set must be fio's too.
var fioReadPaths = []string{
	"fio version", "global options", "jobs",
	"jobs/*/jobname", "jobs/*/groupid", "jobs/*/error", "jobs/*/job options",
	"jobs/*/job options/rw", "jobs/*/job options/bs", "jobs/*/job options/iodepth", "jobs/*/job options/numjobs",
	"jobs/*/usr_cpu", "jobs/*/sys_cpu", "jobs/*/ctx",
	"jobs/*/latency_ns{}", "jobs/*/latency_us{}", "jobs/*/latency_ms{}",
	"jobs/*/sync/total_ios", "jobs/*/sync/lat_ns/min", "jobs/*/sync/lat_ns/max", "jobs/*/sync/lat_ns/mean",
	"jobs/*/sync/lat_ns/stddev", "jobs/*/sync/lat_ns/N",
	// A local run's job as fio writes it (no hostname: fio-plot takes a
	// job with one for client/server output), and its queue figures.
	"jobs/*{}", "jobs/*/eta", "jobs/*/iodepth_level{}", "jobs/*/iodepth_submit{}", "jobs/*/iodepth_complete{}",
	"jobs/*/latency_depth", "jobs/*/latency_target", "jobs/*/latency_percentile", "jobs/*/latency_window",
	"disk_util/*{}", "disk_util/*/util", "disk_util/*/read_ios", "disk_util/*/read_merges",
}

func init() {
	for _, dir := range []string{"read", "write", "trim"} {
		for _, f := range []string{"io_bytes", "io_kbytes", "bw", "bw_bytes", "iops", "runtime", "total_ios",
			"short_ios", "drop_ios", "iops_stddev"} {
			fioReadPaths = append(fioReadPaths, "jobs/*/"+dir+"/"+f)
		}
		for _, lat := range []string{"slat_ns", "clat_ns", "lat_ns"} {
			for _, f := range []string{"min", "max", "mean", "stddev", "N"} {
				fioReadPaths = append(fioReadPaths, "jobs/*/"+dir+"/"+lat+"/"+f)
			}
		}
	}
	for _, dir := range []string{"read", "write"} {
		fioReadPaths = append(fioReadPaths, "jobs/*/"+dir+"/clat_ns/percentile{}", "jobs/*/"+dir+"/clat_ns/bins")
	}
}

// jsonKind names a decoded value's JSON type, telling an integer from a
// float by its text as Python's json module does.
func jsonKind(v any) string {
	switch x := v.(type) {
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			return "float"
		}
		return "int"
	case string:
		return "string"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case bool:
		return "bool"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

func decodeNumbers(t *testing.T, data []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc map[string]any
	require.NoError(t, dec.Decode(&doc), "%.2000s", data)
	return doc
}

// lookup returns the values at path (every element where it says "*").
func lookup(v any, path []string) []any {
	if len(path) == 0 {
		return []any{v}
	}
	if path[0] == "*" {
		arr, _ := v.([]any)
		var out []any
		for _, e := range arr {
			out = append(out, lookup(e, path[1:])...)
		}
		return out
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	e, ok := m[path[0]]
	if !ok {
		return nil
	}
	return lookup(e, path[1:])
}

func keysOf(v any) []string {
	m, _ := v.(map[string]any)
	var k []string
	for key := range m {
		k = append(k, key)
	}
	sort.Strings(k)
	return k
}

// runFio runs fio once, json+, on a small file: the reference shape.
func runFio(t *testing.T, dir string) (map[string]any, []byte) {
	t.Helper()
	testdeps.Need(t, testdeps.Tool("fio"))
	out := filepath.Join(dir, "fio.json")
	cmd := exec.Command("fio", "--direct=1", "--name=ref", "--filename="+filepath.Join(dir, "fio.dat"),
		"--size=8M", "--rw=randrw", "--bs=4k", "--iodepth=4", "--numjobs=1", "--ioengine=psync",
		"--number_ios=500", "--output-format=json+", "--output="+out)
	o := runCmd(t, cmd)
	require.Equal(t, 0, o.code, o.stderr)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	return decodeNumbers(t, data), data
}

// orderedKeys returns the keys of the object at path in a JSON document,
// in the document's order (array elements by index).
func orderedKeys(t *testing.T, data []byte, path ...string) []string {
	t.Helper()
	keys, err := testjson.Keys(data, path...)
	require.NoError(t, err)
	return keys
}

// TestFioJSONHasFioShape: at every path fio-plot and
// fio_jsonplus_clat2csv read, ioprobe's fio-json has what fio itself
// writes, with the same JSON type; the tools' own reader turns it into
// CSV whose counts are ioprobe's op counts.
func TestFioJSONHasFioShape(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	ref, refData := runFio(t, dir)

	// 400 I/Os, not a window: both directions must be there (a window
	// beside load may complete none).
	o := ioprobe(t, dir, append([]string{"run", "--target", filepath.Join(dir, "probe.dat"), "--size", "16MiB", "--bs", "4k",
		"--read-pct", "70", "--random-pct", "100", "--qd", "4", "--output", "json"}, countedIOs(400)...)...)
	require.Equal(t, 0, o.code, o.stderr)
	r := decodeResult(t, o.stdout)
	require.NotZero(t, r.Summary.ReadOps)
	require.NotZero(t, r.Summary.WriteOps)
	resFile := filepath.Join(dir, "run.json")
	require.NoError(t, os.WriteFile(resFile, []byte(o.stdout), 0o600))

	// The same result, converted by report (not re-measured).
	fj := ioprobe(t, dir, "report", resFile, "--output", "fio-json")
	require.Equal(t, 0, fj.code, fj.stderr)
	got := decodeNumbers(t, []byte(fj.stdout))

	for _, p := range fioReadPaths {
		keys := strings.HasSuffix(p, "{}")
		path := strings.Split(strings.TrimSuffix(p, "{}"), "/")
		want, have := lookup(ref, path), lookup(got, path)
		require.NotEmpty(t, want, "fio itself has no %q", p)
		require.Len(t, have, len(want), "ioprobe's fio-json at %q", p)
		for i := range want {
			require.Equal(t, jsonKind(want[i]), jsonKind(have[i]), "type at %q", p)
			if keys {
				require.Equal(t, keysOf(want[i]), keysOf(have[i]), "keys at %q", p)
			}
		}
	}
	jobs := lookup(got, []string{"jobs", "*"})
	require.Len(t, jobs, 1)
	job := jobs[0].(map[string]any)
	require.NotContains(t, job, "hostname", "a local run, as fio writes it")
	// Keys in fio's order, where fio-plot and people read them.
	for _, p := range [][]string{{"jobs", "0"}, {"jobs", "0", "read", "clat_ns", "percentile"}, {"jobs", "0", "latency_ms"}, {"jobs", "0", "iodepth_level"}} {
		require.Equal(t, orderedKeys(t, refData, p...), orderedKeys(t, []byte(fj.stdout), p...), "key order at %v", p)
	}
	require.Equal(t, "randrw", job["job options"].(map[string]any)["rw"])
	require.Equal(t, "70", job["job options"].(map[string]any)["rwmixread"])
	require.Equal(t, strconv.FormatUint(r.Summary.ReadOps, 10), string(lookup(got, strings.Split("jobs/*/read/total_ios", "/"))[0].(json.Number)))

	// fio's own converter: the CSV's counts are ioprobe's op counts, and
	// its --validate agrees with the document.
	clat2csv := testdeps.LookPath(t, "fio_jsonplus_clat2csv")
	fioFile := filepath.Join(dir, "ioprobe-fio.json")
	require.NoError(t, os.WriteFile(fioFile, []byte(fj.stdout), 0o600))
	stub := filepath.Join(dir, "lat.csv")
	c := runCmd(t, exec.Command("python3", clat2csv, fioFile, stub))
	require.Equal(t, 0, c.code, c.stderr)
	v := runCmd(t, exec.Command("python3", clat2csv, fioFile, stub, "--validate"))
	require.Equal(t, 0, v.code, v.stderr)
	require.Contains(t, v.stdout, "validated")

	data, err := os.ReadFile(filepath.Join(dir, "lat_job0.csv"))
	require.NoError(t, err)
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	require.NoError(t, err)
	header := rows[0]
	col := func(name string) int {
		for i, h := range header {
			if strings.TrimSpace(h) == name {
				return i
			}
		}
		t.Fatalf("no column %q in %v", name, header)
		return -1
	}
	sum := func(name string) uint64 {
		i := col(name)
		var n uint64
		for _, row := range rows[1:] {
			if i < len(row) && strings.TrimSpace(row[i]) != "" {
				v, err := strconv.ParseUint(strings.TrimSpace(row[i]), 10, 64)
				require.NoError(t, err)
				n += v
			}
		}
		return n
	}
	require.Equal(t, r.Summary.ReadOps, sum("read_clat_ns_count"))
	require.Equal(t, r.Summary.WriteOps, sum("write_clat_ns_count"))
	require.Zero(t, sum("trim_clat_ns_count"))
}

// TestFioJSONSyncHasFioShape: a flushing run's fio-json has fio's own
// sync section — the keys and JSON types fio 3.x writes for
// --fdatasync=1 with json+ (lat_ns with percentiles and bins) — and its
// counts are ioprobe's flush count.
func TestFioJSONSyncHasFioShape(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	testdeps.Need(t, testdeps.Tool("fio"))
	fioOut := filepath.Join(dir, "fio.json")
	f := runCmd(t, exec.Command("fio", "--direct=1", "--name=ref", "--filename="+filepath.Join(dir, "fio.dat"),
		"--size=8M", "--rw=write", "--bs=4k", "--fdatasync=1", "--ioengine=psync", "--number_ios=200",
		"--output-format=json+", "--output="+fioOut))
	require.Equal(t, 0, f.code, f.stderr)
	data, err := os.ReadFile(fioOut)
	require.NoError(t, err)
	ref := decodeNumbers(t, data)

	o := ioprobe(t, dir, append([]string{"run", "--target", filepath.Join(dir, "probe.dat"), "--size", "8MiB", "--bs", "4k",
		"--read-pct", "0", "--random-pct", "0", "--qd", "1", "--fdatasync", "1", "--output", "json"}, countedIOs(64)...)...)
	require.Equal(t, 0, o.code, o.stderr)
	r := decodeResult(t, o.stdout)
	require.NotNil(t, r.Summary.Sync)
	require.NotZero(t, r.Summary.Sync.Ops)
	resFile := filepath.Join(dir, "run.json")
	require.NoError(t, os.WriteFile(resFile, []byte(o.stdout), 0o600))
	fj := ioprobe(t, dir, "report", resFile, "--output", "fio-json")
	require.Equal(t, 0, fj.code, fj.stderr)
	got := decodeNumbers(t, []byte(fj.stdout))

	for _, p := range []string{"jobs/*/sync{}", "jobs/*/sync/total_ios", "jobs/*/sync/lat_ns{}",
		"jobs/*/sync/lat_ns/min", "jobs/*/sync/lat_ns/max", "jobs/*/sync/lat_ns/mean", "jobs/*/sync/lat_ns/stddev",
		"jobs/*/sync/lat_ns/N", "jobs/*/sync/lat_ns/percentile{}", "jobs/*/sync/lat_ns/bins"} {
		keys := strings.HasSuffix(p, "{}")
		path := strings.Split(strings.TrimSuffix(p, "{}"), "/")
		want, have := lookup(ref, path), lookup(got, path)
		require.Len(t, want, 1, "fio itself at %q", p)
		require.Len(t, have, 1, "ioprobe's fio-json at %q", p)
		require.Equal(t, jsonKind(want[0]), jsonKind(have[0]), "type at %q", p)
		if keys {
			require.Equal(t, keysOf(want[0]), keysOf(have[0]), "keys at %q", p)
		}
	}
	// fio's own document counts its flushes in lat_ns.N.
	require.NotEqual(t, "0", string(lookup(ref, strings.Split("jobs/*/sync/lat_ns/N", "/"))[0].(json.Number)))

	ops := strconv.FormatUint(r.Summary.Sync.Ops, 10)
	require.Equal(t, ops, string(lookup(got, strings.Split("jobs/*/sync/total_ios", "/"))[0].(json.Number)))
	require.Equal(t, ops, string(lookup(got, strings.Split("jobs/*/sync/lat_ns/N", "/"))[0].(json.Number)))
	var binned uint64
	for _, v := range lookup(got, strings.Split("jobs/*/sync/lat_ns/bins", "/"))[0].(map[string]any) {
		n, err := strconv.ParseUint(string(v.(json.Number)), 10, 64)
		require.NoError(t, err)
		binned += n
	}
	require.Equal(t, r.Summary.Sync.Ops, binned)
	require.Equal(t, "1", lookup(got, strings.Split("jobs/*/job options/fdatasync", "/"))[0])
}
