package icf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestVersions: a file of each version reads into the right
// specifications, lines, times, workers and points.
func TestVersions(t *testing.T) {
	t.Run("1998.10.08: six columns, no 'END test setup, default workers key", func(t *testing.T) {
		c := parseFile(t, "v1998.10.08-normal.icf")
		require.Equal(t, "1998.10.08", c.Version)
		require.Equal(t, 90*time.Second, c.RunTime)
		require.Equal(t, 5*time.Second, c.RampUp)
		require.Equal(t, Normal, c.TestType)
		require.Equal(t, []Line{{Bytes: 512, Share: 22, ReadPct: 100, RandomPct: 100, Burst: 1, At: 33}, {Bytes: 4096, Share: 78, ReadPct: 100, RandomPct: 100, Burst: 1, At: 34}},
			c.Specs[1].Lines)
		require.Equal(t, "ALL", c.Specs[0].Assignment)
		require.Len(t, c.Disk, 1)
		require.Equal(t, 8, c.Disk[0].QueueDepth)
		require.EqualValues(t, 2048, c.Disk[0].MaxSectors)
		pts, err := c.Points()
		require.NoError(t, err)
		require.Equal(t, []string{"2K; 67% Read; 100% random", "Web server"}, pointNames(pts))
		require.EqualValues(t, 1<<20, pts[0].Groups[0].RegionBytes)
		require.Equal(t, []string{`D: "DATA"`}, pts[1].Groups[0].Targets)
	})
	t.Run("2003.05.10: default assignment, exponential worker cycling", func(t *testing.T) {
		c := parseFile(t, "v2003.05.10-cycle-workers.icf")
		require.Equal(t, 10*time.Second, c.RunTime)
		require.Equal(t, Cycling{Start: 1, Step: 2, Exponential: true, At: 18}, c.Workers)
		for _, w := range c.Disk {
			require.Equal(t, []string{"8K random read"}, w.Specs, "DISK default assignment")
		}
		pts, err := c.Points()
		require.NoError(t, err)
		require.Equal(t, []string{"8K random read-w1", "8K random read-w2", "8K random read-w4", "8K random read-w5"}, pointNames(pts))
		require.Equal(t, []string{"Worker 1", "Worker 2", "Worker 3", "Worker 4"}, pts[2].Groups[0].Workers)
	})
	t.Run("2004.07.30: target cycling over physical drives", func(t *testing.T) {
		c := parseFile(t, "v2004.07.30-cycle-targets.icf")
		require.Equal(t, []string{"PHYSICALDRIVE:1", "PHYSICALDRIVE:2", "PHYSICALDRIVE:3"}, c.DiskTargets())
		pts, err := c.Points()
		require.NoError(t, err)
		require.Equal(t, []string{"64K sequential read-t1", "64K sequential read-t2", "64K sequential read-t3"}, pointNames(pts))
		require.Zero(t, c.RampUp)
	})
	t.Run("2006.07.27: queue depth cycling of two specifications", func(t *testing.T) {
		c := parseFile(t, "v2006.07.27-cycle-qd.icf")
		require.Equal(t, 2*time.Minute, c.RunTime)
		pts, err := c.Points()
		require.NoError(t, err)
		require.Len(t, pts, 12)
		require.Equal(t, "4K; 100% Read; 100% random-qd1", pts[0].Name)
		require.Equal(t, "4K; 100% Read; 100% random-qd32", pts[5].Name)
		require.Equal(t, "4K; 0% Read; 100% random-qd1", pts[6].Name)
		require.Equal(t, 32, pts[11].Groups[0].QueueDepth)
		require.EqualValues(t, 4096, c.Specs[0].Lines[0].Align)
		require.EqualValues(t, 1<<30, pts[0].Groups[0].RegionBytes)
	})
	t.Run("1.1.0: CRLF, mixed case, eight lines, seed, data pattern, idle", func(t *testing.T) {
		c := parseFile(t, "v1.1.0-allinone-crlf.icf")
		require.Equal(t, "1.1.0", c.Version)
		require.Equal(t, "all in one, two workers", c.Description)
		require.Len(t, c.Specs[0].Lines, 8)
		require.Equal(t, Line{Bytes: 65536, Share: 11, ReadPct: 0, RandomPct: 100, Burst: 1, At: 45}, c.Specs[0].Lines[7])
		require.Equal(t, Line{Bytes: 8192, Share: 100, DelayMs: 10, Burst: 4, Align: 4096, At: 49}, c.Specs[1].Lines[0])
		require.EqualValues(t, 12345, c.Disk[0].Seed)
		require.Zero(t, c.Disk[1].Seed, "fixed seed DISABLED")
		require.Equal(t, 2, c.Disk[0].DataPattern)
		require.Equal(t, []string{"Log writer", ""}, c.Disk[1].Specs)
		pts, err := c.Points()
		require.NoError(t, err)
		require.Equal(t, []string{"All in one + Log writer", "Log writer"}, pointNames(pts))
		require.Len(t, pts[0].Groups, 2)
		require.Equal(t, 32, pts[0].Groups[0].QueueDepth)
		require.Equal(t, []string{"Worker 1"}, pts[1].Groups[0].Workers)
	})
}

