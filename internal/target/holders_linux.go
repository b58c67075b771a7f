package target

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
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
//   - every descriptor every process has open on them (/proc/PID/fd), its
//     access mode (the flags line of /proc/PID/fdinfo/FD: O_WRONLY or
//     O_RDWR is a writer) and the locks taken through it (its lock: lines);
//   - every lock /proc/locks shows on their inodes (and on the device
//     nodes ioprobe knows), of any kind: POSIX, OFD, flock, leases.
//
// Processes in another PID namespace are not visible in /proc; their locks
// still are, in /proc/locks, without a pid.

// watchedObj is what the holders of something are looked for on: a block
// device (rdev) or a file (dev and inode), and how a refusal names it.
type watchedObj struct {
	rdev     uint64 // a block device, 0 for a file
	dev, ino uint64 // a file, or a device node
	who      string // "it", "its disk sda", "its backing file /x"
}

// fdHolder is a descriptor a process has open on a watched object.
type fdHolder struct {
	pid   int
	write bool     // opened O_WRONLY or O_RDWR
	locks []string // the locks taken through it, as /proc/locks words them
}

// parseFDInfo reads /proc/PID/fdinfo/FD: whether the descriptor was
// opened for writing (O_ACCMODE of its octal flags line is O_WRONLY or
// O_RDWR) and the locks taken through it (its lock: lines).
func parseFDInfo(r io.Reader) (write bool, locks []string, err error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "flags":
			f, err := strconv.ParseUint(v, 8, 64)
			if err != nil {
				return false, nil, fmt.Errorf("fdinfo: bad flags %q", v)
			}
			write = f&unix.O_ACCMODE == unix.O_WRONLY || f&unix.O_ACCMODE == unix.O_RDWR
		case "lock":
			locks = append(locks, v)
		}
	}
	return write, locks, sc.Err()
}

// fdHolders finds, for each watched object (by index), the descriptors
// other processes hold on it.
func (e env) fdHolders(objs []watchedObj) map[int][]fdHolder {
	out := map[int][]fdHolder{}
	procs, err := os.ReadDir(e.procRoot())
	if err != nil {
		return out
	}
	self := os.Getpid()
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == self {
			continue
		}
		fdDir := filepath.Join(e.procRoot(), p.Name(), "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue // gone, or not ours to see
		}
		for _, f := range fds {
			var st unix.Stat_t
			if unix.Stat(filepath.Join(fdDir, f.Name()), &st) != nil {
				continue
			}
			i := matchObj(objs, &st)
			if i < 0 {
				continue
			}
			info, err := os.Open(filepath.Join(e.procRoot(), p.Name(), "fdinfo", f.Name()))
			if err != nil {
				continue // closed since
			}
			w, locks, _ := parseFDInfo(info)
			info.Close()
			out[i] = append(out[i], fdHolder{pid: pid, write: w, locks: locks})
		}
	}
	return out
}

// matchObj is the index of the watched object st is, or -1.
func matchObj(objs []watchedObj, st *unix.Stat_t) int {
	isBlk := st.Mode&unix.S_IFMT == unix.S_IFBLK
	for i, o := range objs {
		if o.rdev != 0 && isBlk && st.Rdev == o.rdev || o.rdev == 0 && o.ino != 0 && st.Dev == o.dev && st.Ino == o.ino {
			return i
		}
	}
	return -1
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

// holderFindings says who writes to or locks what objs name: descriptors
// open for writing (open-for-writing), locks taken through descriptors or
// shown by /proc/locks on the objects' inodes (locked). Processes are
// named by pid, comm and command line.
func (e env) holderFindings(objs []watchedObj) []finding {
	var out []finding
	seen := map[string]bool{}
	add := func(f finding) {
		if !seen[f.text] {
			seen[f.text] = true
			out = append(out, f)
		}
	}
	hs := e.fdHolders(objs)
	idx := make([]int, 0, len(hs))
	for i := range hs {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		for _, h := range hs[i] {
			if h.write {
				add(because(RefuseOpenForWriting, fmt.Sprintf("%s is open for writing by %s, which may be using it (a database on a raw device, a VM's disk)", objs[i].who, e.procLabel(h.pid))))
			}
			for _, l := range h.locks {
				add(because(RefuseLocked, lockText(objs[i].who, e.lockerLabel(h.pid, l), l)))
			}
		}
	}
	f, err := os.Open(filepath.Join(e.procRoot(), "locks"))
	if err != nil {
		return out
	}
	defer f.Close()
	entries, err := parseAllLocks(f)
	if err != nil {
		return append(out, because(RefuseUnverifiable, "cannot read /proc/locks: "+err.Error()))
	}
	self := os.Getpid()
	for _, l := range entries {
		if l.pid == self {
			continue
		}
		for _, o := range objs {
			if o.ino == 0 || l.maj != unix.Major(o.dev) || l.min != unix.Minor(o.dev) || l.ino != o.ino {
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
	return out
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

// busyWriters lists the holders (writers and lockers) of the block device
// dev, of the devices whose bytes overlap it (its whole disk, or its
// partitions), and, when dev is a loop device, of every file and device it
// is a view into.
func (e env) busyWriters(dev string) []finding {
	fam, err := readFamily(e.sysRoot, dev)
	if err != nil {
		return nil // inUse has said why
	}
	var objs []watchedObj
	addDev := func(d blockDev, who string) {
		o := watchedObj{rdev: rdevOf(d), who: who}
		objs = append(objs, o)
		if node, err := e.deviceNode(d); err == nil {
			var st unix.Stat_t
			if unix.Stat(node, &st) == nil {
				objs = append(objs, watchedObj{dev: st.Dev, ino: st.Ino, who: who})
			}
		}
	}
	for _, m := range fam.Overlaps() {
		switch {
		case m.Name == fam.Self.Name:
			addDev(m, "it")
		case fam.Disk != nil && m.Name == fam.Disk.Name:
			addDev(m, "its disk "+m.Name)
		default:
			addDev(m, "its partition "+m.Name)
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
					addDev(*k.dev, k.subject)
				} else if k.over.backIno != 0 {
					objs = append(objs, watchedObj{dev: k.over.backDev, ino: k.over.backIno, who: k.subject})
				}
			}
		}
	}
	return e.persistentHolders(objs)
}

// holderRecheck is how long apart the holders are looked for again.
const holderRecheck = 150 * time.Millisecond

// persistentHolders is holderFindings seen three times, holderRecheck
// apart: a holder gone at the next look is no user of the device (losetup
// opens attached devices read-write for a moment on its way to a free
// one; udev's blkid reads a new device), one that stays is.
func (e env) persistentHolders(objs []watchedObj) []finding {
	fs := e.holderFindings(objs)
	for i := 0; i < 2 && len(fs) > 0; i++ {
		time.Sleep(holderRecheck)
		again := map[string]bool{}
		for _, f := range e.holderFindings(objs) {
			again[f.text] = true
		}
		kept := fs[:0]
		for _, f := range fs {
			if again[f.text] {
				kept = append(kept, f)
			}
		}
		fs = kept
	}
	return fs
}
