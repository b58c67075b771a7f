package target

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/textsafe"
)

// Holders: a device another program is working on is not idle because
// nothing is mounted on it. A database on a raw device holds it open for
// writing; a program may lock it (POSIX, OFD or BSD locks) without
// claiming it. Before writing a block device ioprobe looks, for the device,
// its whole disk (or its partitions), and everything a loop device target
// is a view into (its backing files and devices, at any depth), at:
//
//   - every process's hold on them (procscan_linux.go): a descriptor in
//     its table or in a thread's own, opened for writing (the flags line
//     of its fdinfo: O_WRONLY or O_RDWR) or locked through (its lock:
//     lines); a shared writable mapping; a file registered in an
//     io_uring;
//   - every lock /proc/locks shows on their inodes (and on the device
//     nodes ioprobe knows), of any kind: POSIX, OFD, flock, leases.
//
// The same rules hold for a file ioprobe did not create before it writes
// it with --allow-destructive (a VM's raw image, a database's file), and
// for ioprobe's own files, where another ioprobe run holding the writers'
// flock follows the ownership rules instead (lockWriters).
//
// The look needs a view of every process (procview_linux.go): without it
// the write is refused. Locks of processes in other PID namespaces still
// show in /proc/locks, without a pid.

// watchedObj is what the holders of something are looked for on: a block
// device (rdev, through any node of it) or a file, by how /proc names
// it, and how a refusal names it.
type watchedObj struct {
	rdev  uint64   // a block device, 0 for a file
	ids   []fileID // the file, or the device nodes ioprobe knows
	names []string // its paths (an io_uring names its files by path)
	who   string   // "it", "its disk sda", "its backing file /x"
}

// parseFDInfo reads /proc/PID/fdinfo/FD: whether the descriptor was
// opened for writing and the locks taken through it.
func parseFDInfo(r io.Reader) (write bool, locks []string, err error) {
	in, err := parseFDInfoFull(r)
	return in.write, in.locks, err
}

// procLabel names a process by its pid, its comm and its command line:
// "pid 812 (postgres: postgres -D /srv/db)".
func (e env) procLabel(pid int) string {
	dir := filepath.Join(e.procRoot(), strconv.Itoa(pid))
	comm := ""
	if b, err := os.ReadFile(filepath.Join(dir, "comm")); err == nil {
		comm = strings.TrimSpace(string(b))
	}
	cmd := ""
	if b, err := os.ReadFile(filepath.Join(dir, "cmdline")); err == nil {
		cmd = printable(strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " ")))
	}
	comm = printable(comm)
	if len(cmd) > 80 {
		cmd = cmd[:77] + "..."
	}
	switch {
	case comm == "" && cmd == "":
		return fmt.Sprintf("pid %d", pid)
	case cmd == "" || cmd == comm:
		return fmt.Sprintf("pid %d (%s)", pid, comm)
	case comm == "":
		return fmt.Sprintf("pid %d (%s)", pid, cmd)
	}
	return fmt.Sprintf("pid %d (%s: %s)", pid, comm, cmd)
}

// printable keeps a process's own words (its comm, its command line) from
// breaking the one line a refusal is or acting on a terminal: control
// characters are written as escapes.
func printable(s string) string { return textsafe.Escape(s) }

// lockText says that who is locked by holder through the lock /proc/locks
// words as entry ("1: POSIX ADVISORY WRITE 812 00:05:123 0 EOF"). A BSD
// flock is worded as lockDevice words it when its own flock fails.
func lockText(who, holder, entry string) string {
	f := strings.Fields(entry)
	if len(f) < 4 {
		return fmt.Sprintf("%s is locked by %s", who, holder)
	}
	mode := strings.ToLower(f[3])
	if f[1] == "FLOCK" {
		return fmt.Sprintf("%s is locked by %s (%s)%s", who, holder, map[string]string{"write": "exclusive", "read": "shared"}[mode], flockMeaning)
	}
	kind := map[string]string{"POSIX": "a POSIX", "OFDLCK": "an OFD", "LEASE": "a", "DELEG": "a"}[f[1]]
	what := map[string]string{"LEASE": "lease", "DELEG": "delegation"}[f[1]]
	if what == "" {
		what = "lock"
	}
	if kind == "" {
		kind = "a " + f[1]
	}
	return fmt.Sprintf("%s is locked by %s (%s %s %s)", who, holder, kind, mode, what)
}

// flockMeaning follows a refusal for a BSD flock.
const flockMeaning = ": a BSD flock on a device means a program is working on it (systemd and udev's convention)"