// TestOldSetupEndsAtAnUnknownKey: before 1999.02.17 Iometer's test setup
// had no END line, and an unknown key ended it; the sections after it are
// read as usual. A later specification of the same name (any case)
// replaces the earlier one, as in Iometer.
func TestOldSetupEndsAtAnUnknownKey(t *testing.T) {
	text := strings.Replace(setup("NORMAL", "1 1 LINEAR", "1 1 LINEAR", "1 1 1 LINEAR"), "Version 2006.07.27", "Version 1998.10.08", 1)
	text = strings.Replace(text, "'END test setup\n", "'Something Newer\n\tx\n", 1)
	text += specs("R=4096,100,100,100,0,1,0,0") + managers(worker("W1", 4, []string{"R"}, "C:")) + specs("r=8192,100,0,0,0,1,0,0")
	c, err := Parse("t.icf", []byte(text), Options{})
	require.NoError(t, err)
	require.Equal(t, 10*time.Second, c.RunTime)
	pts, err := c.Points()
	require.NoError(t, err)
	require.Equal(t, "r", pts[0].Groups[0].Spec.Name)
	require.EqualValues(t, 8192, pts[0].Groups[0].Spec.Lines[0].Bytes)
}

// TestSpecsOnly: a file saved with its access specifications only (as
// Iometer lets one save a library of them) takes its run time from
// Options and runs each specification in turn on one worker.
func TestSpecsOnly(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "v2008.06.18-specs-only.icf"))
	require.NoError(t, err)
	_, err = Parse("s.icf", data, Options{})
	require.EqualError(t, err, "s.icf:1: [TEST SETUP] the file has no 'TEST SETUP (it was saved without it): give the run time (--duration, and --ramp)")
	c, err := Parse("s.icf", data, Options{RunTime: 5 * time.Second, RampUp: time.Second, QueueDepth: 8})
	require.NoError(t, err)
	require.False(t, c.HasTestSetup)
	require.False(t, c.HasManagers)
	require.Equal(t, 5*time.Second, c.RunTime)
	require.Equal(t, time.Second, c.RampUp)
	require.Empty(t, c.DiskTargets())
	_, err = c.Retarget([]string{"/x"})
	require.NoError(t, err)
	pts, err := c.Points()
	require.NoError(t, err)
	require.Equal(t, []string{"Default", "File server (mixed sizes)", "Streaming read"}, pointNames(pts))
	require.Equal(t, 8, pts[1].Groups[0].QueueDepth)
	require.Len(t, pts[1].Groups[0].Spec.Lines, 5)
	require.Equal(t, []string{"/x"}, pts[2].Groups[0].Targets)
}

