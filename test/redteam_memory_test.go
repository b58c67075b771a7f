package test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// emptyList is n empty JSON objects in a list: 3 bytes each, a whole
// Go struct each once decoded.
func emptyList(n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat("{},", n), ",") + "]"
}

// TestRedteamDecodedMemoryBounded: a 1 MB result whose summary lists
// 320,000 empty jobs (900 bytes each once read: 880 MB of memory and a
// minute on main) and a 6 MB fleet document listing two million empty
// hosts are refused at once, in one line naming the bound, within 2 GiB
// of address space; the result they were made from is read as before.
func TestRedteamDecodedMemoryBounded(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	good := shortRead(t, dir)
	var doc, summary map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(good, &doc))
	require.NoError(t, json.Unmarshal(doc["summary"], &summary))
	summary["jobs"] = json.RawMessage(emptyList(320000))
	var err error
	doc["summary"], err = json.Marshal(summary)
	require.NoError(t, err)
	jobs, err := json.Marshal(doc)
	require.NoError(t, err)
	jobsFile := filepath.Join(dir, "jobs.json")
	require.NoError(t, os.WriteFile(jobsFile, jobs, 0o600))
	hostsFile := filepath.Join(dir, "hosts.json")
	require.NoError(t, os.WriteFile(hostsFile, []byte(`{"schema":"`+result.FleetSchema+`","version":"1","hosts":`+emptyList(2_000_000)+`}`), 0o600))

	for file, where := range map[string]string{jobsFile: "summary.jobs", hostsFile: "hosts"} {
		for _, args := range [][]string{{"report", file}, {"compare", "a.json", file}} {
			o := bounded(t, dir, args...)
			require.Equal(t, 2, o.code, "%v: %s", args, o.stderr)
			require.Regexp(t, `^ioprobe: `+file+`: bad \S+ document: `+where+`: (the document|the 2 documents read together) would take more than 256 MiB of memory once read \(its lists are too long\)\n$`, o.stderr)
			require.Empty(t, o.stdout)
		}
	}
	o := bounded(t, dir, "report", "-o", "json", "a.json")
	require.Equal(t, 0, o.code, o.stderr)
}