// holderRules says how holders are judged.
type holderRules struct {
	// view: the write needs a view of every process (a device, a file
	// ioprobe did not create); without one it is refused.
	view bool
	// ownRuns: the object is an ioprobe file; a holder whose descriptor
	// holds a BSD flock on it is an ioprobe run (the writers' flock),
	// which lockWriters judges, and so is a flock in /proc/locks.
	ownRuns bool
	// fresh: look now (the re-check right before the first write), not
	// take a look that found nothing a moment ago (see lookCache).
	fresh bool
}

// holderFindings says who writes to or locks what objs name (see the top
// of this file): writers (open-for-writing), locks (locked), and, when
// rules ask for a view of every process and ioprobe has none, why
// (hidden-processes). Processes are named by pid, comm and command line.
//
// The look is waited for no longer than its budget (lookguard_linux.go).
func (e env) holderFindings(objs []watchedObj, rules holderRules) ([]finding, []string) {
	type look struct {
		fs     []finding
		unseen []string
	}
	budget := defaultLimits.budget
	if e.limits != nil {
		budget = e.limits.budget
	}
	r := guardedLook(budget+time.Second, func(p *lookProgress) look {
		fs, unseen := e.lookHolders(objs, rules, p)
		return look{fs, unseen}
	}, func(why string) look {
		return look{fs: []finding{hidden(viewBound, why)}}
	})
	return r.fs, r.unseen
}

// lookHolders is one look of holderFindings, reporting where it is to p.
func (e env) lookHolders(objs []watchedObj, rules holderRules, p *lookProgress) (out []finding, unseen []string) {
	seen := map[string]bool{}
	add := func(f finding) {
		if !seen[f.text] {
			seen[f.text] = true
			out = append(out, f)
		}
	}
	before := 0
	if rules.view {
		if fs := e.namespaceView(); len(fs) > 0 {
			out = append(out, fs...)
		} else if n, err := e.kernelTasks(); err == nil {
			before = n
		} else {
			out = append(out, hidden(viewCount, "it cannot read the kernel's count of tasks (/proc/loadavg: "+err.Error()+")"))
		}
	}
	scan := e.scanProcs(objs, p)
	p.at(0, "the names of the holders")
	if rules.view {
		var fs []finding
		fs, unseen = e.scanView(&scan, before)
		for _, f := range fs {
			add(f)
		}
	}
	var entries []procLock
	f, err := os.Open(filepath.Join(e.procRoot(), "locks"))
	if err == nil {
		entries, err = parseAllLocks(f)
		f.Close()
	}
	if err != nil && (rules.view || !os.IsNotExist(err)) {
		add(because(RefuseUnverifiable, "cannot read /proc/locks: "+err.Error()))
	}
	// On ioprobe's file, a process holding the writers' flock is an
	// ioprobe run: its descriptors, and the ring its uring engine
	// registers the file in, are that run's.
	runs := map[int]bool{}
	if rules.ownRuns {
		for _, h := range scan.holds {
			runs[h.pid] = runs[h.pid] || h.flock
		}
		for _, l := range entries {
			if lockKind(l.entry) == "FLOCK" && l.pid > 0 && matchesAny(objs, l) {
				runs[l.pid] = true
			}
		}
	}
	named := map[string]bool{} // the locks named through a descriptor
	for _, h := range scan.holds {
		if runs[h.pid] {
			continue
		}
		who := objs[h.obj].who
		if text := e.holdText(who, h); text != "" {
			add(because(RefuseOpenForWriting, text))
		}
		for _, l := range h.locks {
			named[lockBody(l)] = true
			add(because(RefuseLocked, lockText(who, e.lockerLabel(h.pid, l), l)))
		}
	}
	self := os.Getpid()
	for _, l := range entries {
		if l.pid == self || runs[l.pid] || l.pid == -1 && named[lockBody(l.entry)] {
			continue
		}
		for _, o := range objs {
			if !slices.Contains(o.ids, fileID{l.maj, l.min, l.ino}) {
				continue
			}
			holder := e.lockerLabel(l.pid, l.entry)
			switch {
			case l.pid == -1:
				holder = "a process that took an OFD lock (/proc/locks does not name it)"
			case l.pid <= 0:
				holder = "a process in another PID namespace"
			}
			add(because(RefuseLocked, lockText(o.who, holder, l.entry)))
		}
	}
	return out, unseen
}

// lockKind is a /proc/locks entry's kind: FLOCK, POSIX, OFDLCK, LEASE.
func lockKind(entry string) string {
	if f := strings.Fields(entry); len(f) > 1 {
		return f[1]
	}
	return ""
}

// lockBody is a lock's entry without its number, which /proc/locks and
// fdinfo count apart: the same lock reads the same.
func lockBody(entry string) string {
	f := strings.Fields(entry)
	if len(f) > 0 {
		f = f[1:]
	}
	return strings.Join(f, " ")
}

