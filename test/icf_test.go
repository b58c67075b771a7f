package test

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// The real binary imports an Iometer file: --dry-run lists Iometer's runs
// in its order and creates nothing; a network worker is refused with one
// line naming the file's line; a one-second run writes a suite document
// (decoded strictly) whose result carries the specification's lines.
func TestICFImport(t *testing.T) {
	dir := t.TempDir()
	tgt := filepath.Join(dir, "t.dat")
	icf, err := filepath.Abs("../pkg/icf/testdata/v2003.05.10-cycle-workers.icf")
	require.NoError(t, err)

	o := ioprobe(t, dir, "run", "--icf", icf, "--target", tgt, "--dry-run")
	require.Equal(t, 0, o.code, o.stderr)
	require.Equal(t, "ioprobe: "+icf+`: target "E: \"FAST\"" is `+tgt+"\n", o.stderr)
	var points []string
	for _, l := range strings.Split(o.stdout, "\n") {
		if strings.HasPrefix(l, "   8K random read: ") {
			points = append(points, l[strings.Index(l, "workers"):strings.Index(l, ", ramp")])
		}
	}
	require.Equal(t, []string{"workers 1", "workers 2", "workers 4", "workers 5"}, points)
	require.NoFileExists(t, tgt)

	data, err := os.ReadFile(icf)
	require.NoError(t, err)
	network := filepath.Join(dir, "net.icf")
	require.NoError(t, os.WriteFile(network, []byte(strings.Replace(string(data), "\tDISK\n'Default", "\tNETWORK,TCP\n'Default", 1)), 0o600))
	o = ioprobe(t, dir, "run", "--icf", network, "--target", tgt)
	require.Equal(t, 2, o.code)
	require.Equal(t, "ioprobe: "+network+`:48: [MANAGER LIST] 'Worker type: worker "Worker 1" is a network worker (NETWORK,TCP): ioprobe measures storage only`+"\n", o.stderr)
	require.Empty(t, o.stdout)
	require.NoFileExists(t, tgt)

	short := filepath.Join(dir, "short.icf")
	text := strings.Replace(string(data), "\t0          0          10", "\t0 0 1", 1)
	text = strings.Replace(text, "'Ramp Up Time (s)\n\t2", "'Ramp Up Time (s)\n\t0", 1)
	text = strings.Replace(text, "'Test Type\n\tCYCLE_WORKERS", "'Test Type\n\tNORMAL", 1)
	text = strings.ReplaceAll(text, "'Disk maximum size,starting sector\n\t0,0", "'Disk maximum size,starting sector\n\t16384,0")
	text = strings.Replace(text, "\t8192,100,100,100,0,1,0,0", "\t8192,60,100,100,0,1,0,0\n\t65536,40,0,0,0,1,0,0", 1)
	require.NoError(t, os.WriteFile(short, []byte(text), 0o600))
	o = ioprobe(t, dir, "run", "--icf", short, "--target", tgt, "--engine", "sync", "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)
	var s result.Suite
	decodeStrict(t, []byte(o.stdout), &s)
	require.Len(t, s.Results, 1)
	r := s.Results[0]
	require.Equal(t, 5, r.Workload.Workers, "the five workers on one target are one group")
	require.Len(t, r.Workload.Lines, 2)
	require.Len(t, r.Summary.Lines, 2)
	require.Equal(t, r.Summary.ReadOps*8192+r.Summary.WriteOps*65536, r.Summary.Bytes)
}

// The reports of an Iometer file name what the file names: the section is
// the file's test (its description), each column an access
// specification's name ("8K random read", "Streaming read"), never
// ioprobe's label of the mix ("Random Read", "67% Read 100% Random") — in
// the text tables, the CSV's point columns and the HTML tables alike.
func TestICFReportsUseTheFilesNames(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	tgt := filepath.Join(dir, "t.dat")
	src, err := os.ReadFile("../pkg/icf/testdata/v2003.05.10-cycle-workers.icf")
	require.NoError(t, err)
	text := strings.Replace(string(src), "\t0          0          10", "\t0 0 1", 1)
	text = strings.Replace(text, "'Ramp Up Time (s)\n\t2", "'Ramp Up Time (s)\n\t0", 1)
	text = strings.Replace(text, "'Test Type\n\tCYCLE_WORKERS", "'Test Type\n\tNORMAL", 1)
	text = strings.ReplaceAll(text, "'Disk maximum size,starting sector\n\t0,0", "'Disk maximum size,starting sector\n\t16384,0")
	one := filepath.Join(dir, "one.icf")
	require.NoError(t, os.WriteFile(one, []byte(text), 0o600))
	specsOnly, err := filepath.Abs("../pkg/icf/testdata/v2008.06.18-specs-only.icf")
	require.NoError(t, err)

	for _, c := range []struct {
		file, section string
		args          []string
		names         []string
	}{
		{one, "workers 1, 2, 4 and all five", nil, []string{"8K random read"}},
		// No 'TEST SETUP: the test is Iometer's type; --duration sets the time.
		{specsOnly, "NORMAL", []string{"--duration", "300ms"}, []string{"Default", "File server (mixed sizes)", "Streaming read"}},
	} {
		out := filepath.Join(dir, filepath.Base(c.file)+".json")
		o := ioprobe(t, dir, append([]string{"run", "--icf", c.file, "--target", tgt, "--engine", "sync", "--output", "json", "--out", out}, c.args...)...)
		require.Equal(t, 0, o.code, o.stderr)

		txt := ioprobe(t, dir, "report", out)
		require.Equal(t, 0, txt.code, txt.stderr)
		require.Contains(t, txt.stdout, "\n"+c.section+"\n", "the section is the file's test")
		for _, n := range c.names {
			require.Contains(t, txt.stdout, n)
		}
		for _, own := range []string{"Random Read", "Sequential Read", "67% Read 100% Random"} {
			require.NotContains(t, txt.stdout, own, "ioprobe's own label")
		}

		csvOut := ioprobe(t, dir, "report", out, "--output", "csv")
		require.Equal(t, 0, csvOut.code, csvOut.stderr)
		rows, err := csv.NewReader(strings.NewReader(csvOut.stdout)).ReadAll()
		require.NoError(t, err)
		var pats []string
		for _, row := range rows[1:] {
			require.Equal(t, c.section, row[slices.Index(rows[0], "point_section")])
			pats = append(pats, row[slices.Index(rows[0], "point_pattern")])
		}
		require.Equal(t, c.names, pats)

		html := ioprobe(t, dir, "report", out, "--output", "html")
		require.Equal(t, 0, html.code, html.stderr)
		require.Contains(t, html.stdout, "<h2>"+c.section+"</h2>")
		for _, n := range c.names {
			require.Contains(t, html.stdout, ">"+n+"<")
		}
		require.NotContains(t, html.stdout, ">Random Read<")
	}
}
