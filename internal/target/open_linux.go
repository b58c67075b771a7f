package target

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/hostfs"
)

// env is where Open looks at the system. Tests change it; Open uses the
// real one.
type env struct {
	sysRoot    string // "/sys"
	procSelf   string // "/proc/self"
	swaps      string // "/proc/swaps"
	proc       string // "/proc" ("" too): /proc/locks, /proc/PID
	dev        string // "/dev" ("" too): device nodes to lock
	spaceCheck bool   // check free space before creating a file (tests turn it off to reach ENOSPC)
	checkOnly  bool   // Check: open as Open would, but never create, extend or fill
	fillHook   func(off int64) error
	limits     *scanLimits   // the holder look's bounds (nil: defaultLimits)
	lookHook   func(pid int) // tests: called as the holder look reaches each process
	// cancel (Options.Cancel) stops a check's wait for a filesystem that
	// does not answer, deadline bounds it (0: hostfs.DefaultDeadline).
	cancel   <-chan struct{}
	deadline time.Duration
	// scope says which loop devices the checks of this target ask what
	// backs them (loopask_linux.go); nil asks all of them.
	scope *loopScope
}

// host is where e reads sysfs, /proc and /dev, and how long it waits for
// a call that asks another filesystem.
func (e env) host() *hostfs.Host {
	return &hostfs.Host{Sys: e.sysRoot, Proc: e.procRoot(), Dev: e.devRoot(), Deadline: e.deadline}
}

// mountTable is this process's mount table (e.procSelf's).
func (e env) mountTable() (hostfs.Mounts, error) {
	return hostfs.ReadMountInfo(filepath.Join(e.procSelf, "mountinfo"))
}

// ctx is a context that ends when e.cancel is closed: what a check waits
// for ends with the run that waits.
func (e env) ctx() context.Context { return cancelCtx{context.Background(), e.cancel} }

// cancelCtx is a context whose Done is a channel closed elsewhere (a nil
// channel: never).
type cancelCtx struct {
	context.Context
	done <-chan struct{}
}

func (c cancelCtx) Done() <-chan struct{} { return c.done }

func (c cancelCtx) Err() error {
	select {
	case <-c.done:
		return ErrCancelled
	default:
		return nil
	}
}

func defaultEnv() env {
	return env{sysRoot: "/sys", procSelf: "/proc/self", swaps: "/proc/swaps", spaceCheck: true}
}

// Open resolves path, checks it against opts and every safety rule, and
// opens it with O_DIRECT. A file that does not exist is created, filled and
// marked first (Created is then set). A refusal is a *SafetyError and bad
// input an *InputError; in both cases nothing has been created or changed.
func Open(path string, opts Options) (*Target, error) {
	return defaultEnv().open(path, opts)
}

// Check makes every check Open would make without creating or changing
// anything: a file that does not exist is checked as Open would before
// creating it; an existing target is opened and closed again. A run with
// several targets checks them all before it creates the first, so that bad
// input touches nothing.
func Check(path string, opts Options) error {
	e := defaultEnv()
	e.checkOnly = true
	t, err := e.open(path, opts)
	if err != nil || t == nil {
		return err
	}
	return t.Close()
}

func (e env) open(path string, opts Options) (*Target, error) {
	e.cancel = opts.Cancel
	if path == "" {
		return nil, inputErr(path, "empty path")
	}
	if err := checkSigns(path, opts); err != nil {
		return nil, err
	}
	r, err := lookup(path)
	if err != nil {
		return nil, err
	}
	if !r.exists {
		if e.checkOnly {
			defer r.close()
			_, _, err := e.checkNew(r, opts)
			return nil, err
		}
		return e.createFile(r, opts)
	}
	st := r.st
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		if r.viaLink && opts.Write {
			r.close()
			return nil, refusal(path, true, because(RefuseSymlink,
				fmt.Sprintf("it is a symbolic link to %s, and ioprobe never writes a file through a link (point --target at %s itself)", r.resolved(), r.resolved())))
		}
		return e.openFile(r, opts, nil)
	case unix.S_IFBLK:
		resolved := r.resolved()
		r.close()
		return e.openBlock(path, resolved, opts)
	}
	r.close()
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return nil, inputErr(path, "is a directory; a target is a regular file or a block device")
	case unix.S_IFCHR:
		return nil, inputErr(path, "is a character device; a target is a regular file or a block device")
	case unix.S_IFIFO:
		return nil, inputErr(path, "is a FIFO; a target is a regular file or a block device")
	case unix.S_IFSOCK:
		return nil, inputErr(path, "is a socket; a target is a regular file or a block device")
	default:
		return nil, inputErr(path, "is not a regular file or a block device (mode %#o)", st.Mode)
	}
}

