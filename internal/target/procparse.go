package target

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Parsers of what the holder scan reads in /proc (holders_linux.go,
// procscan_linux.go, procview_linux.go): pure functions over readers and
// strings, so their tests need no processes.

// fileID is how /proc names a file in fdinfo, maps and /proc/locks: the
// device number of its filesystem's superblock (mountinfo's major:minor,
// not stat's st_dev, which btrfs gives per subvolume) and its inode
// number.
type fileID struct {
	maj, min uint32
	ino      uint64
}

// fdInfo is what /proc/PID/fdinfo/FD says of a descriptor.
type fdInfo struct {
	write bool     // opened O_WRONLY or O_RDWR
	mntID int      // the mount it was opened through (-1: not said)
	ino   uint64   // its inode
	locks []string // the locks taken through it, as /proc/locks words them
	flock bool     // one of them is a BSD flock (ioprobe's writers take one)
}

// parseFDInfoFull reads /proc/PID/fdinfo/FD: its access mode (O_ACCMODE of
// the octal flags line), mount id, inode and lock: lines. Other lines (an
// io_uring's, an eventfd's) are ignored.
func parseFDInfoFull(r io.Reader) (fdInfo, error) {
	b, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return fdInfo{mntID: -1}, err
	}
	return parseFDInfoBytes(b)
}

// parseFDInfoBytes is parseFDInfoFull over the bytes read: the holder
// look parses one per descriptor on the machine, from one buffer.
func parseFDInfoBytes(b []byte) (fdInfo, error) {
	in := fdInfo{mntID: -1}
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		v = bytes.TrimSpace(v)
		switch string(k) {
		case "flags":
			f, err := strconv.ParseUint(string(v), 8, 64)
			if err != nil {
				return in, fmt.Errorf("fdinfo: bad flags %q", v)
			}
			acc := f & 3 // O_ACCMODE
			in.write = acc == 1 || acc == 2
		case "mnt_id":
			id, err := strconv.Atoi(string(v))
			if err != nil {
				return in, fmt.Errorf("fdinfo: bad mnt_id %q", v)
			}
			in.mntID = id
		case "ino":
			ino, err := strconv.ParseUint(string(v), 10, 64)
			if err != nil {
				return in, fmt.Errorf("fdinfo: bad ino %q", v)
			}
			in.ino = ino
		case "lock":
			l := string(v)
			in.locks = append(in.locks, l)
			if f := strings.Fields(l); len(f) > 1 && f[1] == "FLOCK" {
				in.flock = true
			}
		}
	}
	return in, nil
}

// mapping is a line of /proc/PID/maps that maps a file shared and
// writable: what it maps and where.
type mapping struct {
	span string // "7f32…-7f32…", the name of its entry in map_files
	id   fileID
	path string
}

// parseMapsLine reads one line of /proc/PID/maps (proc(5)): "start-end
// perms offset maj:min inode path". ok is set for a shared writable
// mapping of a file (perms rw-s or -w-s, an inode); private mappings
// (copy on write) and read-only ones never write the file.
func parseMapsLine(line string) (m mapping, ok bool, err error) {
	// Split off the first five fields; the path is the rest (it may
	// hold spaces) after the padding.
	var f [5]string
	rest := line
	for i := range f {
		rest = strings.TrimLeft(rest, " ")
		j := strings.IndexByte(rest, ' ')
		if j < 0 {
			if i < 4 {
				return m, false, fmt.Errorf("maps: short line %q", line)
			}
			j = len(rest)
		}
		f[i], rest = rest[:j], rest[j:]
	}
	perms := f[1]
	if len(perms) != 4 {
		return m, false, fmt.Errorf("maps: bad permissions in %q", line)
	}
	if perms[1] != 'w' || perms[3] != 's' {
		return m, false, nil
	}
	maj, min, err := parseHexMajMin(f[3])
	if err != nil {
		return m, false, fmt.Errorf("maps: %w in %q", err, line)
	}
	ino, err := strconv.ParseUint(f[4], 10, 64)
	if err != nil {
		return m, false, fmt.Errorf("maps: bad inode in %q", line)
	}
	if ino == 0 {
		return m, false, nil // anonymous
	}
	return mapping{span: f[0], id: fileID{maj, min, ino}, path: strings.TrimLeft(rest, " ")}, true, nil
}

// parseHexMajMin parses "fe:00", as maps and /proc/locks write device
// numbers.
func parseHexMajMin(s string) (uint32, uint32, error) { return majMin(s, 16) }

// ringFiles is what an io_uring's fdinfo says of the files registered in
// it (IORING_REGISTER_FILES, or opened straight into its table).
type ringFiles struct {
	// listed: the fdinfo had a UserFiles: line. Since Linux 6.15 (and
	// its stable backports) the kernel prints nothing of the ring when
	// the ring's lock is taken at that moment; ioprobe looks again.
	listed bool
	count  int      // the table's size (UserFiles: N)
	names  []string // each registered file, as the kernel names it
}

// maxRingNames bounds how many registered files are kept of one ring:
// the kernel allows a million, and only those that may be a target
// matter, which the caller filters for as they are read.
const maxRingNames = 1 << 20

