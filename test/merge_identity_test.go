package test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// runTo runs a short measurement of tgt and writes its result to dir/name.
func runTo(t *testing.T, dir, tgt, name string, extra ...string) *result.Result {
	t.Helper()
	o := ioprobe(t, dir, append([]string{"run", "--target", tgt, "--size", "16MiB", "--qd", "2", "--duration", "300ms", "--ramp", "0s",
		"--output", "json"}, extra...)...)
	require.Equal(t, 0, o.code, o.stderr)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(o.stdout), 0o644))
	return decodeResult(t, o.stdout)
}

// TestReportMergeRefusesTheSameRunTwice: every result carries a run id;
// `report --merge` given one file twice, or a merged file and one of the
// results it holds, would count those I/Os twice: exit 2, one line naming
// the files and the run, nothing written.
func TestReportMergeRefusesTheSameRunTwice(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	tgt := prepared(t, dir)
	a := runTo(t, dir, tgt, "a.json")
	b := runTo(t, dir, tgt, "b.json")
	hex := regexp.MustCompile(`^[0-9a-f]{32}$`)
	require.Regexp(t, hex, a.RunID)
	require.Regexp(t, hex, b.RunID)
	require.NotEqual(t, a.RunID, b.RunID)

	refused := func(o outcome, says ...string) {
		t.Helper()
		require.Equal(t, 2, o.code, o.stderr)
		require.Empty(t, o.stdout)
		require.Equal(t, 1, strings.Count(o.stderr, "\n"), "one line: %q", o.stderr)
		for _, s := range says {
			require.Contains(t, o.stderr, s)
		}
	}
	refused(ioprobe(t, dir, "report", "--merge", "a.json", "a.json"), "a.json is named twice", "run id "+a.RunID, "twice")
	refused(ioprobe(t, dir, "report", "--merge", "a.json", "./a.json", "--output", "json"), "a.json and ./a.json both hold", "run id "+a.RunID)

	o := ioprobe(t, dir, "report", "--merge", "a.json", "b.json", "--output", "json", "--out", "m.json")
	require.Equal(t, 0, o.code, o.stderr)
	data, err := os.ReadFile(filepath.Join(dir, "m.json"))
	require.NoError(t, err)
	m := decodeResult(t, string(data))
	require.Equal(t, a.Summary.Ops+b.Summary.Ops, m.Summary.Ops)
	require.Empty(t, m.RunID, "a merge is no run of its own")
	require.Equal(t, []string{a.RunID, b.RunID}, []string{m.Merged.Of[0].RunID, m.Merged.Of[1].RunID}, "it names the runs it holds")

	refused(ioprobe(t, dir, "report", "--merge", "m.json", "b.json"), "m.json and b.json both hold the run of host "+b.Host.Hostname, "run id "+b.RunID)
	refused(ioprobe(t, dir, "report", "--merge", "a.json", "m.json"), "a.json and m.json both hold", "run id "+a.RunID)

	// A third run merges with the merged file: each run once.
	runTo(t, dir, tgt, "c.json")
	o = ioprobe(t, dir, "report", "--merge", "m.json", "c.json", "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)
	require.Len(t, decodeResult(t, o.stdout).Merged.Of, 3)
}

// TestReportMergeCountsASharedDiskOnce: two runs at the same instant on one
// machine, each on its own file of one filesystem, measure the same disk:
// the kernel counted every I/O there once for both, and each run's
// result holds all of them. Merged, the disk's counts are taken once and
// the report says it was shared.
func TestReportMergeCountsASharedDiskOnce(t *testing.T) {
	dir := t.TempDir()
	one, two := filepath.Join(dir, "one.dat"), filepath.Join(dir, "two.dat")
	for _, tgt := range []string{one, two} {
		o := ioprobe(t, dir, "run", "--target", tgt, "--size", "16MiB", "--duration", "100ms", "--ramp", "0s", "--output", "json")
		require.Equal(t, 0, o.code, o.stderr)
	}
	at := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339Nano)
	var runs []*background
	for _, tgt := range []string{one, two} {
		runs = append(runs, startBackground(t, "run", "--target", tgt, "--size", "16MiB", "--qd", "2", "--duration", "1s", "--ramp", "0s",
			"--start-at", at, "--output", "json"))
	}
	var rs []*result.Result
	for i, b := range runs {
		require.Equal(t, 0, b.exitCode(t), b.errb.String())
		r := decodeResult(t, b.out.String())
		require.NotNil(t, r.Summary.Device, "the device under %s is known", dir)
		require.NotEmpty(t, r.Host.BootID)
		rs = append(rs, r)
		require.NoError(t, os.WriteFile(filepath.Join(dir, []string{"one.json", "two.json"}[i]), b.out.Bytes(), 0o644))
	}
	require.Equal(t, rs[0].Host.BootID, rs[1].Host.BootID)
	require.Equal(t, rs[0].Summary.Device.Devices, rs[1].Summary.Device.Devices)

	o := ioprobe(t, dir, "report", "--merge", "one.json", "two.json", "--output", "json")
	require.Equal(t, 0, o.code, o.stderr)
	m := decodeResult(t, o.stdout)
	d := m.Summary.Device
	require.Equal(t, max(rs[0].Summary.Device.ReadOps, rs[1].Summary.Device.ReadOps), d.ReadOps, "the disk's reads once, not per run")
	require.Equal(t, max(rs[0].Summary.Device.ReadBytes, rs[1].Summary.Device.ReadBytes), d.ReadBytes)
	require.Equal(t, []result.SharedDevices{{Hosts: []string{rs[0].Host.Hostname}, Devices: rs[0].Summary.Device.Devices, Runs: 2}}, d.Shared)
	require.Less(t, d.ReadOps, rs[0].Summary.Device.ReadOps+rs[1].Summary.Device.ReadOps, "not their sum")

	text := ioprobe(t, dir, "report", "--merge", "one.json", "two.json")
	require.Equal(t, 0, text.code, text.stderr)
	require.Contains(t, text.stdout, strings.Join(d.Devices, ", ")+" on "+rs[0].Host.Hostname+": shared by 2 runs at once, counted once")
}