// resolveTries bounds resolve's looks at a path that changes under it.
const resolveTries = 16

// resolve follows symlinks, for DeviceKey (which opens nothing). For a
// path that does not exist it resolves the parent directory, which must
// exist: ioprobe creates files, not directories. A file that another run
// creates or removes between two of its looks is looked at again: the
// daemon keys its device locks on the answer, and a lookup that failed for
// that moment would let two runs on one target hold two different locks.
func resolve(path string) (resolved string, st unix.Stat_t, exists bool, err error) {
	for try := 1; ; try++ {
		var changed bool
		resolved, st, exists, changed, err = resolveOnce(path)
		if !changed || try == resolveTries {
			return resolved, st, exists, err
		}
	}
}

// resolveOnce is one look of resolve; changed says that the path changed
// between two of its system calls, so that err says nothing about it.
func resolveOnce(path string) (resolved string, st unix.Stat_t, exists, changed bool, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", st, false, false, &InputError{Path: path, Msg: "cannot make the path absolute", Err: err}
	}
	resolved, err = filepath.EvalSymlinks(abs)
	if err == nil {
		if err := unix.Stat(resolved, &st); err != nil {
			return "", st, false, err == unix.ENOENT, &InputError{Path: path, Msg: "cannot stat " + resolved, Err: err}
		}
		return resolved, st, true, false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", st, false, false, &InputError{Path: path, Msg: "cannot resolve the path", Err: err}
	}
	if strings.HasSuffix(path, "/") {
		// "missing/" names a directory (filepath.Abs dropped the slash):
		// a file of that name is not what was asked for.
		return "", st, false, false, inputErr(path, "directory %s does not exist (a path ending in / names a directory; ioprobe creates files, not directories)", abs)
	}
	var lst unix.Stat_t
	if unix.Lstat(abs, &lst) == nil {
		// A symlink is one whose target is missing; anything else was
		// created since EvalSymlinks looked.
		return "", st, false, lst.Mode&unix.S_IFMT != unix.S_IFLNK, inputErr(path, "is a symlink whose target does not exist; point ioprobe at the file itself")
	}
	parent, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return "", st, false, false, inputErr(path, "cannot create it: directory %s does not exist", filepath.Dir(abs))
	}
	var pst unix.Stat_t
	if err := unix.Stat(parent, &pst); err != nil || pst.Mode&unix.S_IFMT != unix.S_IFDIR {
		return "", st, false, false, inputErr(path, "cannot create it: %s is not a directory", filepath.Dir(abs))
	}
	return filepath.Join(parent, filepath.Base(abs)), st, false, false, nil
}

// Close closes the target's file descriptor. A file this Open marked
// busy for a write run is marked ready first, with its size and times as
// the run left them, unless another run still writes it (that one marks
// it when it ends) or a re-check found a change that was not this run's
// (then it stays busy: the next run reads every sector). It is safe to
// call twice.
func (t *Target) Close() error {
	if t == nil || t.closed {
		return nil
	}
	t.closed = true
	if t.diskLocked {
		unix.Close(t.diskLock)
	}
	if f := t.file; f != nil {
		if f.busy && !f.tainted && tryLockAlone(t.FD) {
			if m, err := markReady(t.FD, f.m); err == nil {
				f.m, f.busy = m, false
			}
		}
		if f.forsaken && !f.tainted {
			rememberLeft(t.FD)
		}
		f.ref.close()
	}
	if err := unix.Close(t.FD); err != nil {
		return fmt.Errorf("close %s: %w", t.Path, err)
	}
	return nil
}

// checkBufferedFS refuses filesystems whose "direct" I/O is served from
// memory: tmpfs has accepted O_DIRECT since Linux 6.6 and caches anyway;
// ramfs is memory. fd is any descriptor on the filesystem, dir names it.
func checkBufferedFS(path, dir string, fd int) error {
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(fd, &sfs); err != nil {
		return &InputError{Path: path, Msg: "cannot statfs " + dir, Err: err}
	}
	var name string
	switch uint32(sfs.Type) {
	case unix.TMPFS_MAGIC:
		name = "tmpfs"
	case unix.RAMFS_MAGIC:
		name = "ramfs"
	default:
		return nil
	}
	return refusal(path, false, because(RefuseBufferedFS,
		fmt.Sprintf("%s is on %s, which serves direct I/O from memory, so a benchmark would measure RAM, not storage", dir, name)))
}

// noDirectIO is the refusal for a filesystem that rejects O_DIRECT: ioprobe
// never falls back to buffered I/O.
func noDirectIO(path, where string) *SafetyError {
	return refusal(path, false, because(RefuseNoDirectIO,
		fmt.Sprintf("the filesystem of %s does not support direct I/O (O_DIRECT), and ioprobe never falls back to buffered I/O", where)))
}
