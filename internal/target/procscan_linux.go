package target

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The look at every process (scanProcs): who holds a watched object, and
// how. A process holds a file or a device through
//
//   - a descriptor in its table (/proc/PID/fd), or in the table of a
//     thread that has one of its own after unshare(CLONE_FILES)
//     (/proc/PID/task/TID/fd; kcmp(KCMP_FILES) tells a thread that shares
//     the leader's table, which is read once);
//   - a shared writable mapping, which outlives the descriptor it was
//     made with (/proc/PID/maps: perms rw-s, the file's device and inode);
//   - a file registered in an io_uring (IORING_REGISTER_FILES), which the
//     ring keeps after the descriptor is closed (the ring's fdinfo lists
//     them, UserFiles:).
//
// It never waits on a filesystem. A descriptor is identified by what
// /proc/PID/fdinfo/FD says (mnt_id and ino: the mount, from mountinfo,
// gives the superblock's device number) and a mapping by what its maps
// line says: nothing of a foreign file is stat'ed for that. Only where a
// watched block device may hide behind a device node ioprobe does not
// know (a container's /dev) is a descriptor or mapping stat'ed, and only
// on a filesystem that answers from memory (statSafeFS) and whose mount
// allows device nodes (no nodev), with AT_STATX_DONT_SYNC: never on NFS,
// FUSE or another filesystem that may not answer.
//
// Every look is bounded: processes, descriptors, maps lines and time
// (defaultLimits). Past a bound the look is incomplete, which refuses the
// write (hidden-processes) like any view of the processes that is.

// scanLimits are the bounds of one look.
type scanLimits struct {
	procs, fds, mapLines int
	budget               time.Duration
}

// defaultLimits: tens of thousands of processes, a million descriptors,
// eight million mapped regions (Elasticsearch asks for 262144 per
// process) and 10 s; a busy machine here is looked at in milliseconds
// (docs/reliability.md).
var defaultLimits = scanLimits{procs: 1 << 16, fds: 1 << 20, mapLines: 1 << 23, budget: 10 * time.Second}

// maxRingFdinfo bounds the bytes of one io_uring's fdinfo.
const maxRingFdinfo = 64 << 20

// ringPatience and ringRetry bound the reads of a busy ring's fdinfo (see
// ring): reads 2 ms apart for 1 s at most a ring, before the look fails
// closed saying so. A ring's owner holds its lock while it submits and
// reaps; on a loaded machine a thread holding it can wait tens of
// milliseconds for a CPU, so a tenth of a second of reads was not enough
// beside another process's busy ring.
const (
	ringPatience = time.Second
	ringRetry    = 2 * time.Millisecond
)

// kcmpFiles is KCMP_FILES (linux/kcmp.h).
const kcmpFiles = 2

// holdHow says how a process holds an object.
type holdHow int

const (
	heldByFD       holdHow = iota // a descriptor in its (shared) table
	heldByThreadFD                // a descriptor in a thread's own table
	heldByMapping                 // a shared writable mapping
	heldByRing                    // a file registered in an io_uring
)

// holding is one way a process holds a watched object.
type holding struct {
	obj   int // index into the watched objects
	pid   int
	tid   int // heldByThreadFD: the thread
	how   holdHow
	write bool     // open for writing (a mapping or a ring: always)
	flock bool     // its descriptor holds a BSD flock on it
	locks []string // the locks taken through it
	where string   // "fd 5", "mapping 7f..-7f..", "io_uring fd 4"
}

// deniedProc is a process whose holdings ioprobe could not read.
type deniedProc struct {
	pid int
	err error
}

// scanResult is what one look at every process found.
type scanResult struct {
	holds  []holding
	denied []deniedProc
	tasks  int    // tasks (threads) seen, this process's included
	bound  string // why the look stopped early ("" when it did not)
}

