package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

const icfTestdata = "../../pkg/icf/testdata/"

// TestRunICFDryRun: the file's runs in Iometer's order with their
// specifications' lines and targets, the target replacement said on
// stderr, nothing created.
func TestRunICFDryRun(t *testing.T) {
	tgt := filepath.Join(t.TempDir(), "t.dat")
	code, out, errs := dryRunCmd(t, "run", "--icf", icfTestdata+"v2006.07.27-cycle-qd.icf", "--target", tgt, "--dry-run")
	require.Equal(t, ExitOK, code, errs)
	require.Equal(t, "ioprobe: "+icfTestdata+`v2006.07.27-cycle-qd.icf: target "1: \"XENSRC PVDISK 2.0\"" is `+tgt+"\n", errs)
	require.NoFileExists(t, tgt)
	require.True(t, strings.HasPrefix(out, "Iometer file "+icfTestdata+"v2006.07.27-cycle-qd.icf: 12 point(s), nothing run (--dry-run)\n"), out)
	var order []string
	for _, l := range strings.Split(out, "\n") {
		if name, _, ok := strings.Cut(l, " on 1 target at once"); ok {
			order = append(order, name[strings.Index(name, " ")+1:])
		}
	}
	require.Equal(t, []string{
		"4K; 100% Read; 100% random-qd1", "4K; 100% Read; 100% random-qd2", "4K; 100% Read; 100% random-qd4",
		"4K; 100% Read; 100% random-qd8", "4K; 100% Read; 100% random-qd16", "4K; 100% Read; 100% random-qd32",
		"4K; 0% Read; 100% random-qd1", "4K; 0% Read; 100% random-qd2", "4K; 0% Read; 100% random-qd4",
		"4K; 0% Read; 100% random-qd8", "4K; 0% Read; 100% random-qd16", "4K; 0% Read; 100% random-qd32",
	}, order)
	require.Contains(t, out, "   4K; 0% Read; 100% random: 1 line(s), qd 32, workers 1, ramp 10s, run 2m0s, engine auto, region 1GiB\n"+
		"     line 1: 4KiB,share=100,read=0,random=100,align=4KiB,burst=1\n     on "+tgt+"\n")
	require.True(t, strings.HasSuffix(out, "plan checked: every point is accepted by its targets\n"), out)
}

// TestRunICFSpecsOnly: a file of access specifications only runs each on
// one worker, the run time and outstanding I/Os from the flags.
func TestRunICFSpecsOnly(t *testing.T) {
	tgt := filepath.Join(t.TempDir(), "t.dat")
	code, out, errs := dryRunCmd(t, "run", "--icf", icfTestdata+"v2008.06.18-specs-only.icf", "--target", tgt, "--duration", "3s", "--qd", "8", "--dry-run")
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, errs, "the file has no 'MANAGER LIST: one worker with 8 outstanding I/Os runs each access specification in turn\n")
	require.Contains(t, out, ": 3 point(s), nothing run (--dry-run)\n")
	require.Contains(t, out, "   File server (mixed sizes): 5 line(s), qd 8, workers 1, ramp 0s, run 3s, engine auto")
	require.NoFileExists(t, tgt)
}

// TestRunICFRefusals: a file that has no meaning here, a missing or
// miscounted --target, and a flag the file sets are exit 2, one line,
// nothing touched.
func TestRunICFRefusals(t *testing.T) {
	dir := t.TempDir()
	tgt := filepath.Join(dir, "t.dat")
	bad := filepath.Join(dir, "reply.icf")
	data, err := os.ReadFile(icfTestdata + "v2004.07.30-cycle-targets.icf")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bad, []byte(strings.Replace(string(data), "65536,100,100,0,0,1,0,0", "65536,100,100,0,0,1,0,1024", 1)), 0o600))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--icf", bad, "--target", tgt, "--target", tgt + "2", "--target", tgt + "3"},
			"ioprobe: " + bad + `:38: [ACCESS SPECIFICATIONS] access specification "64K sequential read": line "65536,100,100,0,0,1,0,1024": reply 1024: Iometer's reply size is a network worker's answer to each I/O and has no meaning for storage (set it to 0, "No Reply")` + "\n"},
		{[]string{"--icf", icfTestdata + "v2004.07.30-cycle-targets.icf"},
			"ioprobe: --icf needs --target: the file's disk targets (Windows drive letters, physical drives) mean nothing here; give one --target for each, in the order the file uses them (--dry-run lists them)\n"},
		{[]string{"--icf", icfTestdata + "v2004.07.30-cycle-targets.icf", "--target", tgt},
			"ioprobe: " + icfTestdata + `v2004.07.30-cycle-targets.icf: the file's workers use 3 disk target(s) ("PHYSICALDRIVE:1", "PHYSICALDRIVE:2", "PHYSICALDRIVE:3"): give --target 3 time(s), in that order, to replace them` + "\n"},
		{[]string{"--icf", icfTestdata + "v2004.07.30-cycle-targets.icf", "--target", tgt, "--target", tgt + "2", "--target", tgt + "3", "--qd", "4"},
			"ioprobe: --qd cannot be used with --icf: the configuration file's 'MANAGER LIST sets it\n"},
		{[]string{"--icf", icfTestdata + "v2004.07.30-cycle-targets.icf", "--target", tgt, "--target", tgt + "2", "--target", tgt + "3", "--duration", "4s"},
			"ioprobe: --duration cannot be used with --icf: the configuration file's 'TEST SETUP sets it\n"},
		{[]string{"--icf", icfTestdata + "v2004.07.30-cycle-targets.icf", "--target", tgt, "--bs", "8k"},
			"ioprobe: --bs cannot be used with --icf: the configuration file sets it\n"},
		{[]string{"--icf", icfTestdata + "v2004.07.30-cycle-targets.icf", "--target", tgt, "--line", "4k,share=100"},
			"ioprobe: --line cannot be used with --icf: the configuration file sets it\n"},
		{[]string{"--icf", icfTestdata + "v2008.06.18-specs-only.icf", "--target", tgt},
			"ioprobe: " + icfTestdata + "v2008.06.18-specs-only.icf:1: [TEST SETUP] the file has no 'TEST SETUP (it was saved without it): give the run time (--duration, and --ramp)\n"},
		{[]string{"--icf", icfTestdata + "v2004.07.30-cycle-targets.icf", "--target", tgt, "--fio-job", bad},
			"ioprobe: --icf runs an Iometer file on its own: not with --fio-job, --section or --start-at\n"},
	} {
		code, out, errs := dryRunCmd(t, append([]string{"run"}, c.args...)...)
		require.Equal(t, ExitBadInput, code, c.args)
		require.Empty(t, out)
		require.Equal(t, c.want, errs)
	}
	require.NoFileExists(t, tgt)
}

