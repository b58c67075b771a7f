package target

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// systemd and udev's convention for "someone is working on this device"
// (systemd's BLOCK_DEVICE_LOCKING): a BSD flock on the node of the whole
// disk, LOCK_EX while writing. ioprobe takes LOCK_EX|LOCK_NB on the device
// it writes and on its whole disk, holds both for the run, and refuses a
// device whose lock someone else holds.

// lockHolder is a process that /proc/locks says holds a flock.
type lockHolder struct {
	PID   int
	Write bool // LOCK_EX; false: LOCK_SH
}

// parseLocks returns the holders of BSD flocks on the inode ino of the
// filesystem maj:min from /proc/locks (proc(5)): "1: FLOCK ADVISORY WRITE
// 8256 00:05:1234 0 EOF", the device in hex. Waiters ("1: -> FLOCK ...")
// hold nothing and are left out.
func parseLocks(r io.Reader, maj, min uint32, ino uint64) ([]lockHolder, error) {
	all, err := parseAllLocks(r)
	if err != nil {
		return nil, err
	}
	var out []lockHolder
	for _, l := range all {
		f := strings.Fields(l.entry)
		if f[1] == "FLOCK" && l.maj == maj && l.min == min && l.ino == ino {
			out = append(out, lockHolder{PID: l.pid, Write: f[3] == "WRITE"})
		}
	}
	return out, nil
}

func (e env) procRoot() string {
	if e.proc == "" {
		return "/proc"
	}
	return e.proc
}

// processName is "pid 123 (flock /dev/loop3 sleep 600)": the command line
// of pid, or its comm, as /proc shows them.
func (e env) processName(pid int) string {
	if pid <= 0 {
		return "a process in another PID namespace"
	}
	dir := filepath.Join(e.procRoot(), strconv.Itoa(pid))
	cmd := ""
	if b, err := os.ReadFile(filepath.Join(dir, "cmdline")); err == nil {
		cmd = strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
	}
	if cmd == "" {
		if b, err := os.ReadFile(filepath.Join(dir, "comm")); err == nil {
			cmd = strings.TrimSpace(string(b))
		}
	}
	cmd = printable(cmd)
	if len(cmd) > 80 {
		cmd = cmd[:77] + "..."
	}
	if cmd == "" {
		return fmt.Sprintf("pid %d", pid)
	}
	return fmt.Sprintf("pid %d (%s)", pid, cmd)
}

// lockHolders names who holds a flock on the file open as fd, from
// /proc/locks; "" when it does not say.
func (e env) lockHolders(fd int) string {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return ""
	}
	f, err := os.Open(filepath.Join(e.procRoot(), "locks"))
	if err != nil {
		return ""
	}
	defer f.Close()
	hs, err := parseLocks(f, unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	if err != nil {
		return ""
	}
	self := os.Getpid()
	var names []string
	for _, h := range hs {
		if h.PID == self {
			continue
		}
		mode := "shared"
		if h.Write {
			mode = "exclusive"
		}
		names = append(names, e.processName(h.PID)+" ("+mode+")")
	}
	return strings.Join(names, ", ")
}

// lockDevice takes LOCK_EX|LOCK_NB on fd, the device node named who ("it",
// "its disk loop0"). The lock lasts as long as fd stays open.
func (e env) lockDevice(fd int, who string) *finding {
	err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EWOULDBLOCK) {
		f := because(RefuseUnverifiable, fmt.Sprintf("cannot lock %s (flock): %v", who, err))
		return &f
	}
	holder := e.lockHolders(fd)
	if holder == "" {
		holder = "another process (/proc/locks does not say which)"
	}
	f := because(RefuseLocked, fmt.Sprintf("%s is locked by %s%s", who, holder, flockMeaning))
	return &f
}

// lockForWrite locks the device open as fd and, when it is a partition, the
// node of its whole disk (where systemd and udev take theirs). It returns
// the descriptor that holds the disk's lock (-1 when fd is the whole disk),
// or why the device may not be written.
func (e env) lockForWrite(fd int, dev string) (int, *finding) {
	if f := e.lockDevice(fd, "it"); f != nil {
		return -1, f
	}
	cannot := func(format string, args ...any) (int, *finding) {
		f := because(RefuseUnverifiable, fmt.Sprintf(format, args...))
		return -1, &f
	}
	fam, err := readFamily(e.sysRoot, dev)
	if err != nil {
		return cannot("cannot find its disk to lock it: %v", err)
	}
	if fam.Disk == nil {
		return -1, nil
	}
	node, err := e.deviceNode(*fam.Disk)
	if err != nil {
		return cannot("cannot lock its disk %s: %v", fam.Disk.Name, err)
	}
	dfd, err := unix.Open(node, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return cannot("cannot open its disk %s to lock it: %v", node, err)
	}
	if f := e.lockDevice(dfd, "its disk "+fam.Disk.Name); f != nil {
		unix.Close(dfd)
		return -1, f
	}
	return dfd, nil
}

// deviceNode finds the node of block device d: /dev/NAME when it is that
// device, else /dev/block/MAJ:MIN.
func (e env) deviceNode(d blockDev) (string, error) {
	for _, p := range []string{filepath.Join(e.devRoot(), d.Name), filepath.Join(e.devRoot(), "block", fmt.Sprintf("%d:%d", d.Major, d.Minor))} {
		var st unix.Stat_t
		if unix.Stat(p, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFBLK && unix.Major(st.Rdev) == d.Major && unix.Minor(st.Rdev) == d.Minor {
			return p, nil
		}
	}
	return "", fmt.Errorf("no device node for %s (%d:%d) under %s", d.Name, d.Major, d.Minor, e.devRoot())
}

func (e env) devRoot() string {
	if e.dev == "" {
		return "/dev"
	}
	return e.dev
}
