package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/fleet/fleettest"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// A result from a file or a host that does not add up is refused, naming
// the file or the host: two buckets raised by 2^63 each sum back to the
// count, and would make p50 = p99.99 = the fastest bucket, with status ok.

// wrapBuckets raises the first and last bucket of the read histogram of
// the result document res by 2^63 each (their sum wraps back to the
// count) and gives it another run id and host, so that it is another run.
func wrapBuckets(t *testing.T, res []byte, host string) []byte {
	t.Helper()
	var doc map[string]any
	d := json.NewDecoder(bytes.NewReader(res))
	d.UseNumber()
	require.NoError(t, d.Decode(&doc))
	buckets := doc["histogram"].(map[string]any)["read"].(map[string]any)["buckets"].([]any)
	require.GreaterOrEqual(t, len(buckets), 2, "a run of reads fills more than one bucket")
	for _, i := range []int{0, len(buckets) - 1} {
		pair := buckets[i].([]any)
		n, err := strconv.ParseUint(string(pair[1].(json.Number)), 10, 64)
		require.NoError(t, err)
		pair[1] = json.Number(strconv.FormatUint(n+1<<63, 10))
	}
	doc["run_id"] = "wrapped-" + host
	doc["host"].(map[string]any)["hostname"] = host
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return out
}

// TestInputsWrappedHistogramRefused: report and report --merge of a
// result whose buckets wrap are refused naming the file; two results
// that each add up but whose sum wraps are refused by --merge naming the
// file at which it wraps.
func TestInputsWrappedHistogramRefused(t *testing.T) {
	dir := t.TempDir()
	good := shortRead(t, dir)
	wrapped := filepath.Join(dir, "wrapped.json")
	require.NoError(t, os.WriteFile(wrapped, wrapBuckets(t, good, "liar"), 0o600))

	for _, args := range [][]string{{"report", wrapped}, {"report", "--merge", "a.json", wrapped}, {"compare", "a.json", wrapped}} {
		o := ioprobe(t, dir, args...)
		require.Equal(t, 2, o.code, "%v: %s", args, o.stderr)
		require.Equal(t, "ioprobe: "+wrapped+": bad "+result.Schema+" document: histogram buckets hold more than 2^64 values (a count wrapped, or is not one)\n", o.stderr)
		require.Empty(t, o.stdout)
	}

	// Each adds up on its own (2^63 reads in one bucket); together they
	// are 2^64.
	var doc map[string]any
	d := json.NewDecoder(bytes.NewReader(good))
	d.UseNumber()
	require.NoError(t, d.Decode(&doc))
	half := json.Number(strconv.FormatUint(1<<63, 10))
	read := doc["histogram"].(map[string]any)["read"].(map[string]any)
	first := read["buckets"].([]any)[0].([]any)
	read["buckets"] = []any{[]any{first[0], half}}
	read["count"] = half
	lo, hi := bucketRange(t, first[0].(json.Number))
	read["min_ns"], read["max_ns"], read["sum_ns"] = lo, hi, half
	summary := doc["summary"].(map[string]any)
	summary["read_ops"], summary["ops"] = half, half
	var names []string
	for _, host := range []string{"one", "two"} {
		doc["run_id"] = "half-" + host
		doc["host"].(map[string]any)["hostname"] = host
		b, err := json.Marshal(doc)
		require.NoError(t, err)
		p := filepath.Join(dir, host+".json")
		require.NoError(t, os.WriteFile(p, b, 0o600))
		names = append(names, p)
		o := ioprobe(t, dir, "report", p)
		require.Equal(t, 0, o.code, "each file adds up on its own: %s", o.stderr)
	}
	o := ioprobe(t, dir, "report", "--merge", names[0], names[1])
	require.Equal(t, 2, o.code, o.stderr)
	require.Contains(t, o.stderr, "ioprobe: --merge: "+names[1]+" does not add up with the others: ")
	require.Contains(t, o.stderr, "add up to more than 2^64")
	require.Empty(t, o.stdout)
}

// bucketRange is the lowest and highest value, in ns, of histogram
// bucket i (result.BucketBounds).
func bucketRange(t *testing.T, i json.Number) (lo, hi json.Number) {
	t.Helper()
	n, err := strconv.Atoi(string(i))
	require.NoError(t, err)
	l, h := result.BucketBounds(n)
	return json.Number(strconv.FormatUint(l, 10)), json.Number(strconv.FormatUint(h-1, 10))
}

// TestInputsFleetWrappedHistogramHost: a host answers its run done with
// a result whose buckets wrap. It is a failed host, named with why; the
// real daemon's result is merged alone, and its percentiles are its own.
func TestInputsFleetWrappedHistogramHost(t *testing.T) {
	besideOthers(t)
	good := startLocalFleet(t, 1)[0]
	dir := t.TempDir()
	lie := wrapBuckets(t, hostResult(t, dir, good), "liar")

	liar := fleettest.Fake(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
			fmt.Fprint(w, `{"id": "r-1", "state": "accepted", "url": "/api/v1/runs/r-1"}`)
		default:
			fmt.Fprintf(w, `{"id": "r-1", "state": "done", "result": %s}`, lie)
		}
	})
	out := filepath.Join(dir, "fleet.json")
	o := ioprobe(t, dir, localFleetArgs(good.addr+","+liar, "--output", "json", "--out", out)...)
	require.Equal(t, 1, o.code, o.stderr)
	require.Contains(t, o.stderr, liar)
	require.Contains(t, o.stderr, "histogram buckets hold more than 2^64 values")
	f := readFleetDoc(t, out)
	require.True(t, f.Partial)
	require.Equal(t, []string{liar}, f.FailedHosts)
	require.Equal(t, 1, f.Merged.Merged.Runs)
	own := f.Hosts[0].Result.Summary.Latency
	require.Equal(t, own.Percentiles, f.Merged.Summary.Latency.Percentiles, "the merged percentiles are the real host's")
	require.False(t, math.IsNaN(f.Merged.Summary.Latency.StddevSeconds))
	require.Less(t, f.Merged.Summary.Latency.StddevSeconds, 1.0, "no stddev of hours")
	require.True(t, strings.Contains(o.stderr, "failed"), o.stderr)
}
