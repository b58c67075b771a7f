package target

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/testloop"
)

func TestParseFDInfo(t *testing.T) {
	w, locks, err := parseFDInfo(strings.NewReader("pos:\t0\nflags:\t0100002\nmnt_id:\t27\nino:\t5\nlock:\t1: OFDLCK ADVISORY  WRITE -1 00:05:5 0 EOF\n"))
	require.NoError(t, err)
	require.True(t, w, "O_RDWR|O_LARGEFILE is a writer")
	require.Equal(t, []string{"1: OFDLCK ADVISORY  WRITE -1 00:05:5 0 EOF"}, locks)

	w, locks, err = parseFDInfo(strings.NewReader("pos:\t0\nflags:\t0100000\n"))
	require.NoError(t, err)
	require.False(t, w, "O_RDONLY is not")
	require.Empty(t, locks)

	w, _, err = parseFDInfo(strings.NewReader("flags:\t02000001\n"))
	require.NoError(t, err)
	require.True(t, w, "O_WRONLY|O_CLOEXEC is")

	_, _, err = parseFDInfo(strings.NewReader("flags:\tzz\n"))
	require.Error(t, err)
}

func TestParseAllLocks(t *testing.T) {
	locks, err := parseAllLocks(strings.NewReader(
		"1: POSIX  ADVISORY  WRITE 812 00:05:123 0 EOF\n" +
			"2: OFDLCK ADVISORY  READ  -1 00:05:123 0 EOF\n" +
			"3: FLOCK  ADVISORY  WRITE 900 08:01:77 0 EOF\n" +
			"3: -> FLOCK  ADVISORY  WRITE 901 08:01:77 0 EOF\n" +
			"4: LEASE  ACTIVE    READ  950 fd:00:9 0 EOF\n"))
	require.NoError(t, err)
	require.Len(t, locks, 4, "every kind, and no waiter")
	require.Equal(t, procLock{pid: -1, maj: 0, min: 5, ino: 123, entry: "2: OFDLCK ADVISORY  READ  -1 00:05:123 0 EOF"}, locks[1])
	require.Equal(t, uint32(0xfd), locks[3].maj)

	require.Equal(t, "it is locked by pid 812 (a POSIX write lock)", lockText("it", "pid 812", locks[0].entry))
	require.Equal(t, "it is locked by x (an OFD read lock)", lockText("it", "x", locks[1].entry))
	require.Equal(t, "it is locked by pid 900 (exclusive)"+flockMeaning, lockText("it", "pid 900", locks[2].entry))
	require.Equal(t, "it is locked by pid 950 (a read lease)", lockText("it", "pid 950", locks[3].entry))

	_, err = parseAllLocks(strings.NewReader("1: POSIX ADVISORY WRITE 812 0005123 0 EOF\n"))
	require.Error(t, err)
}