// TestRunICF runs a two-line specification for a second on a file under
// /tmp: the suite document carries the point, and every read is the
// first line's 4 KiB and every write the second line's 64 KiB.
func TestRunICF(t *testing.T) {
	if testing.Short() {
		t.Skip("runs I/O") //hygiene:skip -short leaves out the tests that run I/O
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "two.icf")
	tgt := filepath.Join(dir, "t.dat")
	require.NoError(t, os.WriteFile(file, []byte(twoLineICF), 0o600))
	code, out, errs := dryRunCmd(t, "run", "--icf", file, "--target", tgt, "--engine", "sync", "--output", "json")
	require.Equal(t, ExitOK, code, errs)
	var s result.Suite
	require.NoError(t, json.Unmarshal([]byte(out), &s))
	require.Equal(t, result.SuiteSchema, s.Schema)
	require.Equal(t, "icf", s.Suite)
	require.Equal(t, "Iometer two.icf: two lines", s.Title)
	require.Len(t, s.Results, 1)
	r := s.Results[0]
	require.Equal(t, "Two lines", r.Point.Name)
	require.Equal(t, "Two lines", r.Point.Pattern, "a multi-line specification's column is its name")
	require.Equal(t, 4, r.Workload.QueueDepth)
	require.EqualValues(t, 8<<20, r.Workload.RegionBytes)
	require.Equal(t, []string{`target "C:" is ` + tgt}, inputNotes(r))
	require.NotZero(t, r.Summary.ReadOps)
	require.NotZero(t, r.Summary.WriteOps)
	require.Equal(t, r.Summary.ReadOps*4096+r.Summary.WriteOps*65536, r.Summary.Bytes)
	// The suite document carries the lines as they ran, and what each did.
	require.Equal(t, []result.Line{
		{Bytes: 4096, Share: 70, ReadPct: 100, RandomPct: 100, AlignBytes: 512, Burst: 1},
		{Bytes: 65536, Share: 30, ReadPct: 0, RandomPct: 0, AlignBytes: 512, Burst: 1},
	}, r.Workload.Lines)
	require.Len(t, r.Summary.Lines, 2)
	require.Equal(t, r.Summary.ReadOps, r.Summary.Lines[0].ReadOps)
	require.Zero(t, r.Summary.Lines[0].WriteOps)
	require.Equal(t, r.Summary.WriteOps, r.Summary.Lines[1].WriteOps)
	require.Zero(t, r.Summary.Lines[1].ReadOps)
}

const twoLineICF = `Version 1.1.0
'TEST SETUP ====================================================================
'Test Description
	two lines
'Run Time
'	hours      minutes    seconds
	0          0          1
'Ramp Up Time (s)
	0
'Test Type
	NORMAL
'END test setup
'ACCESS SPECIFICATIONS =========================================================
'Access specification name,default assignment
	Two lines,NONE
'size,% of size,% reads,% random,delay,burst,align,reply
	4096,70,100,100,0,1,0,0
	65536,30,0,0,0,1,0,0
'END access specifications
'MANAGER LIST ==================================================================
'Manager ID, manager name
	1,PROBE
'Manager network address
	
'Worker
	Worker 1
'Worker type
	DISK
'Default target settings for worker
'Number of outstanding IOs,test connection rate,transactions per connection
	4,DISABLED,1
'Disk maximum size,starting sector
	16384,0
'End default target settings for worker
'Assigned access specs
	Two lines
'End assigned access specs
'Target assignments
'Target
	C:
'Target type
	DISK
'End target
'End target assignments
'End worker
'End manager
'END manager list
`
