package target

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Files ioprobe writes are handled by descriptor from creation to removal;
// a path is never reopened and trusted by name. The directory a target
// file lives in is resolved once (symlinks in it followed by the kernel)
// and opened; the file is then created or opened relative to that
// descriptor with O_NOFOLLOW, and every later descriptor of it is checked
// against the first by device and inode. So nobody who can rename files
// in that directory can make ioprobe write to another file: in a
// directory others can write, a swap is possible only without the sticky
// bit, and ioprobe refuses such a directory anyway.

// fileRef is a target found by descriptor: the directory it is in, opened
// once, and its name there.
type fileRef struct {
	path  string // as given
	dirfd int    // O_PATH|O_DIRECTORY; -1 once closed
	dir   string // the directory, resolved (for messages)
	name  string // the last component, never a symlink that is followed again
	// st is lstat of name in dir; exists says there was something.
	st     unix.Stat_t
	exists bool
	// viaLink says the path given ends in a symlink, followed once: dir
	// and name are where it pointed.
	viaLink bool
}

func (r *fileRef) resolved() string { return filepath.Join(r.dir, r.name) }

func (r *fileRef) close() {
	if r != nil && r.dirfd >= 0 {
		unix.Close(r.dirfd)
		r.dirfd = -1
	}
}

// lookup finds path by descriptor: its directory opened once, and what is
// at its name there (not followed). A last component that is a symlink is
// followed once, by the kernel, to whatever it names; the result is then
// looked up the same way, and must be the very inode the link led to.
func lookup(path string) (*fileRef, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &InputError{Path: path, Msg: "cannot make the path absolute", Err: err}
	}
	r, err := lookupIn(path, filepath.Dir(abs), filepath.Base(abs))
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(path, "/") && (!r.exists || r.st.Mode&unix.S_IFMT != unix.S_IFDIR && r.st.Mode&unix.S_IFMT != unix.S_IFLNK) {
		// "missing/" names a directory (filepath.Abs dropped the slash):
		// a file of that name is not what was asked for.
		r.close()
		if !r.exists {
			return nil, inputErr(path, "directory %s does not exist (a path ending in / names a directory; ioprobe creates files, not directories)", abs)
		}
		return nil, inputErr(path, "is not a directory (a path ending in / names a directory)")
	}
	if !r.exists || r.st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return r, nil
	}
	// Follow the link once, with the kernel's own rules.
	lfd, err := openRetry2(r.dirfd, r.name, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		r.close()
		return nil, inputErr(path, "is a symlink whose target does not exist; point ioprobe at the file itself")
	}
	if err != nil {
		r.close()
		return nil, &InputError{Path: path, Msg: "cannot follow the symlink", Err: err}
	}
	defer unix.Close(lfd)
	r.close()
	real, err := fdPath(lfd)
	if err != nil {
		return nil, &InputError{Path: path, Msg: "cannot tell where the symlink leads", Err: err}
	}
	var lst unix.Stat_t
	if err := unix.Fstat(lfd, &lst); err != nil {
		return nil, &InputError{Path: path, Msg: "cannot stat where the symlink leads", Err: err}
	}
	if real == "/" {
		return &fileRef{path: path, dirfd: -1, dir: "/", st: lst, exists: true, viaLink: true}, nil
	}
	r, err = lookupIn(path, filepath.Dir(real), filepath.Base(real))
	if err != nil {
		return nil, err
	}
	r.viaLink = true
	if !r.exists || r.st.Dev != lst.Dev || r.st.Ino != lst.Ino {
		r.close()
		return nil, inputErr(path, "changed while being resolved (the symlink led to %s, which is now something else)", real)
	}
	return r, nil
}