// matchesAny says whether lock l is on one of objs.
func matchesAny(objs []watchedObj, l procLock) bool {
	for _, o := range objs {
		if slices.Contains(o.ids, fileID{l.maj, l.min, l.ino}) {
			return true
		}
	}
	return false
}

// holdText says how holding h makes who busy: "" for a descriptor open
// for reading only (a reader is no reason).
func (e env) holdText(who string, h holding) string {
	p := e.procLabel(h.pid)
	switch h.how {
	case heldByThreadFD:
		if h.write {
			return fmt.Sprintf("%s is open for writing by thread %d of %s, in a descriptor table of that thread's own (unshare(CLONE_FILES): /proc/%d/task/%d/fd)", who, h.tid, p, h.pid, h.tid)
		}
	case heldByMapping:
		return fmt.Sprintf("%s is mapped shared and writable by %s (%s in /proc/%d/maps), which writes it through memory with or without a descriptor", who, p, h.where, h.pid)
	case heldByRing:
		return fmt.Sprintf("%s is registered in an io_uring of %s (%s: IORING_REGISTER_FILES), which reads and writes it without a descriptor", who, p, h.where)
	default:
		if h.write {
			return fmt.Sprintf("%s is open for writing by %s, which may be using it (a database on a raw device, a VM's disk)", who, p)
		}
	}
	return ""
}

// lockerLabel names the process holding a lock: as lockDevice does for a
// BSD flock (pid and command line), by pid, comm and command line for the
// others.
func (e env) lockerLabel(pid int, entry string) string {
	if f := strings.Fields(entry); len(f) > 1 && f[1] == "FLOCK" {
		return e.processName(pid)
	}
	return e.procLabel(pid)
}

// procLock is one lock /proc/locks shows.
type procLock struct {
	pid      int
	maj, min uint32
	ino      uint64
	entry    string
}

// parseAllLocks reads /proc/locks (proc(5)): every lock held, of any kind;
// waiters ("1: -> POSIX ...") hold nothing and are left out.
func parseAllLocks(r io.Reader) ([]procLock, error) {
	var out []procLock
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[1] == "->" {
			continue
		}
		parts := strings.Split(f[5], ":")
		if len(parts) != 3 {
			return nil, fmt.Errorf("/proc/locks: bad device and inode %q", f[5])
		}
		ma, err1 := strconv.ParseUint(parts[0], 16, 32)
		mi, err2 := strconv.ParseUint(parts[1], 16, 32)
		in, err3 := strconv.ParseUint(parts[2], 10, 64)
		pid, err4 := strconv.Atoi(f[4])
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
			return nil, fmt.Errorf("/proc/locks: bad entry %q", sc.Text())
		}
		out = append(out, procLock{pid: pid, maj: uint32(ma), min: uint32(mi), ino: in, entry: sc.Text()})
	}
	return out, sc.Err()
}

// deviceObj is block device d as a watched object: its number, and the
// node ioprobe knows of it (its inode, as /proc names it, and its path).
func (e env) deviceObj(d blockDev, who string) watchedObj {
	o := watchedObj{rdev: rdevOf(d), who: who}
	if node, err := e.deviceNode(d); err == nil {
		o.names = append(o.names, node)
		if id, err := nodeID(node); err == nil {
			o.ids = append(o.ids, id)
		}
	}
	return o
}

// nodeID is how /proc names the file at path (a device node ioprobe
// knows, under /dev): its superblock's device number and its inode.
func nodeID(path string) (fileID, error) {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_INO|unix.STATX_MNT_ID, &st); err != nil {
		return fileID{}, err
	}
	return sbID(&st, "/proc/self/mountinfo")
}

// sbID is the fileID of what st describes: the device number of the
// superblock of its mount (st.Mnt_id, in the mount table at mountinfo),
// which is what /proc shows (stat's st_dev differs on btrfs), else st_dev.
func sbID(st *unix.Statx_t, mountinfo string) (fileID, error) {
	id := fileID{st.Dev_major, st.Dev_minor, st.Ino}
	if st.Mask&unix.STATX_MNT_ID == 0 {
		return id, nil
	}
	ms, err := readMounts(mountinfo)
	if err != nil {
		return id, err
	}
	for _, m := range ms {
		if m.ID == int(st.Mnt_id) {
			id.maj, id.min = m.Major, m.Minor
		}
	}
	return id, nil
}

