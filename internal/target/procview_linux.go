package target

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A device write needs a view of every process on the machine: a holder
// ioprobe cannot see is a holder it cannot refuse for. ioprobe has that
// view only when
//
//   - it runs in the machine's first PID namespace: in a container's
//     (docker, a Kubernetes pod without hostPID, unshare -p) /proc shows
//     the container's processes and none of the host's. The first PID
//     namespace is told by the inode of /proc/self/ns/pid, which the
//     kernel fixes for it (PROC_PID_INIT_INO, include/linux/proc_ns.h,
//     since Linux 3.8); /proc/1/ns/pid would not do, as PID 1 of a
//     container is in the container's namespace too. The /proc it reads
//     must be that namespace's (/proc/self is its own pid, and NSpid has
//     one entry);
//   - /proc shows every process to it: a proc mounted hidepid=
//     (systemd's ProtectProc=invisible mounts one) hides other users'
//     processes from a process without CAP_SYS_PTRACE that is not in its
//     gid= group, and subset=pid hides /proc/locks;
//   - it may read the descriptor tables, fdinfo and maps of every process
//     (root, or CAP_SYS_PTRACE with CAP_DAC_READ_SEARCH: the fd
//     directories are mode 0500 of the process's owner); a process whose
//     table is denied (EACCES, EPERM) is one it cannot see;
//   - and the kernel's own count of tasks (/proc/loadavg's total, every
//     thread in every namespace) is no more than what the scan saw, give
//     or take the tasks that came and went while it looked: a backstop
//     for ways of hiding processes the checks above do not know.
//
// Without it a write to a device, or to a file that is not ioprobe's, is
// refused (hidden-processes), naming what was missing and what gives the
// view.

// initPIDNSIno is the inode number of the first PID namespace's
// /proc/PID/ns/pid (PROC_PID_INIT_INO).
const initPIDNSIno = 0xEFFFFFFC

// viewHelp says what gives ioprobe the view, after each hidden-processes
// reason.
const viewHelp = "; a write needs a view of every process: run ioprobe as root, or with CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH, in the host's PID namespace (systemd: no ProtectProc=invisible; Kubernetes: hostPID: true; docker: --pid=host)"

// capSysPtrace is CAP_SYS_PTRACE's bit in CapEff.
const capSysPtrace = 19

// viewKey names each hidden-processes reason for the three looks of
// persistentHolders: its text (counts, pids) may differ from look to look.
const (
	viewPIDNS  = "view:pidns"
	viewProc   = "view:proc"
	viewDenied = "view:denied"
	viewCount  = "view:count"
	viewBound  = "view:bound"
)

// hidden is a hidden-processes finding.
func hidden(key, text string) finding {
	f := because(RefuseHiddenProcs, "ioprobe cannot see every process, so another program may be using it unseen: "+text+viewHelp)
	f.key = key
	return f
}

// namespaceView says why the /proc ioprobe reads is not the host's view
// of every process: another PID namespace, a /proc that hides processes.
// Nothing when it is.
func (e env) namespaceView() []finding {
	root := e.procRoot()
	link, err := os.Readlink(filepath.Join(root, "self/ns/pid"))
	if err != nil {
		return []finding{hidden(viewPIDNS, "it cannot tell which PID namespace it runs in ("+err.Error()+")")}
	}
	ino, err := parseNSInode(link, "pid")
	if err != nil {
		return []finding{hidden(viewPIDNS, "it cannot tell which PID namespace it runs in ("+err.Error()+")")}
	}
	if ino != initPIDNSIno {
		return []finding{hidden(viewPIDNS, fmt.Sprintf("it runs in a PID namespace of its own (%s, a container's or unshare -p's), where the host's processes are not in /proc", link))}
	}
	st, err := e.selfStatus()
	if err != nil {
		return []finding{hidden(viewPIDNS, "it cannot read its own status in /proc ("+err.Error()+")")}
	}
	self, err := os.Readlink(filepath.Join(root, "self"))
	if e.proc == "" && (err != nil || self != strconv.Itoa(os.Getpid())) || len(st.nspid) > 1 {
		return []finding{hidden(viewPIDNS, fmt.Sprintf("the /proc it reads (%s) belongs to another PID namespace than its own (/proc/self is %q, NSpid %v)", root, self, st.nspid))}
	}
	mounts, err := readMounts(filepath.Join(root, "self/mountinfo"))
	if err != nil {
		return []finding{hidden(viewProc, "it cannot read its mount table to tell how /proc is mounted ("+err.Error()+")")}
	}
	var proc *mount
	for i := range mounts {
		if mounts[i].MountPoint == "/proc" && mounts[i].FSType == "proc" {
			proc = &mounts[i] // the last one is what the path shows
		}
	}
	if proc == nil {
		return []finding{hidden(viewProc, "no proc filesystem is mounted at /proc")}
	}
	o := parseProcOptions(proc.SuperOptions)
	if o.subset != "" {
		return []finding{hidden(viewProc, fmt.Sprintf("/proc is mounted subset=%s, which leaves out /proc/locks", o.subset))}
	}
	if o.hides() && st.capEff&(1<<capSysPtrace) == 0 && (o.gid < 0 || !slices.Contains(st.groups, o.gid)) {
		return []finding{hidden(viewProc, fmt.Sprintf("/proc is mounted hidepid=%s (systemd's ProtectProc=invisible does that), which hides other users' processes from a process without CAP_SYS_PTRACE", o.hidepid))}
	}
	return nil
}