// TestHolderHelper is not a test: started by holdDevice as a child, it
// opens the device named by IOPROBE_HOLD_DEV as IOPROBE_HOLD_HOW says,
// says "ready" and waits to be killed.
func TestHolderHelper(t *testing.T) {
	dev, how := os.Getenv("IOPROBE_HOLD_DEV"), os.Getenv("IOPROBE_HOLD_HOW")
	if dev == "" {
		t.Skip("a helper process for the holder tests") //hygiene:skip not a test unless holdDevice starts it
	}
	flags := unix.O_RDONLY
	if how == "write" || how == "posix-write" {
		flags = unix.O_RDWR
	}
	fd, err := unix.Open(dev, flags|unix.O_CLOEXEC, 0)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	lk := unix.Flock_t{Type: unix.F_RDLCK, Whence: 0, Start: 0, Len: 0}
	switch how {
	case "posix-write":
		lk.Type = unix.F_WRLCK
		err = unix.FcntlFlock(uintptr(fd), unix.F_SETLK, &lk)
	case "posix-read":
		err = unix.FcntlFlock(uintptr(fd), unix.F_SETLK, &lk)
	case "ofd":
		err = unix.FcntlFlock(uintptr(fd), unix.F_OFD_SETLK, &lk)
	}
	if err != nil {
		fmt.Println("lock:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	time.Sleep(10 * time.Minute) //hygiene:sleep holds the device until the test kills this process
	os.Exit(0)
}

// holdDevice starts a helper process that holds dev as how says ("write",
// "posix-write", "posix-read", "ofd", "read") and returns its pid; the
// process is killed when the test ends.
func holdDevice(t *testing.T, dev, how string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHolderHelper$")
	cmd.Env = append(os.Environ(), "IOPROBE_HOLD_DEV="+dev, "IOPROBE_HOLD_HOW="+how)
	return testloop.Hold(t, cmd)
}

// A blank device another process holds open for writing, or under a POSIX
// or an OFD lock, is refused naming the process; one open for reading
// only is not.
func TestHoldersRefused(t *testing.T) {
	requireRoot(t)
	for _, tc := range []struct {
		how, reason string
		id          RefusalID
	}{
		{"write", "it is open for writing by pid %d (", RefuseOpenForWriting},
		{"posix-write", "it is locked by pid %d (", RefuseLocked},
		{"posix-read", "(a POSIX read lock)", RefuseLocked},
		{"ofd", "(an OFD read lock)", RefuseLocked},
	} {
		t.Run(tc.how, func(t *testing.T) {
			backing := newBacking(t, loopSize)
			dev := attachLoop(t, backing)
			before := sha256File(t, backing)
			pid := holdDevice(t, dev, tc.how)
			reason := tc.reason
			if strings.Contains(reason, "%d") {
				reason = fmt.Sprintf(reason, pid)
			}
			for _, o := range []Options{writeAll, {Write: true, Align: 4096, MaxBlock: 65536}} {
				_, err := Open(dev, o)
				se := requireSafetyError(t, err, reason, "")
				require.Contains(t, se.IDs, tc.id)
				require.Contains(t, se.Reason, "pid "+strconv.Itoa(pid))
			}
			require.Equal(t, before, sha256File(t, backing))
		})
	}
	t.Run("read only", func(t *testing.T) {
		backing := newBacking(t, loopSize)
		dev := attachLoop(t, backing)
		holdDevice(t, dev, "read")
		tg, err := Open(dev, writeAll)
		require.NoError(t, err, "a reader is no reason")
		require.NoError(t, tg.Close())
	})
}

// A loop device whose backing file another process writes is refused.
func TestLoopBackingFileHolderRefused(t *testing.T) {
	requireRoot(t)
	backing := newBacking(t, loopSize)
	dev := attachLoop(t, backing)
	pid := holdDevice(t, backing, "write")
	_, err := Open(dev, writeAll)
	se := requireSafetyError(t, err, fmt.Sprintf("its backing file %s (%s shows all of it) is open for writing by pid %d", backing, dev[len("/dev/"):], pid), "")
	require.Contains(t, se.IDs, RefuseOpenForWriting)
}

// Past any bound of the look (processes, descriptors, mapped regions,
// time) ioprobe has not seen every process: the write is refused
// (hidden-processes), naming the bound; within them, the same look finds
// nothing to refuse a file nobody holds for.
func TestScanBoundsFailClosed(t *testing.T) {
	requireRoot(t) // every process's tables
	f := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(f, []byte("data"), 0o644))
	fd, err := unix.Open(f, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	e := defaultEnv()
	fs, _ := e.fileHolders(f, fd, false, true)
	require.Empty(t, fs, "a look within the bounds")
	for _, tc := range []struct {
		lim  scanLimits
		want string
	}{
		{scanLimits{procs: 1, fds: 1 << 20, mapLines: 1 << 23, budget: time.Minute}, "there are more than 1 processes, the most it looks at"},
		{scanLimits{procs: 1 << 16, fds: 2, mapLines: 1 << 23, budget: time.Minute}, "processes hold more than 2 descriptors, the most it looks at"},
		{scanLimits{procs: 1 << 16, fds: 1 << 20, mapLines: 2, budget: time.Minute}, "processes map more than 2 regions, the most it looks at"},
		{scanLimits{procs: 1 << 16, fds: 1 << 20, mapLines: 1 << 23, budget: 0}, "looking at every process took longer than 0s"},
	} {
		e.limits = &tc.lim
		fs, _ := e.holderFindings([]watchedObj{{who: "it", ids: []fileID{{1, 2, 3}}}}, holderRules{view: true})
		require.Len(t, fs, 1, "%v", fs)
		require.Equal(t, RefuseHiddenProcs, fs[0].id)
		require.Contains(t, fs[0].text, tc.want)
		require.Equal(t, viewBound, fs[0].key)
	}
}

// BenchmarkHolderLook measures one look at every process for the holders
// of a file (what a device write or a foreign file's write costs at open,
// once per check: Check, Open and the re-check before the first write),
// with IOPROBE_BENCH_PROCS extra processes (default 0) each holding
// IOPROBE_BENCH_FDS descriptors on regular files (default 100):
//
//	IOPROBE_BENCH_PROCS=1000 go test -run '^$' -bench HolderLook ./internal/target/
func BenchmarkHolderLook(b *testing.B) {
	procs, _ := strconv.Atoi(os.Getenv("IOPROBE_BENCH_PROCS"))
	fds, err := strconv.Atoi(os.Getenv("IOPROBE_BENCH_FDS"))
	if err != nil {
		fds = 100
	}
	dir := b.TempDir()
	held := filepath.Join(dir, "held")
	require.NoError(b, os.WriteFile(held, []byte("x"), 0o644))
	script := fmt.Sprintf(`i=3; while [ $i -lt %d ]; do eval "exec $i<\"$1\""; i=$((i+1)); done; echo ready; exec sleep 600`, fds+3)
	for i := 0; i < procs; i++ {
		cmd := exec.Command("/bin/bash", "-c", script, "bash", held)
		testloop.Hold(b, cmd)
	}
	f := filepath.Join(dir, "target")
	require.NoError(b, os.WriteFile(f, []byte("data"), 0o644))
	fd, err := unix.Open(f, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	require.NoError(b, err)
	defer unix.Close(fd)
	e := defaultEnv()
	if fs, _ := e.fileHolders(f, fd, false, true); len(fs) > 0 {
		b.Fatal(fs)
	}
	var ru0, ru1 unix.Rusage
	require.NoError(b, unix.Getrusage(unix.RUSAGE_SELF, &ru0))
	b.ResetTimer()
	var scan scanResult
	for i := 0; i < b.N; i++ {
		scan = e.scanProcs([]watchedObj{{who: "it", ids: []fileID{{1, 2, 3}}}}, nil)
	}
	b.StopTimer()
	require.NoError(b, unix.Getrusage(unix.RUSAGE_SELF, &ru1))
	cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(scan.tasks), "tasks")
	b.ReportMetric(float64(procs*fds), "extra-fds")
}

// A look at the processes that does not answer (a read of /proc that
// waits on a process's memory map, held by a fault on a hung filesystem;
// here the test's hook blocks it) refuses the write once its budget is
// over, naming the process and what of it did not answer; while it stays
// stuck, the next look refuses at once rather than wait behind it; once
// it returns, looks answer again.
func TestLookThatDoesNotAnswerRefuses(t *testing.T) {
	requireRoot(t)
	release := make(chan struct{})
	var blocked atomic.Int64
	e := defaultEnv()
	e.limits = &scanLimits{procs: 1 << 16, fds: 1 << 20, mapLines: 1 << 23, budget: 100 * time.Millisecond}
	e.lookHook = func(pid int) {
		if blocked.CompareAndSwap(0, int64(pid)) {
			<-release
		}
	}
	objs := []watchedObj{{who: "it", ids: []fileID{{1, 2, 3}}}}
	fs, _ := e.holderFindings(objs, holderRules{})
	require.Len(t, fs, 1, "%v", fs)
	require.Equal(t, RefuseHiddenProcs, fs[0].id)
	require.Contains(t, fs[0].text, fmt.Sprintf("looking at every process did not finish within 1.1s: pid %d (its descriptors) did not answer", blocked.Load()))

	fs, _ = e.holderFindings(objs, holderRules{})
	require.Len(t, fs, 1, "%v", fs)
	require.Contains(t, fs[0].text, "an earlier look at every process has waited")
	require.Contains(t, fs[0].text, fmt.Sprintf("on pid %d (its descriptors), which does not answer", blocked.Load()))

	close(release)
	e.lookHook = nil
	require.Eventually(t, func() bool {
		fs, _ := e.holderFindings(objs, holderRules{})
		return len(fs) == 0
	}, time.Minute, 10*time.Millisecond, "looks answer again once the stuck one returned")
}

// A look at the processes ends at the next process once its run is
// cancelled (a canary paused for a probe): it refuses, and looks at no
// more processes, instead of going on for seconds on a busy host.
func TestLookStopsWhenCancelled(t *testing.T) {
	requireRoot(t)
	cancel := make(chan struct{})
	var looked atomic.Int64
	e := defaultEnv()
	e.cancel = cancel
	e.lookHook = func(int) {
		if looked.Add(1) == 1 {
			close(cancel)
		}
	}
	scan := e.scanProcs([]watchedObj{{who: "it", ids: []fileID{{1, 2, 3}}}}, nil)
	require.EqualValues(t, 1, looked.Load(), "processes looked at: the first closes the cancel")
	require.Equal(t, "the look was stopped: "+ErrCancelled.Error(), scan.bound)
}
