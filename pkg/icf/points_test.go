package icf

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/workload"
)

// TestCycling: each test type unrolls into Iometer's runs, in Iometer's
// order, with its start/step/end rules (exponential is start × step^n;
// worker and target cycling end once a step adds nothing, the last step
// taking whatever is left; queue-depth cycling ends past its end).
func TestCycling(t *testing.T) {
	one := specs("R=4096,100,100,100,0,1,0,0")
	w := func(name string, targets ...string) string { return worker(name, 4, []string{"R"}, targets...) }
	five := managers(w("W1", "A"), w("W2", "A"), w("W3", "A"), w("W4", "A"), w("W5", "A"))
	for _, c := range []struct {
		name, text string
		want       []string
	}{
		{"workers exponential 1×2: 1, 2, 4 and the fifth",
			setup("CYCLE_WORKERS", "1 2 EXPONENTIAL", "1 1 LINEAR", "1 32 2 EXPONENTIAL") + one + five,
			[]string{"R-w1", "R-w2", "R-w4", "R-w5"}},
		{"workers linear +2: 1, 3, 5",
			setup("CYCLE_WORKERS", "1 2 LINEAR", "1 1 LINEAR", "1 32 2 EXPONENTIAL") + one + five,
			[]string{"R-w1", "R-w3", "R-w5"}},
		{"workers exponential with step 1 is linear",
			setup("CYCLE_WORKERS", "2 1 EXPONENTIAL", "1 1 LINEAR", "1 32 2 EXPONENTIAL") + one + five,
			[]string{"R-w2", "R-w3", "R-w4", "R-w5"}},
		{"targets linear 1+1 on one worker with three",
			setup("CYCLE_TARGETS", "1 1 LINEAR", "1 1 LINEAR", "1 32 2 EXPONENTIAL") + one + managers(w("W1", "A", "B", "C")),
			[]string{"R-t1", "R-t2", "R-t3"}},
		{"targets exponential 1×2 on five: 1, 2, 4, 5",
			setup("CYCLE_TARGETS", "1 1 LINEAR", "1 2 EXPONENTIAL", "1 32 2 EXPONENTIAL") + one + managers(w("W1", "A", "B", "C", "D", "E")),
			[]string{"R-t1", "R-t2", "R-t4", "R-t5"}},
		{"targets per worker: two workers, each its first n",
			setup("CYCLE_TARGETS", "1 1 LINEAR", "1 1 LINEAR", "1 32 2 EXPONENTIAL") + one + managers(w("W1", "A", "B"), w("W2", "C", "D")),
			[]string{"R-t2", "R-t4"}},
		{"queue depth exponential 1..32 ×2",
			setup("CYCLE_OUTSTANDING_IOS", "1 1 LINEAR", "1 1 LINEAR", "1 32 2 EXPONENTIAL") + one + managers(w("W1", "A")),
			[]string{"R-qd1", "R-qd2", "R-qd4", "R-qd8", "R-qd16", "R-qd32"}},
		{"queue depth exponential 3..50 ×2 is 3 × 2^n",
			setup("CYCLE_OUTSTANDING_IOS", "1 1 LINEAR", "1 1 LINEAR", "3 50 2 EXPONENTIAL") + one + managers(w("W1", "A")),
			[]string{"R-qd3", "R-qd6", "R-qd12", "R-qd24", "R-qd48"}},
		{"queue depth linear 1..10 +4: the end is inclusive, not reached",
			setup("CYCLE_OUTSTANDING_IOS", "1 1 LINEAR", "1 1 LINEAR", "1 10 4 LINEAR") + one + managers(w("W1", "A")),
			[]string{"R-qd1", "R-qd5", "R-qd9"}},
		{"queue depth linear 2..8 +3: the end reached",
			setup("CYCLE_OUTSTANDING_IOS", "1 1 LINEAR", "1 1 LINEAR", "2 8 3 LINEAR") + one + managers(w("W1", "A")),
			[]string{"R-qd2", "R-qd5", "R-qd8"}},
		{"increment targets parallel: down the workers",
			setup("INCREMENT_TARGETS_PARALLEL", "1 1 LINEAR", "1 1 LINEAR", "1 32 2 EXPONENTIAL") + one + managers(w("W1", "A", "B"), w("W2", "C", "D")),
			[]string{"R-t1", "R-t2", "R-t3", "R-t4"}},
		{"increment targets serial: one manager, the same",
			setup("INCREMENT_TARGETS_SERIAL", "1 1 LINEAR", "1 2 EXPONENTIAL", "1 32 2 EXPONENTIAL") + one + managers(w("W1", "A", "B"), w("W2", "C", "D")),
			[]string{"R-t1", "R-t2", "R-t4"}},
		{"workers and targets: targets first, then another worker",
			setup("CYCLE_WORKERS_AND_TARGETS", "1 1 LINEAR", "1 1 LINEAR", "1 32 2 EXPONENTIAL") + one + managers(w("W1", "A", "B"), w("W2", "C", "D")),
			[]string{"R-w1-t1", "R-w1-t2", "R-w2-t2", "R-w2-t4"}},
		{"queue depth and targets: every depth at each target count",
			setup("CYCLE_OUTSTANDING_IOS_AND_TARGETS", "1 1 LINEAR", "1 1 LINEAR", "1 4 2 EXPONENTIAL") + one + managers(w("W1", "A", "B")),
			[]string{"R-t1-qd1", "R-t1-qd2", "R-t1-qd4", "R-t2-qd1", "R-t2-qd2", "R-t2-qd4"}},
		{"a numeric test type and step type (older files)",
			setup("6", "1 1 0", "1 1 0", "1 4 2 1") + one + managers(w("W1", "A")),
			[]string{"R-qd1", "R-qd2", "R-qd4"}},
		{"zero start and step are Iometer's 1",
			setup("CYCLE_OUTSTANDING_IOS", "1 1 LINEAR", "1 1 LINEAR", "0 3 0 LINEAR") + one + managers(w("W1", "A")),
			[]string{"R-qd1", "R-qd2", "R-qd3"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse("t.icf", []byte(c.text), Options{})
			require.NoError(t, err)
			pts, err := cfg.Points()
			require.NoError(t, err)
			require.Equal(t, c.want, pointNames(pts))
		})
	}
}