// procScanner is one look's state.
type procScanner struct {
	e        env
	root     string
	objs     []watchedObj
	inos     map[uint64]bool
	needRdev bool
	mounts   map[int]*mount // by mount id: ids are unique across namespaces
	bySB     map[[2]uint32]*mount
	nsMounts map[string][]mount // mount namespace -> its mounts, as its processes see them
	myNS     string
	self     int
	fds      int
	lines    int
	lim      scanLimits
	deadline time.Time
	buf      []byte // readlink's and fdinfo's
	progress *lookProgress
	res      scanResult
}

// scanProcs looks at every process but this one for how it holds objs.
// Where it is goes to progress (nil: nowhere).
func (e env) scanProcs(objs []watchedObj, progress *lookProgress) scanResult {
	s := &procScanner{e: e, root: e.procRoot(), objs: objs, inos: map[uint64]bool{}, progress: progress,
		mounts: map[int]*mount{}, bySB: map[[2]uint32]*mount{}, nsMounts: map[string][]mount{},
		self: os.Getpid(), lim: defaultLimits, buf: make([]byte, 4096)}
	if e.limits != nil {
		s.lim = *e.limits
	}
	s.deadline = time.Now().Add(s.lim.budget)
	for _, o := range objs {
		for _, id := range o.ids {
			s.inos[id.ino] = true
		}
		s.needRdev = s.needRdev || o.rdev != 0
	}
	s.myNS, _ = os.Readlink(filepath.Join(s.root, "self/ns/mnt"))
	if ms, err := readMounts(filepath.Join(s.root, "self/mountinfo")); err == nil {
		s.addMounts(s.nsKey(s.myNS, s.self), ms)
	}
	d, err := os.Open(s.root)
	if err != nil {
		s.res.bound = "it cannot list the processes in " + s.root + ": " + err.Error()
		return s.res
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		s.res.bound = "it cannot list the processes in " + s.root + ": " + err.Error()
		return s.res
	}
	procs := 0
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid <= 0 {
			continue
		}
		if procs++; procs > s.lim.procs {
			s.res.bound = fmt.Sprintf("there are more than %d processes, the most it looks at", s.lim.procs)
			break
		}
		if time.Now().After(s.deadline) {
			s.res.bound = fmt.Sprintf("looking at every process took longer than %s", s.lim.budget)
			break
		}
		// A run stopped while it prepares (a paused canary, SIGTERM) stops
		// its look too: on a busy host the look takes seconds, and a
		// canary that looked on held its device past a probe's budget.
		if s.e.ctx().Err() != nil {
			s.res.bound = "the look was stopped: " + ErrCancelled.Error()
			break
		}
		if !s.process(pid) {
			break
		}
	}
	return s.res
}

// errBound stops a look: a bound was reached (scanResult.bound says which).
var errBound = errors.New("bound reached")

// process looks at one process; false when a bound stops the look. The
// first thing of a process ioprobe may not read makes it a process it
// cannot see (denied), and the look goes on with the next.
func (s *procScanner) process(pid int) bool {
	dir := filepath.Join(s.root, strconv.Itoa(pid))
	tids, err := readNames(filepath.Join(dir, "task"))
	if err != nil {
		s.deny(pid, err)
		return true
	}
	s.res.tasks += len(tids)
	if pid == s.self {
		return true
	}
	s.progress.at(pid, "its descriptors")
	if s.e.lookHook != nil {
		s.e.lookHook(pid)
	}
	err = s.fdTable(pid, 0, dir)
	for _, t := range tids {
		tid, terr := strconv.Atoi(t)
		if err != nil || terr != nil || tid == pid {
			continue
		}
		if same, kerr := sameFiles(pid, tid); kerr == nil && same {
			continue
		}
		err = s.fdTable(pid, tid, filepath.Join(dir, "task", t))
	}
	if err == nil {
		s.progress.at(pid, "its /proc/PID/maps, which waits on its memory map")
		err = s.maps(pid, dir)
	}
	if err == errBound {
		return false
	}
	s.deny(pid, err)
	return true
}

