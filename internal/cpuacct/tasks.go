package cpuacct

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ioprobe/ioprobe/internal/hostfs"
)

// pfKThread is PF_KTHREAD, the flag of a kernel thread in /proc/PID/stat.
const pfKThread = 0x00200000

// MaxTasks bounds a scan of /proc: a host with more processes than this
// is scanned in part, and the part says so (Tasks.Complete).
const MaxTasks = 1 << 17

// Tasks is one look at every process of the host: the CPU time of the
// kernel's threads, and the bytes each other process has sent to and
// fetched from storage (/proc/PID/io: read_bytes, write_bytes, which
// include its reaped children's). ioprobe's own process is left out.
type Tasks struct {
	// KThreadTicks is each kernel thread's utime + stime (USER_HZ ticks).
	KThreadTicks map[int]uint64
	// IOBytes is each other process's read_bytes + write_bytes.
	IOBytes map[int]uint64
	// Complete says that every process was seen and every other
	// process's I/O read: not so without the right to read another
	// user's /proc/PID/io, or beyond MaxTasks. As root, a process whose
	// I/O the kernel shows to nobody (one that made itself undumpable,
	// an init outside this user namespace) is left out and does not
	// make the look incomplete: nothing could read it.
	Complete bool
}

// TaskDelta is what the host's tasks did between two looks.
type TaskDelta struct {
	KThreadTicks uint64 // the kernel threads' CPU time
	// OthersIOBytes is what other processes sent to or fetched from
	// storage, on any device; valid only when Complete.
	OthersIOBytes uint64
	Complete      bool
}

// LookAtTasks looks at every process of the live /proc, or gives up
// after wait (false): reading /proc/PID/io waits for that process's exec
// to finish, and a caller timing something cannot wait for a stuck one.
func LookAtTasks(wait time.Duration) (Tasks, bool) {
	return LookAtTasksUnless(wait, nil)
}

// LookAtTasksUnless is LookAtTasks that also gives up (false) when
// hurry is closed, or does not start when it already is: an interrupted
// run is not held up to look at every process of a loaded host.
func LookAtTasksUnless(wait time.Duration, hurry <-chan struct{}) (Tasks, bool) {
	select {
	case <-hurry:
		return Tasks{}, false
	default:
	}
	ch := make(chan Tasks, 1)
	go func() {
		t, err := Reader{}.Tasks()
		if err != nil {
			t.Complete = false
		}
		ch <- t
	}()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case t := <-ch:
		return t, true
	case <-timer.C:
		return Tasks{}, false
	case <-hurry:
		return Tasks{}, false
	}
}

// Tasks looks at every process under the proc root.
func (r Reader) Tasks() (Tasks, error) {
	t := Tasks{KThreadTicks: map[int]uint64{}, IOBytes: map[int]uint64{}, Complete: true}
	names, err := hostfs.ReadDirNames(r.proc())
	if err != nil {
		t.Complete = false
		return t, err
	}
	self := os.Getpid()
	root := os.Geteuid() == 0
	seen := 0
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 0 {
			continue
		}
		if seen++; seen > MaxTasks {
			t.Complete = false
			return t, nil
		}
		r.look(&t, pid, pid == self, root)
	}
	return t, nil
}

// look records one process. A process that ends meanwhile is simply not
// there: its CPU and I/O went to its parent, which is.
func (r Reader) look(t *Tasks, pid int, self, root bool) {
	b, err := hostfs.ReadFile(r.proc(strconv.Itoa(pid), "stat"), hostfs.LimitSmall)
	if err != nil {
		return
	}
	st, err := parseTaskStat(bytes.NewReader(b))
	if err != nil {
		return
	}
	if st.kthread {
		t.KThreadTicks[pid] = st.ticks
		return
	}
	if self {
		return
	}
	// The kernel checks the right to read a process's I/O when it is
	// read, not opened.
	var n uint64
	if b, err = hostfs.ReadFile(r.proc(strconv.Itoa(pid), "io"), hostfs.LimitSmall); err == nil {
		n, err = parseTaskIO(bytes.NewReader(b))
	}
	switch {
	case err == nil:
		t.IOBytes[pid] = n
	case errors.Is(err, os.ErrNotExist), errors.Is(err, syscall.ESRCH):
		// It ended meanwhile: its I/O is its parent's now.
	case root && errors.Is(err, os.ErrPermission):
		// Shown to nobody: see Tasks.Complete.
	default:
		t.Complete = false // another user's, without the right to read it
	}
}

