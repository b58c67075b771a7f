package cpuacct

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// procTree writes a /proc of tasks: pid → [flags, utime, stime, io bytes
// or -1 for no io file].
func procTree(t *testing.T, tasks map[int][4]int64) Reader {
	t.Helper()
	root := t.TempDir()
	for pid, v := range tasks {
		dir := filepath.Join(root, strconv.Itoa(pid))
		require.NoError(t, os.MkdirAll(dir, 0o755))
		// A command name with a space and a parenthesis of its own.
		stat := fmt.Sprintf("%d (a (b) c) S 1 1 1 0 -1 %d 10 0 0 0 %d %d 0 0 20 0 1 0 100 0 0\n", pid, v[0], v[1], v[2])
		require.NoError(t, os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644))
		if v[3] >= 0 {
			io := fmt.Sprintf("rchar: 999999\nwchar: 999999\nsyscr: 1\nsyscw: 1\nread_bytes: %d\nwrite_bytes: %d\ncancelled_write_bytes: 0\n", v[3]/2, v[3]-v[3]/2)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "io"), []byte(io), 0o644))
		}
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sys"), 0o755)) // not a pid
	return Reader{ProcRoot: root}
}

func TestTasksSplitKernelThreadsFromOthers(t *testing.T) {
	self := os.Getpid()
	before := procTree(t, map[int][4]int64{
		2:    {pfKThread, 5, 10, -1},         // kthreadd
		50:   {pfKThread | 0x40, 100, 7, -1}, // a loop device's worker
		1000: {0x400000, 1, 1, 4096},
		1001: {0, 1, 1, 100},
		self: {0, 50, 50, 1 << 30}, // ioprobe: never "others"
	})
	b, err := before.Tasks()
	require.NoError(t, err)
	require.True(t, b.Complete)
	require.Equal(t, map[int]uint64{2: 15, 50: 107}, b.KThreadTicks)
	require.Equal(t, map[int]uint64{1000: 4096, 1001: 100}, b.IOBytes, "not this process")

	after := procTree(t, map[int][4]int64{
		2:    {pfKThread, 5, 10, -1},
		50:   {pfKThread, 160, 20, -1}, // +73
		60:   {pfKThread, 3, 0, -1},    // new: whole
		1000: {0, 1, 1, 4096 + 1<<20},  // +1 MiB
		1002: {0, 1, 1, 512},           // new: whole; 1001 ended
		self: {0, 90, 90, 2 << 30},
	})
	a, err := after.Tasks()
	require.NoError(t, err)
	d := a.Sub(b)
	require.Equal(t, TaskDelta{KThreadTicks: 73 + 3, OthersIOBytes: 1<<20 + 512, Complete: true}, d)

	// A pid reused with a smaller count counts from 0, not 2^64 less a
	// little.
	b.IOBytes[1002] = 1 << 40
	require.EqualValues(t, 1<<20+512, a.Sub(b).OthersIOBytes)
}

func TestTasksWithoutAnotherUsersIOAreIncomplete(t *testing.T) {
	r := procTree(t, map[int][4]int64{1000: {0, 1, 1, 100}})
	// A directory where the io file is: reading it fails (EISDIR), as
	// it would for another user's process without the right to read it.
	io := filepath.Join(r.ProcRoot, "1000", "io")
	require.NoError(t, os.Remove(io))
	require.NoError(t, os.Mkdir(io, 0o755))
	tk, err := r.Tasks()
	require.NoError(t, err)
	require.False(t, tk.Complete, "an unreadable io file: others' I/O is not known")
}

func TestParseTaskStatRefusesGarbage(t *testing.T) {
	for _, s := range []string{"", "1 (x) S 1 2 3", "1 x S 1 1 1 0 -1 0 0 0 0 0 5 5 0 0", "1 (x) S 1 1 1 0 -1 z 0 0 0 0 5 5 0 0"} {
		_, err := parseTaskStat(strings.NewReader(s))
		require.Error(t, err, s)
	}
	_, err := parseTaskIO(strings.NewReader("rchar: 1\n"))
	require.Error(t, err)
}

// TestOthersFractionLeavesOwnAndKernelThreadsOut: on 2 CPUs over 1 s (200
// ticks), tasks ran 150 ticks: 60 of them this process's (0.6 s), 30 the
// kernel threads'; others used the remaining 60, 30% of the host.
func TestOthersFractionLeavesOwnAndKernelThreadsOut(t *testing.T) {
	u := Usage{UserHZ: 100, ProcessUser: 400 * time.Millisecond, ProcessSystem: 200 * time.Millisecond,
		Host: Stat{All: CPUTimes{User: 100, Nice: 10, System: 40, Idle: 40, IOWait: 5, IRQ: 3, SoftIRQ: 2}}}
	require.InDelta(t, 0.3, u.OthersFraction(30), 1e-12)
	require.Zero(t, u.OthersFraction(500), "never below 0")
	require.Zero(t, Usage{}.OthersFraction(0), "an unmeasured host: 0")
}