// busyWriters lists the holders (writers and lockers) of the block device
// dev, of the devices whose bytes overlap it (its whole disk, or its
// partitions), and, when dev is a loop device, of every file and device it
// is a view into; and, when ioprobe cannot see every process, that.
func (e env) busyWriters(dev string, fresh bool) ([]finding, []string) {
	fam, err := readFamily(e.sysRoot, dev)
	if err != nil {
		return nil, nil // inUse has said why
	}
	var objs []watchedObj
	for _, m := range fam.Overlaps() {
		switch {
		case m.Name == fam.Self.Name:
			objs = append(objs, e.deviceObj(m, "it"))
		case fam.Disk != nil && m.Name == fam.Disk.Name:
			objs = append(objs, e.deviceObj(m, "its disk "+m.Name))
		default:
			objs = append(objs, e.deviceObj(m, "its partition "+m.Name))
		}
	}
	if ls, err := e.loops(); err == nil {
		for _, l := range ls {
			if l.Name != fam.Self.Name {
				continue
			}
			chain, _ := e.loopChain(l, ls) // loopsOver says when it cannot follow it
			for _, k := range chain {
				if k.dev != nil {
					objs = append(objs, e.deviceObj(*k.dev, k.subject))
				} else if k.over.backIno != 0 {
					o := watchedObj{who: k.subject, ids: []fileID{{unix.Major(k.over.backDev), unix.Minor(k.over.backDev), k.over.backIno}}}
					if name := strings.TrimSpace(k.over.file); name != "" {
						o.names = append(o.names, name)
						if id, err := nodeID(name); err == nil && id.ino == k.over.backIno && !slices.Contains(o.ids, id) {
							o.ids = append(o.ids, id) // btrfs: its superblock's number too
						}
					}
					objs = append(objs, o)
				}
			}
		}
	}
	return e.persistentHolders(objs, holderRules{view: true, fresh: fresh})
}

// fileHolders lists the holders of the file open as fd (named path, as
// resolved): for a file that is not ioprobe's (owned false) the device
// rules, a view of every process included; for ioprobe's own, those of
// other programs, an ioprobe run holding the writers' flock left to
// lockWriters.
func (e env) fileHolders(path string, fd int, owned, fresh bool) ([]finding, []string) {
	var st unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_INO|unix.STATX_MNT_ID, &st); err != nil {
		return []finding{because(RefuseUnverifiable, "cannot stat it to look for its holders: "+err.Error())}, nil
	}
	id, err := sbID(&st, filepath.Join(e.procRoot(), "self/mountinfo"))
	if err != nil {
		return []finding{because(RefuseUnverifiable, "cannot read the mount table to look for its holders: "+err.Error())}, nil
	}
	o := watchedObj{who: "it", ids: []fileID{id}, names: []string{path}}
	if sd := (fileID{st.Dev_major, st.Dev_minor, st.Ino}); sd != id {
		o.ids = append(o.ids, sd)
	}
	return e.persistentHolders([]watchedObj{o}, holderRules{view: !owned, ownRuns: owned, fresh: fresh})
}

// holderRecheck is how long apart the holders are looked for again.
const holderRecheck = 150 * time.Millisecond

// persistentHolders is holderFindings seen three times, holderRecheck
// apart: a holder gone at the next look is no user of the device (losetup
// opens attached devices read-write for a moment on its way to a free
// one; udev's blkid reads a new device), one that stays is. A reason
// with a key (what ioprobe could not see) is the same reason when its
// words (counts, pids) change: it is said as the last look found it.
// unseen is the last look's (see scanView).
func (e env) persistentHolders(objs []watchedObj, rules holderRules) ([]finding, []string) {
	key := fmt.Sprint(objs, rules.view, rules.ownRuns)
	if !rules.fresh {
		if unseen, ok := lookCache.get(key); ok {
			return nil, unseen
		}
	}
	fs, unseen := e.holderFindings(objs, rules)
	if len(fs) == 0 {
		lookCache.put(key, unseen)
	}
	for i := 0; i < 2 && len(fs) > 0; i++ {
		time.Sleep(holderRecheck)
		again := map[string]finding{}
		look, u := e.holderFindings(objs, rules)
		for _, f := range look {
			again[f.persistKey()] = f
		}
		unseen = u
		kept := fs[:0]
		for _, f := range fs {
			if g, ok := again[f.persistKey()]; ok {
				kept = append(kept, g)
			}
		}
		fs = kept
	}
	return fs, unseen
}

// lookCache keeps the last look that found nothing, for lookReuse: a run
// checks its targets (Check), then opens them (Open) a moment later, and
// one look serves both. The look that counts is the fresh one right
// before the first write (Recheck), which never takes it from here.
var lookCache lastLook

// lookReuse is how long a look that found nothing is taken again.
const lookReuse = time.Second

type lastLook struct {
	mu     sync.Mutex
	key    string
	at     time.Time
	unseen []string
}

func (c *lastLook) get(key string) ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.key != key || time.Since(c.at) > lookReuse {
		return nil, false
	}
	return c.unseen, true
}

func (c *lastLook) put(key string, unseen []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.key, c.at, c.unseen = key, time.Now(), unseen
}