// readNames lists a /proc directory, unsorted.
func readNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

// gone says that err means the process or descriptor went away meanwhile.
func gone(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESRCH)
}

// deny records that pid's holdings could not be read, unless it is gone.
func (s *procScanner) deny(pid int, err error) {
	if err == nil || gone(err) {
		return
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = fmt.Errorf("%s: %w", strings.TrimPrefix(pe.Path, s.root+"/"), pe.Err)
	}
	s.res.denied = append(s.res.denied, deniedProc{pid, err})
}

// sameFiles says whether thread tid shares pid's descriptor table.
func sameFiles(pid, tid int) (bool, error) {
	r, _, errno := unix.Syscall6(unix.SYS_KCMP, uintptr(pid), uintptr(tid), kcmpFiles, 0, 0, 0)
	if errno != 0 {
		return false, errno
	}
	return r == 0, nil
}

// fdTable looks at a descriptor table: pid's (tid 0, dir /proc/PID) or a
// thread's own (dir /proc/PID/task/TID). An error is what ioprobe may not
// read (or errBound). Each descriptor costs a readlinkat and, for a file,
// an openat, a read and a close of its fdinfo, relative to the
// directories opened once: a look at 100,000 descriptors is counted in
// tenths of a second, not seconds (docs/reliability.md).
func (s *procScanner) fdTable(pid, tid int, dir string) error {
	fdDir, err := unix.Open(filepath.Join(dir, "fd"), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: filepath.Join(dir, "fd"), Err: err}
	}
	defer unix.Close(fdDir)
	fds, err := dirNames(fdDir)
	if err != nil {
		return &os.PathError{Op: "readdir", Path: filepath.Join(dir, "fd"), Err: err}
	}
	infoDir, err := unix.Open(filepath.Join(dir, "fdinfo"), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: filepath.Join(dir, "fdinfo"), Err: err}
	}
	defer unix.Close(infoDir)
	how := heldByFD
	if tid != 0 {
		how = heldByThreadFD
	}
	for _, n := range fds {
		if s.fds++; s.fds > s.lim.fds {
			s.res.bound = fmt.Sprintf("processes hold more than %d descriptors, the most it looks at", s.lim.fds)
			return errBound
		}
		k, err := unix.Readlinkat(fdDir, n, s.buf)
		if err != nil {
			if gone(err) {
				continue
			}
			return &os.PathError{Op: "readlink", Path: filepath.Join(dir, "fd", n), Err: err}
		}
		link := s.buf[:k]
		if bytes.HasPrefix(link, []byte("anon_inode:")) && bytes.Contains(link, []byte("io_uring")) {
			if err := s.ring(pid, filepath.Join(dir, "fdinfo", n), "io_uring fd "+n); err != nil {
				return err
			}
			continue
		}
		if len(link) == 0 || link[0] != '/' {
			continue // a pipe, a socket, another anonymous inode, a namespace
		}
		in, err := s.readFDInfo(infoDir, n)
		if err != nil {
			if gone(err) {
				continue
			}
			return &os.PathError{Op: "read", Path: filepath.Join(dir, "fdinfo", n), Err: err}
		}
		if i := s.matchFD(pid, in, filepath.Join(dir, "fd", n)); i >= 0 {
			s.res.holds = append(s.res.holds, holding{obj: i, pid: pid, tid: tid, how: how,
				write: in.write, flock: in.flock, locks: in.locks, where: "fd " + n})
		}
	}
	return nil
}