// Sub is what the tasks did from earlier to t: a task new since counts
// whole (it began in between); a count that went back (a pid reused)
// counts from 0.
func (t Tasks) Sub(earlier Tasks) TaskDelta {
	d := TaskDelta{Complete: t.Complete && earlier.Complete}
	since := func(now, before uint64, ok bool) uint64 {
		if ok && now >= before {
			return now - before
		}
		return now
	}
	for pid, n := range t.KThreadTicks {
		b, ok := earlier.KThreadTicks[pid]
		d.KThreadTicks += since(n, b, ok)
	}
	for pid, n := range t.IOBytes {
		b, ok := earlier.IOBytes[pid]
		d.OthersIOBytes = addCapped(d.OthersIOBytes, since(n, b, ok))
	}
	return d
}

func addCapped(a, b uint64) uint64 {
	if a+b < a {
		return ^uint64(0)
	}
	return a + b
}

type taskStat struct {
	kthread bool
	ticks   uint64 // utime + stime
}

// parseTaskStat reads /proc/PID/stat: the flags (field 9) and utime and
// stime (fields 14 and 15), counted after the command name, which may
// hold spaces and parentheses of its own.
func parseTaskStat(r io.Reader) (taskStat, error) {
	b, err := io.ReadAll(io.LimitReader(r, 4096))
	if err != nil {
		return taskStat{}, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return taskStat{}, fmt.Errorf("/proc/PID/stat: no command name")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state): field n is f[n-3].
	if len(f) < 13 {
		return taskStat{}, fmt.Errorf("/proc/PID/stat: %d fields after the name, want at least 13", len(f))
	}
	flags, err1 := strconv.ParseUint(f[6], 10, 64)
	utime, err2 := strconv.ParseUint(f[11], 10, 64)
	stime, err3 := strconv.ParseUint(f[12], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return taskStat{}, fmt.Errorf("/proc/PID/stat: %w", err)
	}
	return taskStat{kthread: flags&pfKThread != 0, ticks: addCapped(utime, stime)}, nil
}

// parseTaskIO reads read_bytes + write_bytes of /proc/PID/io: the bytes
// the process (and its reaped children) fetched from and sent to the
// block layer, as against rchar and wchar, which count the page cache.
func parseTaskIO(r io.Reader) (uint64, error) {
	sc := bufio.NewScanner(io.LimitReader(r, 4096))
	var n uint64
	found := 0
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "read_bytes" && k != "write_bytes") {
			continue
		}
		x, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/PID/io: %s: %w", k, err)
		}
		n = addCapped(n, x)
		found++
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if found != 2 {
		return 0, fmt.Errorf("/proc/PID/io: no read_bytes and write_bytes")
	}
	return n, nil
}

// OthersFraction is the share of the host's CPU time over u that other
// processes used (0 to 1): the time /proc/stat counts for tasks (user,
// nice, system; guests are in user) less this process's CPU and the
// kernel threads' kthreadTicks over the same window, ÷ all CPU time.
// Interrupts and steal are nobody's; the kernel threads work for every
// process, this one too (a loop device's worker, a filesystem's
// journal), so they are not "others". 0 when the host was not measured.
func (u Usage) OthersFraction(kthreadTicks uint64) float64 {
	all := u.Host.All
	total := all.Total()
	if total == 0 || u.UserHZ == 0 {
		return 0
	}
	tasks := float64(all.User + all.Nice + all.System)
	own := u.ProcessCPU().Seconds() * float64(u.UserHZ)
	f := (tasks - float64(kthreadTicks) - own) / float64(total)
	return min(max(f, 0), 1)
}