// selfStatus reads /proc/self/status.
func (e env) selfStatus() (procStatus, error) {
	f, err := os.Open(filepath.Join(e.procRoot(), "self/status"))
	if err != nil {
		return procStatus{}, err
	}
	defer f.Close()
	return parseProcStatus(f)
}

// kernelTasks is the kernel's count of tasks on the machine, from
// /proc/loadavg.
func (e env) kernelTasks() (int, error) {
	b, err := os.ReadFile(filepath.Join(e.procRoot(), "loadavg"))
	if err != nil {
		return 0, err
	}
	return parseLoadavgTasks(string(b))
}

// countSlack is how many of the kernel's tasks a scan may miss before the
// count says processes are hidden: tasks that began or ended during the
// scan (a busy build forks hundreds a second). Deliberate hiding (another
// PID namespace, hidepid) is caught by the checks above; the count is a
// backstop, and a gap must persist through the three looks.
func countSlack(n int) int { return 32 + n/32 }

// initUserNSIno is the inode number of the first user namespace's
// /proc/PID/ns/user (PROC_USER_INIT_INO).
const initUserNSIno = 0xEFFFFFFD

// Capability bits of CapEff.
const (
	capDacOverride   = 1
	capDacReadSearch = 2
)

// fullView says whether ioprobe runs with every privilege that gives the
// view: CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH (or CAP_DAC_OVERRIDE)
// effective in the first user namespace.
func (e env) fullView() bool {
	st, err := e.selfStatus()
	if err != nil || st.capEff&(1<<capSysPtrace) == 0 || st.capEff&(1<<capDacReadSearch|1<<capDacOverride) == 0 {
		return false
	}
	link, err := os.Readlink(filepath.Join(e.procRoot(), "self/ns/user"))
	if err != nil {
		return false
	}
	ino, err := parseNSInode(link, "user")
	return err == nil && ino == initUserNSIno
}

// ancestors are the processes ioprobe descends from (its parent, theirs,
// up to PID 1), from /proc/PID/stat, which anyone may read.
func (e env) ancestors() map[int]bool {
	out := map[int]bool{}
	pid := os.Getpid()
	for i := 0; i < 4096 && pid > 1; i++ {
		b, err := os.ReadFile(filepath.Join(e.procRoot(), strconv.Itoa(pid), "stat"))
		if err != nil {
			break
		}
		ppid, err := parseStatPPid(string(b))
		if err != nil || ppid <= 0 || out[ppid] {
			break
		}
		out[ppid] = true
		pid = ppid
	}
	return out
}

// scanView says what a scan could not see: processes whose holdings were
// denied, a bound reached, more tasks counted by the kernel than seen.
//
// One kind of denied process is named rather than refused for (unseen,
// for Target.Unseen and the result's notes): one ioprobe descends from,
// denied to it although it has every privilege that gives the view
// (fullView). That is the supervisor or sandbox that started it guarding
// itself (an LSM such as Landlock confines the processes it starts, which
// may then not look into it: this project's CI runs under such an init),
// not a program that can be working on the device ioprobe was started to
// write. Any other process denied refuses the write: a confined ioprobe
// (a container's AppArmor profile with hostPID) cannot see the host.
func (e env) scanView(s *scanResult, before int) (out []finding, unseen []string) {
	var denied []deniedProc
	if len(s.denied) > 0 {
		up, full := e.ancestors(), e.fullView()
		for _, d := range s.denied {
			if full && up[d.pid] {
				unseen = append(unseen, e.procLabel(d.pid)+": "+d.err.Error())
			} else {
				denied = append(denied, d)
			}
		}
	}
	if len(denied) > 0 {
		names := make([]string, 0, 3)
		for _, d := range denied[:min(3, len(denied))] {
			names = append(names, e.procLabel(d.pid)+": "+d.err.Error())
		}
		more := ""
		if len(denied) > 3 {
			more = fmt.Sprintf(" and %d more", len(denied)-3)
		}
		out = append(out, hidden(viewDenied, fmt.Sprintf("it may not read what %d processes hold (%s%s), as uid %d", len(denied), strings.Join(names, "; "), more, os.Geteuid())))
	}
	if s.bound != "" {
		out = append(out, hidden(viewBound, s.bound))
	}
	if len(out) > 0 || before <= 0 {
		return out, unseen
	}
	after, err := e.kernelTasks()
	if err != nil {
		return append(out, hidden(viewCount, "it cannot read the kernel's count of tasks (/proc/loadavg: "+err.Error()+")")), unseen
	}
	if n := min(before, after); s.tasks < n-countSlack(n) {
		out = append(out, hidden(viewCount, fmt.Sprintf("the kernel counts %d tasks (/proc/loadavg) and /proc showed it %d", n, s.tasks)))
	}
	return out, unseen
}
