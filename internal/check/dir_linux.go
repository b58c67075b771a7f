package check

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/target"
)

// checkDir is the directory a check writes in, held by descriptor: it is
// resolved once, and every file is created, renamed and removed relative
// to that descriptor, never by a path looked up again.
type checkDir struct {
	path     string // as given
	resolved string // symlinks resolved, once
	fd       int    // O_DIRECTORY
	dev      string // kernel name of the block device under it ("" when none: btrfs, NFS)
	flushDev string // the device whose counters hold dev's flushes: a partition's whole disk
	fsType   string // "ext4", "xfs", … (statfs magic; "" when unknown)
	prefix   string // the names this run creates start with it

	mu    sync.Mutex // files: the WAL's pipeline adds to it
	files []*ownFile
}

// ownFile is a file the check created: its descriptor decides whether a
// name is still it.
type ownFile struct {
	name string
	fd   int
}

// openCheckDir opens path as the directory to check. A path that is not
// an existing directory (missing, with or without a trailing slash, a file,
// a device) is bad input; a directory on tmpfs or ramfs, where fdatasync
// touches no storage, or one that others could replace files in, is
// refused. Nothing is created.
func openCheckDir(path string) (*checkDir, error) {
	if path == "" {
		return nil, &target.InputError{Path: path, Msg: "empty path"}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &target.InputError{Path: path, Msg: "cannot make the path absolute", Err: err}
	}
	var st unix.Stat_t
	switch err := unix.Stat(abs, &st); {
	case errors.Is(err, unix.ENOENT):
		return nil, &target.InputError{Path: path, Msg: "no such directory: the check runs in the directory etcd uses (its --data-dir, or a directory on the same filesystem); create it first"}
	case errors.Is(err, unix.ENOTDIR):
		return nil, &target.InputError{Path: path, Msg: "not a directory (a part of the path is a file)"}
	case err != nil:
		return nil, &target.InputError{Path: path, Msg: "cannot stat", Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, &target.InputError{Path: path, Msg: "is not a directory: the check writes as etcd's WAL does, in files it creates in a directory (etcd's --data-dir, or one on the same filesystem)"}
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, &target.InputError{Path: path, Msg: "cannot resolve the path", Err: err}
	}
	fd, err := unix.Open(resolved, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &target.InputError{Path: path, Msg: "cannot open the directory", Err: err}
	}
	d := &checkDir{path: path, resolved: resolved, fd: fd}
	if err := d.inspect(); err != nil {
		unix.Close(fd)
		return nil, err
	}
	d.prefix = fmt.Sprintf("ioprobe-check-etcd-%06x", rand.Uint32()&0xffffff)
	return d, nil
}

// inspect refuses what the check cannot measure or write safely, and
// names the filesystem and the device under it.
func (d *checkDir) inspect() error {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return &target.InputError{Path: d.path, Msg: "cannot stat the directory", Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return &target.InputError{Path: d.path, Msg: "was replaced by something that is not a directory"}
	}
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(d.fd, &sfs); err != nil {
		return &target.InputError{Path: d.path, Msg: "cannot statfs the directory", Err: err}
	}
	d.fsType = fsName(int64(sfs.Type))
	if d.fsType == "tmpfs" || d.fsType == "ramfs" {
		return target.RefuseInMemory(d.path,
			fmt.Sprintf("%s is on %s: files there live in memory and fdatasync touches no storage, so the check would time RAM", d.resolved, d.fsType))
	}
	if err := target.RefuseSharedDirectory(d.path, d.fd); err != nil {
		return err
	}
	d.dev = target.DeviceName(st.Dev)
	if d.dev != "" {
		d.flushDev = target.FlushDisk("", d.dev)
	}
	return nil
}

// fsName names the filesystems a check is likely to meet, by statfs magic.
func fsName(magic int64) string {
	switch magic {
	case unix.EXT4_SUPER_MAGIC:
		return "ext4" // ext2 and ext3 share the magic
	case unix.XFS_SUPER_MAGIC:
		return "xfs"
	case unix.BTRFS_SUPER_MAGIC:
		return "btrfs"
	case unix.TMPFS_MAGIC:
		return "tmpfs"
	case unix.RAMFS_MAGIC:
		return "ramfs"
	case unix.F2FS_SUPER_MAGIC:
		return "f2fs"
	case unix.NFS_SUPER_MAGIC:
		return "nfs"
	case unix.OVERLAYFS_SUPER_MAGIC:
		return "overlay"
	case unix.FUSE_SUPER_MAGIC:
		return "fuse"
	}
	return ""
}

// name is the name of one of this run's files.
func (d *checkDir) name(suffix string) string { return d.prefix + suffix }

// create makes a new file of this run, never following a symlink and
// never opening one that exists, and records it for removal.
func (d *checkDir) create(name string, flags int) (*ownFile, error) {
	fd, err := unix.Openat(d.fd, name, flags|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create %s in %s: %w", name, d.resolved, err)
	}
	f := &ownFile{name: name, fd: fd}
	d.mu.Lock()
	d.files = append(d.files, f)
	d.mu.Unlock()
	return f, nil
}

// rename moves f to a new name as etcd moves a prepared WAL segment into
// place, but never over an existing name (RENAME_NOREPLACE), and only
// while f's name is still f.
func (d *checkDir) rename(f *ownFile, to string) error {
	if !sameName(d.fd, f.name, f.fd) {
		return fmt.Errorf("%s in %s is no longer the file the check created: left it, stopped", f.name, d.resolved)
	}
	if err := unix.Renameat2(d.fd, f.name, d.fd, to, unix.RENAME_NOREPLACE); err != nil {
		return fmt.Errorf("rename %s to %s in %s: %w", f.name, to, d.resolved, err)
	}
	f.name = to
	return nil
}

// sameName reports whether name in dirfd is, right now, the file open as
// fd: same device and inode, the name looked at without following a
// symlink.
func sameName(dirfd int, name string, fd int) bool {
	var mine, there unix.Stat_t
	return unix.Fstat(fd, &mine) == nil &&
		unix.Fstatat(dirfd, name, &there, unix.AT_SYMLINK_NOFOLLOW) == nil &&
		mine.Dev == there.Dev && mine.Ino == there.Ino
}

// removeFiles removes every file created so far whose name is still that
// file and closes them; it returns the paths it left because something
// else had taken their names. The directory stays open.
func (d *checkDir) removeFiles() (left []string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, f := range d.files {
		if rerr := target.RemoveIfSame(d.fd, f.name, f.fd); rerr != nil {
			if errors.Is(rerr, target.ErrNotSameFile) {
				left = append(left, filepath.Join(d.resolved, f.name))
			} else if err == nil {
				err = rerr
			}
		}
		unix.Close(f.fd)
	}
	d.files = nil
	return left, err
}

// close closes the directory (after removeFiles).
func (d *checkDir) close() { unix.Close(d.fd) }

// fsyncDir syncs the directory, as etcd does after renaming a segment.
func (d *checkDir) fsyncDir() error { return unix.Fsync(d.fd) }

// freeBytes is the space available to this user in the directory.
func (d *checkDir) freeBytes() (int64, error) {
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(d.fd, &sfs); err != nil {
		return 0, err
	}
	return int64(sfs.Bavail) * int64(sfs.Bsize), nil
}
