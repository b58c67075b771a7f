package test

import (
	"os"
	"path/filepath"
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