// dirNames lists the directory open as fd.
func dirNames(fd int) ([]string, error) {
	var names []string
	buf := make([]byte, 8192)
	for {
		n, err := unix.Getdents(fd, buf)
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}

// readFDInfo reads the fdinfo of descriptor name in the fdinfo directory
// open as dir into the scanner's buffer: one read, as seq_file gives a
// small file whole (a longer one is read on).
func (s *procScanner) readFDInfo(dir int, name string) (fdInfo, error) {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fdInfo{}, err
	}
	defer unix.Close(fd)
	got := 0
	for {
		n, err := unix.Read(fd, s.buf[got:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fdInfo{}, err
		}
		got += n
		if n == 0 || got < len(s.buf) {
			break
		}
		if len(s.buf) >= 1<<20 {
			return fdInfo{}, fmt.Errorf("longer than %d bytes", len(s.buf))
		}
		s.buf = append(s.buf, make([]byte, len(s.buf))...)
	}
	return parseFDInfoBytes(s.buf[:got])
}

// matchFD is the watched object the descriptor (described by in, open as
// magic, its /proc/PID/fd link) is, or -1.
func (s *procScanner) matchFD(pid int, in fdInfo, magic string) int {
	known := s.inos[in.ino]
	if !known && !s.needRdev {
		return -1
	}
	m := s.mountOf(pid, in.mntID)
	if known {
		if m == nil {
			// A mount no mountinfo shows (its namespace's cannot be
			// read): the inode alone must do.
			return s.objByIno(in.ino)
		}
		if i := s.objByID(fileID{m.Major, m.Minor, in.ino}); i >= 0 {
			return i
		}
	}
	if s.needRdev && m != nil && mayHoldDevices(m) {
		return s.objByNode(magic)
	}
	return -1
}

// statSafeFS are the filesystems whose getattr answers from memory: a
// stat of a file on them cannot wait on a server, a FUSE daemon or a
// cluster lock.
var statSafeFS = map[string]bool{"devtmpfs": true, "tmpfs": true, "ramfs": true,
	"ext2": true, "ext3": true, "ext4": true, "xfs": true, "btrfs": true, "f2fs": true}

// mayHoldDevices says whether a descriptor opened through mount m may be
// a device node ioprobe is allowed to stat: the mount allows device nodes
// (a nodev mount refuses to open them) and its filesystem is stat-safe.
func mayHoldDevices(m *mount) bool {
	return statSafeFS[m.FSType] && !hasOption(m.Options, "nodev")
}

func hasOption(opts, o string) bool {
	for _, x := range strings.Split(opts, ",") {
		if x == o {
			return true
		}
	}
	return false
}

// objByNode stats path (a /proc magic link, on a stat-safe filesystem)
// and returns the watched block device it is, or -1.
func (s *procScanner) objByNode(path string) int {
	var st unix.Statx_t
	if unix.Statx(unix.AT_FDCWD, path, unix.AT_STATX_DONT_SYNC, unix.STATX_TYPE, &st) != nil {
		return -1
	}
	return s.objByStatx(&st, nil)
}

// objByStatx is the watched object st is: a block device by its number,
// a file by its mount's superblock and inode (m: the mount st.Mnt_id
// names), or -1.
func (s *procScanner) objByStatx(st *unix.Statx_t, m *mount) int {
	if st.Mode&unix.S_IFMT == unix.S_IFBLK {
		rdev := unix.Mkdev(st.Rdev_major, st.Rdev_minor)
		for i, o := range s.objs {
			if o.rdev != 0 && o.rdev == rdev {
				return i
			}
		}
		return -1
	}
	if m == nil {
		return -1
	}
	return s.objByID(fileID{m.Major, m.Minor, st.Ino})
}

func (s *procScanner) objByID(id fileID) int {
	for i, o := range s.objs {
		for _, x := range o.ids {
			if x == id {
				return i
			}
		}
	}
	return -1
}

func (s *procScanner) objByIno(ino uint64) int {
	for i, o := range s.objs {
		for _, x := range o.ids {
			if x.ino == ino {
				return i
			}
		}
	}
	return -1
}

// nsKey names a mount namespace: its link, or the process when the link
// cannot be read.
func (s *procScanner) nsKey(link string, pid int) string {
	if link == "" {
		return "pid " + strconv.Itoa(pid)
	}
	return link
}

func (s *procScanner) addMounts(ns string, ms []mount) {
	s.nsMounts[ns] = ms
	for i := range ms {
		m := &ms[i]
		s.mounts[m.ID] = m
		if _, ok := s.bySB[[2]uint32{m.Major, m.Minor}]; !ok {
			s.bySB[[2]uint32{m.Major, m.Minor}] = m
		}
	}
}

// procNS is pid's mount namespace key, its mountinfo read once.
func (s *procScanner) procNS(pid int) string {
	dir := filepath.Join(s.root, strconv.Itoa(pid))
	link, _ := os.Readlink(filepath.Join(dir, "ns/mnt"))
	ns := s.nsKey(link, pid)
	if _, ok := s.nsMounts[ns]; !ok {
		ms, _ := readMounts(filepath.Join(dir, "mountinfo"))
		s.addMounts(ns, ms)
	}
	return ns
}

// mountOf is the mount with id mntID, from pid's mount namespace when it
// is not ours; nil for a mount no mountinfo shows (the kernel's own:
// pipes, sockets, memfd).
func (s *procScanner) mountOf(pid, mntID int) *mount {
	if m, ok := s.mounts[mntID]; ok {
		return m
	}
	s.procNS(pid)
	return s.mounts[mntID]
}

// maps looks at pid's shared writable mappings.
func (s *procScanner) maps(pid int, dir string) error {
	f, err := os.Open(filepath.Join(dir, "maps"))
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 16<<10), 64<<10)
	for sc.Scan() {
		if s.lines++; s.lines > s.lim.mapLines {
			s.res.bound = fmt.Sprintf("processes map more than %d regions, the most it looks at", s.lim.mapLines)
			return errBound
		}
		m, ok, err := parseMapsLine(sc.Text())
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		i := s.objByID(m.id)
		if i < 0 && s.needRdev {
			if i, err = s.mappedDevice(pid, dir, m); err != nil {
				return err
			}
		}
		if i >= 0 {
			s.res.holds = append(s.res.holds, holding{obj: i, pid: pid, how: heldByMapping, write: true, where: "mapping " + m.span})
		}
	}
	return sc.Err()
}

