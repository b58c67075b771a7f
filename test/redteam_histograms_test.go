package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/fleet/fleettest"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// A latency histogram is read into NumBuckets dense counters (34 KiB)
// from as little as 90 bytes of JSON. Bounding a document's size alone
// leaves a document of many small histograms free to take hundreds of
// times its size in memory: these tests give ioprobe such documents, as
// files and as a fleet host's answer, within 2 GiB of address space.

// emptyHistogram is the smallest histogram a document can hold.
const emptyHistogram = `{"layout":"log-linear-ns-128","count":0,"sum_ns":0,"min_ns":0,"max_ns":0,"buckets":[]}`

// manyHistograms is the result document res with jobs added, each with
// nine empty histograms (its own four and a device's five): jobs×9
// histograms in about jobs×900 bytes. The result gets another run id
// and host, so that it is another run.
func manyHistograms(t *testing.T, res []byte, jobs int, host string) []byte {
	t.Helper()
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(res, &doc))
	dev := `{"read":` + emptyHistogram + `,"write":` + emptyHistogram + `,"flush":` + emptyHistogram +
		`,"queue_read":` + emptyHistogram + `,"queue_write":` + emptyHistogram + `}`
	job := `{"name":"j","workload":` + string(doc["workload"]) + `,"histogram":{"read":` + emptyHistogram +
		`,"write":` + emptyHistogram + `,"sync":` + emptyHistogram + `,"intended":` + emptyHistogram + `,"device":` + dev + `}}`
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range jobs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(job)
	}
	b.WriteByte(']')
	var summary map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(doc["summary"], &summary))
	summary["jobs"] = b.Bytes()
	var err error
	doc["summary"], err = json.Marshal(summary)
	require.NoError(t, err)
	doc["run_id"] = json.RawMessage(`"many-` + host + `"`)
	var hostDoc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(doc["host"], &hostDoc))
	hostDoc["hostname"] = json.RawMessage(`"` + host + `"`)
	doc["host"], err = json.Marshal(hostDoc)
	require.NoError(t, err)
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return out
}

// TestRedteamHistogramsBoundedInFiles: report, report --merge and
// compare of a 19 MB result holding 144,000 empty histograms (5 GB once
// read) are refused at once, in one line naming the bound, within 2 GiB
// of address space; a result with 900 is read as before.
func TestRedteamHistogramsBoundedInFiles(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	good := shortRead(t, dir)
	bomb := filepath.Join(dir, "bomb.json")
	require.NoError(t, os.WriteFile(bomb, manyHistograms(t, good, 16000, "bomb"), 0o600))

	for _, args := range [][]string{{"report", bomb}, {"report", "--merge", "a.json", bomb}, {"compare", "a.json", bomb}} {
		o := bounded(t, dir, args...)
		require.Equal(t, 2, o.code, "%v: %s", args, o.stderr)
		require.Regexp(t, `^ioprobe: `+bomb+`: bad `+strings.ReplaceAll(result.Schema, ".", `\.`)+` document: summary\.jobs\[\d+\]\.histogram\.\w+(\.\w+)?: more than 16384 latency histograms \(each takes 34 KiB of memory once read\) in (one document|the 2 documents read together)\n$`, o.stderr)
		require.Empty(t, o.stdout)
	}

	few := filepath.Join(dir, "few.json")
	require.NoError(t, os.WriteFile(few, manyHistograms(t, good, 100, "few"), 0o600))
	o := bounded(t, dir, "report", "-o", "json", few)
	require.Equal(t, 0, o.code, o.stderr)
}

// TestRedteamHistogramsBoundedAcrossFiles: the files of one report or
// compare share the bound: two results of 9,000 histograms each, each
// within it, are refused together naming the second (before, ten such
// files took 3 GB, a hundred 30 GB); one of them alone is read.
func TestRedteamHistogramsBoundedAcrossFiles(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	good := shortRead(t, dir)
	one, two := filepath.Join(dir, "one.json"), filepath.Join(dir, "two.json")
	require.NoError(t, os.WriteFile(one, manyHistograms(t, good, 1000, "one"), 0o600))
	require.NoError(t, os.WriteFile(two, manyHistograms(t, good, 1000, "two"), 0o600))
	for _, args := range [][]string{{"report", "--merge", one, two}, {"compare", one, two}} {
		o := ioprobe(t, dir, args...) // the first file takes 300 MB: not within bounded's 2 GiB of address space
		require.Equal(t, 2, o.code, "%v: %s", args, o.stderr)
		require.Regexp(t, `^ioprobe: `+two+`: bad \S+ document: summary\.jobs\[\d+\]\.histogram\.\w+(\.\w+)?: more than 16384 latency histograms \(each takes 34 KiB of memory once read\) in the 2 documents read together\n$`, o.stderr)
	}
	o := ioprobe(t, dir, "report", "-o", "json", one)
	require.Equal(t, 0, o.code, o.stderr)
}

// TestRedteamHistogramsBoundedFromAHost: a fleet host that answers a
// result of 108,000 empty histograms (14 MB, within the answer's size
// bound; 3.7 GB once read) is a failed host, named with the bound; the fleet keeps the
// other host's result and its memory stays within 2 GiB.
func TestRedteamHistogramsBoundedFromAHost(t *testing.T) {
	besideOthers(t)
	good := startLocalFleet(t, 1)[0]
	dir := t.TempDir()
	bomb := manyHistograms(t, hostResult(t, dir, good), 12000, "bomb")
	require.Less(t, len(bomb), 16<<20, "within the bound of an answer's size")

	liar := fleettest.Fake(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
			fmt.Fprint(w, `{"id": "r-1", "state": "accepted", "url": "/api/v1/runs/r-1"}`)
		default:
			fmt.Fprintf(w, `{"id": "r-1", "state": "done", "result": %s}`, bomb)
		}
	})
	out := filepath.Join(dir, "fleet.json")
	o := bounded(t, dir, localFleetArgs(good.addr+","+liar, "--output", "json", "--out", out)...)
	require.Equal(t, 1, o.code, o.stderr)
	require.Contains(t, o.stderr, liar)
	require.Contains(t, o.stderr, "more than 16384 latency histograms")
	f := readFleetDoc(t, out)
	require.True(t, f.Partial)
	require.Equal(t, []string{liar}, f.FailedHosts)
	require.Equal(t, 1, f.Merged.Merged.Runs)
}
