package safefile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/target"
)

// Out is an output file being written: its directory opened once, the
// document going to a new file there until Commit renames it over name.
type Out struct {
	path  string // as given
	dirfd int    // O_PATH|O_DIRECTORY
	dir   string // resolved, for messages
	name  string
	mode  uint32 // of the file it replaces, else 0644 (less the umask)
	tmp   string
	f     *os.File
}

// CheckOut refuses an output path that Create would refuse, before a run
// spends hours: its directory must exist and be one only this user and
// root can write (or sticky), and its name must be absent or a regular
// file that is none of the files the command uses. Nothing is created.
func CheckOut(path string, uses ...InUse) error {
	o, err := lookupOut(path)
	if err != nil {
		return err
	}
	defer o.close()
	return refuseInUse(path, filepath.Join(o.dir, o.name), uses)
}

// Create starts writing the output file path (see CheckOut for what is
// refused). Write to File, then Commit; Abort drops it.
func Create(path string) (*Out, error) {
	o, err := lookupOut(path)
	if err != nil {
		return nil, err
	}
	base := o.name
	if len(base) > 200 {
		base = base[:200]
	}
	for try := 0; ; try++ {
		o.tmp = fmt.Sprintf(".%s.%d-%d.ioprobe-tmp", base, os.Getpid(), try)
		fd, err := unix.Openat(o.dirfd, o.tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, o.mode)
		if errors.Is(err, unix.EEXIST) && try < 100 {
			continue
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			o.close()
			return nil, &Error{What: "--out", Path: path, Msg: "cannot be created in " + o.dir, Err: plain(err)}
		}
		o.f = os.NewFile(uintptr(fd), filepath.Join(o.dir, o.tmp))
		return o, nil
	}
}

// File is where the document is written.
func (o *Out) File() *os.File { return o.f }

// Commit makes the written document the file path names: flushed to
// storage, then renamed over the name in the directory opened at Create
// (a rename replaces a name, never writes through it). The name is
// checked again first: if a symlink, device or anything but a regular
// file took it meanwhile, the document is left unnamed and refused.
func (o *Out) Commit() error {
	defer o.close()
	err := o.f.Sync()
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	o.f = nil
	if err != nil {
		o.unlinkTmp()
		return &Error{What: "--out", Path: o.path, Msg: "could not be written", Err: err}
	}
	if err := o.nameIsWritable(); err != nil {
		o.unlinkTmp()
		return err
	}
	if err := unix.Renameat(o.dirfd, o.tmp, o.dirfd, o.name); err != nil {
		o.unlinkTmp()
		return &Error{What: "--out", Path: o.path, Msg: "could not be put in place", Err: plain(err)}
	}
	return nil
}

// Abort drops a document not committed.
func (o *Out) Abort() {
	if o.f != nil {
		o.f.Close()
		o.f = nil
		o.unlinkTmp()
	}
	o.close()
}

func (o *Out) unlinkTmp() {
	if o.dirfd >= 0 && o.tmp != "" {
		unix.Unlinkat(o.dirfd, o.tmp, 0)
	}
}

func (o *Out) close() {
	if o.dirfd >= 0 {
		unix.Close(o.dirfd)
		o.dirfd = -1
	}
}

// lookupOut opens path's directory once and checks it and the name in it.
func lookupOut(path string) (*Out, error) {
	if strings.HasSuffix(path, "/") {
		return nil, &Error{What: "--out", Path: path, Msg: "names a directory: --out is the file to write"}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &Error{What: "--out", Path: path, Msg: "cannot be made absolute", Err: err}
	}
	dir, name := filepath.Dir(abs), filepath.Base(abs)
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, &Error{What: "--out", Path: path, Msg: "cannot be written: its directory " + dir + " does not exist"}
	case errors.Is(err, unix.ENOTDIR):
		return nil, &Error{What: "--out", Path: path, Msg: "cannot be written: " + dir + " is not a directory"}
	case err != nil:
		return nil, &Error{What: "--out", Path: path, Msg: "cannot open its directory " + dir, Err: plain(err)}
	}
	o := &Out{path: path, dirfd: fd, dir: dir, name: name, mode: 0o644}
	if real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd)); err == nil {
		o.dir = real
	}
	if name == "." || name == ".." || name == "/" {
		o.close()
		return nil, &Error{What: "--out", Path: path, Msg: "names a directory: --out is the file to write"}
	}
	if err := target.RefuseSharedDirectory(filepath.Join(o.dir, name), fd); err != nil {
		o.close()
		return nil, fmt.Errorf("--out: %w", err)
	}
	if err := o.nameIsWritable(); err != nil {
		o.close()
		return nil, err
	}
	return o, nil
}

// nameIsWritable checks what the name is now, without following it:
// nothing, or a regular file (whose permissions the new file keeps).
func (o *Out) nameIsWritable() error {
	var st unix.Stat_t
	err := unix.Fstatat(o.dirfd, o.name, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil
	case err != nil:
		return &Error{What: "--out", Path: o.path, Msg: "cannot be examined", Err: plain(err)}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		o.mode = st.Mode & 0o777
		return nil
	case unix.S_IFLNK:
		to, _ := os.Readlink(filepath.Join(o.dir, o.name))
		return &Error{What: "--out", Path: o.path, Msg: fmt.Sprintf("is a symbolic link (to %s): ioprobe writes its output only to a regular file and never follows a link; name the file itself", to)}
	case unix.S_IFBLK, unix.S_IFCHR:
		return &Error{What: "--out", Path: o.path, Msg: fmt.Sprintf("is %s: ioprobe writes its output only to a regular file, never to a device (the device to measure is --target)", target.FileType(st.Mode))}
	}
	return &Error{What: "--out", Path: o.path, Msg: fmt.Sprintf("is %s: ioprobe writes its output only to a regular file", target.FileType(st.Mode))}
}