// mappedDevice tells whether mapping m of pid is a watched block device
// through a node ioprobe does not know. Only a file on a stat-safe
// filesystem is looked at: through map_files (which needs
// CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN), else by its path, in the
// process's root, which must still be the mapped inode. A mapping it
// cannot tell is an error: the process is one ioprobe cannot see.
func (s *procScanner) mappedDevice(pid int, dir string, m mapping) (int, error) {
	sb := s.bySB[[2]uint32{m.id.maj, m.id.min}]
	if sb == nil {
		s.procNS(pid)
		sb = s.bySB[[2]uint32{m.id.maj, m.id.min}]
	}
	if sb == nil || !statSafeFS[sb.FSType] {
		return -1, nil // the kernel's own (shared anonymous memory), or not to be asked
	}
	var st unix.Statx_t
	err := unix.Statx(unix.AT_FDCWD, filepath.Join(dir, "map_files", m.span), unix.AT_STATX_DONT_SYNC, unix.STATX_TYPE|unix.STATX_INO, &st)
	if err == nil {
		return s.objByStatx(&st, nil), nil
	}
	if gone(err) {
		return -1, nil
	}
	got, rerr := s.resolveIn(pid, m.path, &m.id)
	if rerr != nil {
		return -1, fmt.Errorf("cannot tell what its mapping %s (%s) is: map_files: %v; by its path: %v", m.span, m.path, err, rerr)
	}
	return s.objByStatx(&got.st, got.mnt), nil
}

// resolved is a path found in a process's root.
type resolved struct {
	st  unix.Statx_t
	mnt *mount
}

// errUnsafeWalk: a path crosses a filesystem ioprobe does not ask.
var errUnsafeWalk = errors.New("its path crosses a filesystem ioprobe does not look up names on")