// TestRefusals: what has no meaning for ioprobe, or is not an ICF, is an
// *Error naming the line, section and key.
func TestRefusals(t *testing.T) {
	base := func(spec, work string) string {
		return setup("NORMAL", "1 1 LINEAR", "1 1 LINEAR", "1 1 1 LINEAR") + spec + managers(work)
	}
	one := specs("R=4096,100,100,100,0,1,0,0")
	good := worker("W1", 4, []string{"R"}, "C:")
	for _, c := range []struct{ name, text, want string }{
		{"not an ICF", "[global]\nrw=read\n", `t.icf:1: not an Iometer configuration file: the first line must be "Version …"`},
		{"too old", "Version 1998.01.05\n", "t.icf:1: version 1998.01.05 is older than 1998.05.21: its unnamed, global access specifications are not read (save the file again with a newer Iometer)"},
		{"reply", base(specs("R=4096,100,100,100,0,1,0,512"), good),
			`t.icf:32: [ACCESS SPECIFICATIONS] access specification "R": line "4096,100,100,100,0,1,0,512": reply 512: Iometer's reply size is a network worker's answer to each I/O and has no meaning for storage (set it to 0, "No Reply")`},
		{"shares", base(specs("R=4096,60,100,100,0,1,0,0;8192,30,0,0,0,1,0,0"), good),
			`t.icf:30: [ACCESS SPECIFICATIONS] access specification "R": its lines' % of size add up to 90, not 100`},
		{"size", base(specs("R=1000,100,100,100,0,1,0,0"), good),
			`t.icf:32: [ACCESS SPECIFICATIONS] access specification "R": line "1000,100,100,100,0,1,0,0": size 1000: ioprobe's direct I/O needs whole 512-byte sectors`},
		{"percent", base(specs("R=4096,100,101,100,0,1,0,0"), good),
			`t.icf:32: [ACCESS SPECIFICATIONS] access specification "R": line "4096,100,101,100,0,1,0,0": % reads 101 is over 100`},
		{"network worker", base(one, strings.Replace(good, "\tDISK\n'Default", "\tNETWORK,TCP\n'Default", 1)),
			`t.icf:42: [MANAGER LIST] 'Worker type: worker "W1" is a network worker (NETWORK,TCP): ioprobe measures storage only`},
		{"network target", base(one, strings.Replace(good, "'Target type\n\tDISK", "'Target type\n\tNETWORK,TCP", 1)),
			`t.icf:56: [MANAGER LIST] 'Target type: worker "W1": target "C:" is NETWORK,TCP, not a disk: ioprobe measures storage only`},
		{"connection rate", base(one, strings.Replace(good, "4,DISABLED,1", "4,ENABLED,1", 1)),
			`t.icf:45: [MANAGER LIST] 'Number of outstanding IOs,test connection rate,transactions per connection: test connection rate ENABLED: Iometer then opens and closes the target around every few transactions, which ioprobe does not do`},
		{"transactions", base(one, strings.Replace(good, "4,DISABLED,1", "4,DISABLED,3", 1)),
			`t.icf:45: [MANAGER LIST] 'Number of outstanding IOs,test connection rate,transactions per connection: transactions per connection 3: only Iometer's default, 1, has a meaning here (ioprobe does not open and close targets while measuring)`},
		{"starting sector", base(one, strings.Replace(good, "\t0,0\n", "\t0,63\n", 1)),
			`t.icf:47: [MANAGER LIST] 'Disk maximum size,starting sector: starting sector 63: ioprobe's access region starts at the target's first byte (use 0, or a partition that starts there)`},
		{"unknown spec", base(one, strings.Replace(good, "\tR\n", "\tOLTP\n", 1)),
			`t.icf:50: [MANAGER LIST] 'Assigned access specs: worker "W1": access specification "OLTP" is not in 'ACCESS SPECIFICATIONS`},
		{"second manager", base(one, good+"'End manager\n'Manager ID, manager name\n\t2,OTHER\n"),
			`t.icf:61: [MANAGER LIST] 'Manager ID, manager name: a second manager: Iometer's managers are hosts (a Dynamo each, with its own disks), and ioprobe runs on one; save one file per host, run each there, and merge the results (ioprobe report --merge), or use ioprobe fleet`},
		{"run time 0", strings.Replace(base(one, good), "0          0          10", "0 0 0", 1),
			`t.icf:7: [TEST SETUP] 'Run Time: 0 hours, 0 minutes, 0 seconds: Iometer runs until stopped, ioprobe needs a run time`},
		{"unknown setup key", strings.Replace(base(one, good), "'Test Type", "'Test Flavour", 1),
			`t.icf:25: [TEST SETUP] 'Test Flavour: not a test setup key Iometer writes`},
		{"missing END test setup", strings.Replace(base(one, good), "'END test setup\n", "", 1),
			`t.icf:27: [TEST SETUP] 'END test setup is missing before this section`},
		{"bad test type", strings.Replace(base(one, good), "\tNORMAL", "\tCYCLE_EVERYTHING", 1),
			`t.icf:26: [TEST SETUP] 'Test Type: "CYCLE_EVERYTHING": want one of NORMAL, CYCLE_TARGETS, CYCLE_WORKERS, INCREMENT_TARGETS_PARALLEL, INCREMENT_TARGETS_SERIAL, CYCLE_WORKERS_AND_TARGETS, CYCLE_OUTSTANDING_IOS, CYCLE_OUTSTANDING_IOS_AND_TARGETS`},
		{"stray line", base(one, good) + "hello\n", `t.icf:63: a line outside every section (its text is not shown; want 'TEST SETUP, 'RESULTS DISPLAY, 'ACCESS SPECIFICATIONS or 'MANAGER LIST)`},
		{"no worker", base(one, ""), "t.icf:42: [MANAGER LIST] the file has no disk worker ('MANAGER LIST with a 'Worker of type DISK): nothing to run"},
		{"queue depth end", strings.Replace(setup("CYCLE_OUTSTANDING_IOS", "1 1 LINEAR", "1 1 LINEAR", "1 4096 2 EXPONENTIAL")+one+managers(good), "", "", 1),
			`t.icf:24: [TEST SETUP] 'Queue Depth Cycling: end 4096: ioprobe runs at most 1024 outstanding I/Os per worker per target`},
		{"worker queue depth", base(one, strings.Replace(good, "4,DISABLED,1", "2000,DISABLED,1", 1)),
			`t.icf:40: [MANAGER LIST] worker "W1": 2000 outstanding I/Os: ioprobe runs at most 1024 per worker per target`},
		{"unknown column", base(one, strings.Replace(good, "'Disk maximum size,starting sector\n\t0,0", "'Disk maximum size,colour\n\t0,blue", 1)),
			`t.icf:47: [MANAGER LIST] 'Disk maximum size,colour: column "colour" is not one ioprobe knows`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("t.icf", []byte(c.text), Options{})
			var e *Error
			require.ErrorAs(t, err, &e)
			require.EqualError(t, err, c.want)
		})
	}
}

// TestNoRunnablePoint: workers without targets (and no --target to give
// them) run nothing, which is an error rather than an empty suite.
func TestNoRunnablePoint(t *testing.T) {
	c, err := Parse("t.icf", []byte(setup("NORMAL", "1 1 LINEAR", "1 1 LINEAR", "1 1 1 LINEAR")+specs("R=4096,100,100,100,0,1,0,0")+
		managers(worker("W1", 4, []string{"Idle"}, "C:"))), Options{})
	require.NoError(t, err)
	_, err = c.Points()
	require.EqualError(t, err, "t.icf: [MANAGER LIST] no worker has both an access specification and a target: nothing to run")
}

func TestVersionNumber(t *testing.T) {
	for in, want := range map[string]uint64{"1998.10.08": 19981008, "2006.07.27 ": 20060727, "2003.12.16-post": 20031216,
		"1.1.0": 10000100000, "3.26.97": 19980105} {
		got, err := versionNumber(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	_, err := versionNumber("one")
	require.Error(t, err)
}
