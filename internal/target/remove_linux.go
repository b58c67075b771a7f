package target

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// RemoveIfSame unlinks name in the directory open as dirfd if, and only
// if, it still is the file open as fd (same device and inode, the name
// looked at without following a symlink) right before unlinking;
// otherwise it leaves the name alone and returns an error that wraps
// ErrNotSameFile and says what is there now. A name that is gone already
// is not an error. dirfd may be an O_PATH descriptor, fd too.
func RemoveIfSame(dirfd int, name string, fd int) error {
	var mine, there unix.Stat_t
	if err := unix.Fstat(fd, &mine); err != nil {
		return fmt.Errorf("fstat: %w", err)
	}
	err := unix.Fstatat(dirfd, name, &there, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("fstatat %s: %w", name, err)
	}
	if mine.Dev != there.Dev || mine.Ino != there.Ino {
		return fmt.Errorf("%s is %s (inode %d), not ioprobe's file (inode %d): left it: %w",
			name, describeMode(there.Mode), there.Ino, mine.Ino, ErrNotSameFile)
	}
	if err := unix.Unlinkat(dirfd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unlink %s: %w", name, err)
	}
	return nil
}

// CreatedFile is a file ioprobe created, held by descriptor (its
// directory and the file itself, O_PATH: no lock, no I/O) so that it can
// be removed later without trusting its name: only if the name still is
// that file. It pins the filesystem it is on until closed.
type CreatedFile struct {
	Path  string // the target as given
	dirfd int
	fd    int
	name  string
}

// KeepCreated returns a CreatedFile for the file this Open created, to
// remove it later (the daemon's keep_files: false, a check's file). It
// fails when the target is not a file ioprobe created, or when its name
// no longer is that file. The caller closes or removes it.
func (t *Target) KeepCreated() (*CreatedFile, error) {
	if t == nil || !t.Created || t.file == nil || t.file.ref == nil || t.file.ref.dirfd < 0 {
		return nil, errors.New("not a file ioprobe created")
	}
	r := t.file.ref
	dfd, err := unix.Dup(r.dirfd)
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(dfd)
	fd, err := openRetry2(r.dirfd, r.name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == nil && !sameFile(fd, t.FD) {
		unix.Close(fd)
		err = fmt.Errorf("%s: %w", r.resolved(), ErrNotSameFile)
	}
	if err != nil {
		unix.Close(dfd)
		return nil, err
	}
	return &CreatedFile{Path: t.Path, dirfd: dfd, fd: fd, name: r.name}, nil
}

// Same reports whether c and o hold the same file.
func (c *CreatedFile) Same(o *CreatedFile) bool {
	return c != nil && o != nil && sameFile(c.fd, o.fd)
}

// Remove removes the file if its name still is the file ioprobe created
// (see RemoveIfSame), and closes c either way.
func (c *CreatedFile) Remove() error {
	if c == nil || c.fd < 0 {
		return nil
	}
	err := RemoveIfSame(c.dirfd, c.name, c.fd)
	c.Close()
	return err
}

// Close lets the file go without removing it.
func (c *CreatedFile) Close() {
	if c == nil || c.fd < 0 {
		return
	}
	unix.Close(c.fd)
	unix.Close(c.dirfd)
	c.fd, c.dirfd = -1, -1
}