// TestCyclingGroups: what a point runs — the active workers' targets and
// the cycled queue depth — not only its name.
func TestCyclingGroups(t *testing.T) {
	text := setup("CYCLE_OUTSTANDING_IOS_AND_TARGETS", "1 1 LINEAR", "1 1 LINEAR", "1 2 2 EXPONENTIAL") +
		specs("R=4096,100,100,100,0,1,0,0") + managers(worker("W1", 7, []string{"R"}, "A", "B"), worker("W2", 7, []string{"R"}, "C"))
	cfg, err := Parse("t.icf", []byte(text), Options{})
	require.NoError(t, err)
	pts, err := cfg.Points()
	require.NoError(t, err)
	require.Len(t, pts, 4)
	// One target each, at depth 1: W1 on A and W2 on C are two groups.
	require.Equal(t, []Group{
		{Spec: &cfg.Specs[0], Workers: []string{"W1"}, QueueDepth: 1, Targets: []string{"A"}, DataPattern: -1},
		{Spec: &cfg.Specs[0], Workers: []string{"W2"}, QueueDepth: 1, Targets: []string{"C"}, DataPattern: -1},
	}, pts[0].Groups)
	require.Equal(t, 2, pts[1].QueueDepth)
	require.Equal(t, []string{"A", "B"}, pts[3].Groups[0].Targets)
	require.Equal(t, 3, pts[3].Targets)
	require.Equal(t, 2, pts[3].Workers)
}

// TestWorkersShareAGroup: workers with the same specification, depth and
// targets are one group of n workers.
func TestWorkersShareAGroup(t *testing.T) {
	text := setup("NORMAL", "1 1 LINEAR", "1 1 LINEAR", "1 1 1 LINEAR") + specs("R=4096,100,100,100,0,1,0,0", "W=8192,100,0,0,0,1,0,0") +
		managers(worker("W1", 4, []string{"R", "W"}, "A"), worker("W2", 4, []string{"R", "Idle"}, "A"), worker("W3", 2, []string{"R"}, "A"))
	cfg, err := Parse("t.icf", []byte(text), Options{})
	require.NoError(t, err)
	pts, err := cfg.Points()
	require.NoError(t, err)
	require.Equal(t, []string{"R", "W"}, pointNames(pts))
	require.Len(t, pts[0].Groups, 2)
	require.Equal(t, []string{"W1", "W2"}, pts[0].Groups[0].Workers)
	require.Equal(t, []string{"W3"}, pts[0].Groups[1].Workers)
	require.Equal(t, 1, pts[1].Workers, "W2 is idle and W3 has no second specification")
}