// resolveIn stats path as process pid sees it (from ioprobe's root when
// pid shares ioprobe's mount namespace, else from pid's root), without
// following any symlink, and only when every mount the walk crosses is
// on a stat-safe filesystem. want, when set, is the file the path must
// be (else the name now names another file: an error).
func (s *procScanner) resolveIn(pid int, path string, want *fileID) (resolved, error) {
	var r resolved
	if !strings.HasPrefix(path, "/") || strings.HasSuffix(path, " (deleted)") {
		return r, fmt.Errorf("%q is not a path that still names it", path)
	}
	ns := s.procNS(pid)
	rootDir := filepath.Join(s.root, strconv.Itoa(pid), "root")
	if ns == s.nsKey(s.myNS, s.self) {
		rootDir = "/"
	}
	for _, m := range s.nsMounts[ns] {
		if (m.MountPoint == "/" || path == m.MountPoint || strings.HasPrefix(path, m.MountPoint+"/")) && !statSafeFS[m.FSType] {
			return r, errUnsafeWalk
		}
	}
	rfd, err := unix.Open(rootDir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return r, err
	}
	defer unix.Close(rfd)
	fd, err := unix.Openat2(rfd, strings.TrimPrefix(path, "/"), &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return r, err
	}
	defer unix.Close(fd)
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_STATX_DONT_SYNC, unix.STATX_TYPE|unix.STATX_INO|unix.STATX_MNT_ID, &r.st); err != nil {
		return r, err
	}
	if r.st.Mask&unix.STATX_MNT_ID != 0 {
		r.mnt = s.mounts[int(r.st.Mnt_id)]
	}
	if want != nil && (r.mnt == nil || (fileID{r.mnt.Major, r.mnt.Minor, r.st.Ino}) != *want) {
		return r, fmt.Errorf("%s now names another file", path)
	}
	return r, nil
}

// ring looks at the files registered in the io_uring whose fdinfo is
// info. The kernel names them by path (by last component before Linux
// 6.13): a name of a watched object matches; a path ioprobe can resolve
// safely is compared by what it is.
func (s *procScanner) ring(pid int, info, where string) error {
	// The kernel lists a ring's files only when it can take the ring's
	// lock at once, which its owner holds while it submits and runs its
	// completions: a ring in steady use is busy at some reads and not at
	// others, so a busy read is tried again, for ringPatience at most.
	var rf ringFiles
	deadline := time.Now().Add(ringPatience)
	for try := 1; ; try++ {
		f, err := os.Open(info)
		if err != nil {
			if gone(err) {
				return nil
			}
			return err
		}
		rf, err = parseRingFiles(&limitedReader{f, maxRingFdinfo}, nil)
		f.Close()
		if err != nil {
			return err
		}
		if rf.listed {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: the kernel did not list the files registered in it (the ring was busy at %d reads in %v)", where, try, ringPatience)
		}
		time.Sleep(ringRetry)
	}
	for _, name := range rf.names {
		i := s.objByName(name)
		if i < 0 && strings.HasPrefix(name, "/") {
			if r, err := s.resolveIn(pid, name, nil); err == nil {
				i = s.objByStatx(&r.st, r.mnt)
			}
		}
		if i >= 0 {
			s.res.holds = append(s.res.holds, holding{obj: i, pid: pid, how: heldByRing, write: true, where: where})
		}
	}
	return nil
}

// objByName is the watched object a ring's file name names: one of its
// paths, or (a bare name, as kernels before 6.13 print) its last
// component.
func (s *procScanner) objByName(name string) int {
	for i, o := range s.objs {
		for _, p := range o.names {
			if name == p || !strings.Contains(name, "/") && name == filepath.Base(p) {
				return i
			}
		}
	}
	return -1
}

// limitedReader fails a read past n bytes, rather than ending quietly as
// io.LimitReader does: a list cut short would look complete.
type limitedReader struct {
	f *os.File
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, fmt.Errorf("%s is longer than %d bytes", l.f.Name(), maxRingFdinfo)
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.f.Read(p)
	l.n -= int64(n)
	return n, err
}