// lookupIn opens directory dir and looks at name in it without following.
func lookupIn(path, dir, name string) (*fileRef, error) {
	r := &fileRef{path: path, dirfd: -1, name: name}
	fd, err := openRetry2(unix.AT_FDCWD, dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, inputErr(path, "cannot create it: directory %s does not exist", dir)
	case errors.Is(err, unix.ENOTDIR):
		return nil, inputErr(path, "cannot create it: %s is not a directory", dir)
	case err != nil:
		return nil, &InputError{Path: path, Msg: "cannot open its directory " + dir, Err: err}
	}
	r.dirfd = fd
	if r.dir, err = fdPath(fd); err != nil {
		r.dir = dir
	}
	if name == "/" || name == "." || name == ".." {
		// The root, or a path that ends in a directory: stat the directory.
		r.name = ""
		if err := unix.Fstat(fd, &r.st); err == nil {
			r.exists = true
		}
		return r, nil
	}
	err = unix.Fstatat(fd, name, &r.st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case err == nil:
		r.exists = true
	case errors.Is(err, unix.ENOENT):
	default:
		r.close()
		return nil, &InputError{Path: path, Msg: "cannot stat " + filepath.Join(r.dir, name), Err: err}
	}
	return r, nil
}

// fdPath is where the kernel says fd is (/proc/self/fd): the path resolved.
func fdPath(fd int) (string, error) {
	return os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
}

func openRetry2(dirfd int, name string, flags int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, perm)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// openAt opens name in the directory for direct I/O, never following a
// symlink there: with O_NOATIME where the kernel allows it (see
// openDirect), and O_NONBLOCK while opening, so that a FIFO put in the
// file's place does not hang the open (cleared again for a regular file).
func (r *fileRef) openAt(flags int) (int, error) {
	flags |= unix.O_DIRECT | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NONBLOCK
	fd, err := openRetry2(r.dirfd, r.name, flags|unix.O_NOATIME, 0)
	if err == unix.EPERM {
		fd, err = openRetry2(r.dirfd, r.name, flags, 0)
	}
	if errors.Is(err, unix.ELOOP) {
		return -1, fmt.Errorf("%s was replaced by a symbolic link: %w", r.resolved(), err)
	}
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return -1, fmt.Errorf("%s is no longer a regular file (mode %#o)", r.resolved(), st.Mode)
	}
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err == nil {
		_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl&^unix.O_NONBLOCK)
	}
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// reopen opens the file open as fd again with flags (O_RDONLY, O_RDWR),
// by name in its directory, and checks that it is the same inode.
func (r *fileRef) reopen(fd, flags int) (int, error) {
	nfd, err := r.openAt(flags)
	if err != nil {
		return -1, err
	}
	if !sameFile(fd, nfd) {
		unix.Close(nfd)
		return -1, r.replacedErr(fd)
	}
	return nfd, nil
}

// stillNames checks that the name is still the file open as fd.
func (r *fileRef) stillNames(fd int) error {
	var a, b unix.Stat_t
	if err := unix.Fstat(fd, &a); err != nil {
		return err
	}
	if err := unix.Fstatat(r.dirfd, r.name, &b, unix.AT_SYMLINK_NOFOLLOW); err != nil || a.Dev != b.Dev || a.Ino != b.Ino {
		return r.replacedErr(fd)
	}
	return nil
}

// replacedErr is the refusal for a name that no longer is the file open
// as fd: someone renamed, removed or replaced it meanwhile.
func (r *fileRef) replacedErr(fd int) error {
	var a, b unix.Stat_t
	now := "nothing is there now"
	if unix.Fstatat(r.dirfd, r.name, &b, unix.AT_SYMLINK_NOFOLLOW) == nil {
		now = "it is now " + describeMode(b.Mode) + fmt.Sprintf(" (inode %d)", b.Ino)
	}
	ino := "its own"
	if unix.Fstat(fd, &a) == nil {
		ino = fmt.Sprintf("its own (inode %d)", a.Ino)
	}
	return refusal(r.path, true, because(RefuseReplaced,
		fmt.Sprintf("%s was renamed or replaced while ioprobe worked on it (%s); ioprobe wrote only to %s file, never to what took its name", r.resolved(), now, ino)))
}