func TestRetarget(t *testing.T) {
	text := setup("NORMAL", "1 1 LINEAR", "1 1 LINEAR", "1 1 1 LINEAR") + specs("R=4096,100,100,100,0,1,0,0") +
		managers(worker("W1", 4, []string{"R"}, `C: "SYS"`, "D:"), worker("W2", 4, []string{"R"}, "D:"))
	cfg, err := Parse("t.icf", []byte(text), Options{})
	require.NoError(t, err)
	require.Equal(t, []string{`C: "SYS"`, "D:"}, cfg.DiskTargets())
	_, err = cfg.Retarget([]string{"/x"})
	require.EqualError(t, err, `the file's workers use 2 disk target(s) ("C: \"SYS\"", "D:"): give --target 2 time(s), in that order, to replace them`)
	msgs, err := cfg.Retarget([]string{"/x", "/y"})
	require.NoError(t, err)
	require.Equal(t, []string{`target "C: \"SYS\"" is /x`, `target "D:" is /y`}, msgs)
	require.Equal(t, []string{"/x", "/y"}, cfg.Disk[0].Targets)
	require.Equal(t, []string{"/y"}, cfg.Disk[1].Targets)

	none, err := Parse("t.icf", []byte(setup("NORMAL", "1 1 LINEAR", "1 1 LINEAR", "1 1 1 LINEAR")+specs("R=4096,100,100,100,0,1,0,0")+
		managers(worker("W1", 4, []string{"R"}))), Options{})
	require.NoError(t, err)
	msgs, err = none.Retarget([]string{"/x", "/y"})
	require.NoError(t, err)
	require.Equal(t, []string{"the file assigns no targets: every worker runs on /x, /y"}, msgs)
	pts, err := none.Points()
	require.NoError(t, err)
	require.Equal(t, []string{"/x", "/y"}, pts[0].Groups[0].Targets)
}

// TestWorkload: a point's groups in ioprobe's terms — lines with
// Iometer's align 0 as the sector, delay and burst kept, the run and
// ramp-up times, the region in bytes, the fixed seed.
func TestWorkload(t *testing.T) {
	c := parseFile(t, "v1.1.0-allinone-crlf.icf")
	pts, err := c.Points()
	require.NoError(t, err)
	got, targets, err := c.Workload(pts[0], "sync")
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, [][]string{{`C: "SYSTEM"`}, {`D: "LOGS"`}}, targets)
	all := got[0]
	require.Equal(t, "All in one", all.Name)
	require.Len(t, all.Lines, 8)
	require.Equal(t, workload.Line{Bytes: 4096, Share: 23, ReadPct: 67, RandomPct: 100, Align: 512, Burst: 1}, all.Lines[2])
	require.Equal(t, 32, all.QueueDepth)
	require.Equal(t, 1, all.Workers)
	require.Equal(t, 45*time.Second, all.Duration)
	require.Equal(t, 3*time.Second, all.Ramp)
	require.EqualValues(t, 12345, all.Seed)
	require.Equal(t, workload.EngineSync, all.Engine)
	require.Equal(t, []workload.Line{{Bytes: 8192, Share: 100, Align: 4096, DelayMs: 10, Burst: 4}}, got[1].Lines)
	require.Equal(t, []string{`worker "Worker 2": Iometer's data pattern 0 (repeating bytes) writes compressible data, ioprobe writes incompressible data: write figures differ on storage that compresses or deduplicates`}, c.Notes())

	// A region smaller than a transfer is refused naming the specification.
	small := setup("NORMAL", "1 1 LINEAR", "1 1 LINEAR", "1 1 1 LINEAR") + specs("R=65536,100,100,100,0,1,0,0") +
		managers(strings.Replace(worker("W1", 4, []string{"R"}, "C:"), "\t0,0\n", "\t8,0\n", 1))
	c, err = Parse("t.icf", []byte(small), Options{})
	require.NoError(t, err)
	pts, err = c.Points()
	require.NoError(t, err)
	_, _, err = c.Workload(pts[0], "auto")
	require.EqualError(t, err, `t.icf:30: [ACCESS SPECIFICATIONS] access specification "R" for worker "W1": --size 4KiB: must hold at least one transfer of 64KiB`)
}