// parseRingFiles reads an io_uring's fdinfo for its registered files. The
// kernel names each "%5u: NAME": the whole path since Linux 6.13 (octal
// escapes for space, tab, newline and backslash; empty slots left out),
// before it the file's last path component, or "<none>" for an empty
// slot. keep says which names to keep (nil: all).
func parseRingFiles(r io.Reader, keep func(string) bool) (ringFiles, error) {
	var rf ringFiles
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 64<<10)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if k, v, ok := strings.Cut(line, ":\t"); ok && !strings.HasPrefix(k, " ") {
			in = k == "UserFiles"
			if in {
				n, err := strconv.Atoi(strings.TrimSpace(v))
				if err != nil {
					return rf, fmt.Errorf("io_uring fdinfo: bad UserFiles %q", v)
				}
				rf.listed, rf.count = true, n
			}
			continue
		}
		if !in {
			continue
		}
		idx, name, ok := strings.Cut(strings.TrimLeft(line, " "), ": ")
		if _, err := strconv.Atoi(idx); !ok || err != nil {
			in = false // the next section (an unindented line without a tab)
			continue
		}
		if name == "<none>" {
			continue
		}
		name = unescapeOctal(name)
		if keep != nil && !keep(name) {
			continue
		}
		if len(rf.names) >= maxRingNames {
			return rf, fmt.Errorf("io_uring fdinfo: more than %d registered files", maxRingNames)
		}
		rf.names = append(rf.names, name)
	}
	return rf, sc.Err()
}

// parseNSInode reads a namespace link's target, "pid:[4026531836]".
func parseNSInode(link, kind string) (uint64, error) {
	v, ok := strings.CutPrefix(link, kind+":[")
	if !ok || !strings.HasSuffix(v, "]") {
		return 0, fmt.Errorf("not a %s namespace link: %q", kind, link)
	}
	return strconv.ParseUint(strings.TrimSuffix(v, "]"), 10, 64)
}

// parseLoadavgTasks reads /proc/loadavg's fourth field, "running/total":
// total is the kernel's count of every task (thread) on the machine, in
// every PID namespace (nr_threads; the per-CPU idle tasks are not in it).
func parseLoadavgTasks(s string) (int, error) {
	f := strings.Fields(s)
	if len(f) < 4 {
		return 0, fmt.Errorf("loadavg: short %q", s)
	}
	_, total, ok := strings.Cut(f[3], "/")
	if !ok {
		return 0, fmt.Errorf("loadavg: bad %q", f[3])
	}
	return strconv.Atoi(total)
}

// parseStatPPid reads the parent's pid from /proc/PID/stat: the fourth
// field, after the command name in parentheses (which may hold spaces and
// parentheses itself).
func parseStatPPid(s string) (int, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("stat: no command name in %q", s)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, fmt.Errorf("stat: short %q", s)
	}
	return strconv.Atoi(f[1])
}

// procStatus is what the holder view needs of /proc/self/status.
type procStatus struct {
	nspid  []int  // NSpid: this process's pid in each PID namespace it is in, from /proc's
	capEff uint64 // CapEff: the effective capabilities
	groups []int  // the supplementary groups
}

// parseProcStatus reads /proc/PID/status (proc(5)) for NSpid, CapEff and
// Groups.
func parseProcStatus(r io.Reader) (procStatus, error) {
	var ps procStatus
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch k {
		case "NSpid", "Groups":
			for _, s := range strings.Fields(v) {
				n, err := strconv.Atoi(s)
				if err != nil {
					return ps, fmt.Errorf("status: bad %s %q", k, v)
				}
				if k == "NSpid" {
					ps.nspid = append(ps.nspid, n)
				} else {
					ps.groups = append(ps.groups, n)
				}
			}
		case "CapEff":
			c, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				return ps, fmt.Errorf("status: bad CapEff %q", v)
			}
			ps.capEff = c
		}
	}
	return ps, sc.Err()
}

// procOptions is what /proc's mount says about which processes it shows
// (proc(5), "Mount options"): hidepid=, gid=, subset=.
type procOptions struct {
	hidepid string // "" or "0"/"off": every process is shown
	gid     int    // -1: none; members see every process
	subset  string // "pid": only the process directories, no /proc/locks
}

// parseProcOptions reads the super options of a proc mount (mountinfo's
// last field), "rw,hidepid=invisible,gid=27".
func parseProcOptions(s string) procOptions {
	o := procOptions{gid: -1}
	for _, opt := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(opt, "=")
		switch k {
		case "hidepid":
			o.hidepid = v
		case "gid":
			if g, err := strconv.Atoi(v); err == nil {
				o.gid = g
			}
		case "subset":
			o.subset = v
		}
	}
	return o
}

// hides says whether /proc with these options hides other users'
// processes (hidepid=1/noaccess hides their details, 2/invisible the
// processes themselves, 4/ptraceable all a process may not ptrace).
func (o procOptions) hides() bool {
	return o.hidepid != "" && o.hidepid != "0" && o.hidepid != "off"
}