func describeMode(m uint32) string {
	if m&unix.S_IFMT == unix.S_IFREG {
		return "another regular file"
	}
	return FileType(m)
}

// FileType names the type of a file of mode m for a refusal: "a FIFO",
// "a block device", "a symbolic link".
func FileType(m uint32) string {
	switch m & unix.S_IFMT {
	case unix.S_IFLNK:
		return "a symbolic link"
	case unix.S_IFREG:
		return "a regular file"
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFBLK:
		return "a block device"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFSOCK:
		return "a socket"
	}
	return fmt.Sprintf("something else (mode %#o)", m)
}

// checkDirSafe refuses to write a file in a directory that others can
// write without the sticky bit (they could rename ioprobe's file and put
// a link to another in its place), or that belongs to another user (who
// can do so, sticky bit or not). Root's and this user's own directories,
// group-writable ones of a group this process is in, and sticky ones like
// /tmp are fine.
func (r *fileRef) checkDirSafe() error {
	var st unix.Stat_t
	if err := unix.Fstat(r.dirfd, &st); err != nil {
		return &InputError{Path: r.path, Msg: "cannot stat its directory " + r.dir, Err: err}
	}
	if why := dirUnsafe(st, uint32(os.Geteuid()), inGroup); why != "" {
		return refusal(r.path, true, because(RefuseSharedDir,
			fmt.Sprintf("its directory %s %s, who could swap the file ioprobe writes for a link to another; use a directory only you can write (or one with the sticky bit, chmod +t)", r.dir, why)))
	}
	return nil
}

// RefuseSharedDirectory refuses the directory open as dirfd (given as
// path) when others could replace the files ioprobe creates in it, by the
// rule every file ioprobe writes is held to (see checkDirSafe); nil when
// only this user and root can.
func RefuseSharedDirectory(path string, dirfd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(dirfd, &st); err != nil {
		return &InputError{Path: path, Msg: "cannot stat the directory", Err: err}
	}
	if why := dirUnsafe(st, uint32(os.Geteuid()), inGroup); why != "" {
		return refusal(path, true, because(RefuseSharedDir,
			fmt.Sprintf("the directory %s, so another user could swap the files ioprobe creates there; use a directory only you can write (or one with the sticky bit, chmod +t)", why)))
	}
	return nil
}

// OthersCanWrite is the shared-directory rule for other files ioprobe
// trusts (the daemon's config and the directories above it): who else
// than this user and root can replace what st describes, "" when nobody
// can. member says which groups count as this user's own; a config passes
// func(uint32) bool { return false }, as a group of several users can
// change it.
func OthersCanWrite(st unix.Stat_t, member func(gid uint32) bool) string {
	return dirUnsafe(st, uint32(os.Geteuid()), member)
}

// dirUnsafe says who else can replace files in a directory with stat st,
// for a process of effective uid euid in the groups member says; "" when
// nobody can.
func dirUnsafe(st unix.Stat_t, euid uint32, member func(gid uint32) bool) string {
	mode := st.Mode & 0o7777
	if st.Uid != euid && st.Uid != 0 {
		return fmt.Sprintf("belongs to another user (uid %d)", st.Uid)
	}
	if mode&unix.S_ISVTX != 0 {
		return ""
	}
	switch {
	case mode&0o002 != 0:
		return fmt.Sprintf("is writable by every user (mode %04o, not sticky)", mode)
	case mode&0o020 != 0 && !member(st.Gid):
		return fmt.Sprintf("is writable by the users of group %d (mode %04o, not sticky)", st.Gid, mode)
	}
	return ""
}

// inGroup says whether this process is in group gid.
func inGroup(gid uint32) bool {
	if uint32(os.Getegid()) == gid {
		return true
	}
	gs, err := os.Getgroups()
	if err != nil {
		return false
	}
	for _, g := range gs {
		if uint32(g) == gid {
			return true
		}
	}
	return false
}
