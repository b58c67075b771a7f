package safefile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/hostfs"
	"github.com/ioprobe/ioprobe/internal/target"
)

// maxLinks bounds the symlinks followed while a config's path is walked
// (the kernel's own limit is 40).
const maxLinks = 40

// CheckConfig refuses a config file that a user other than this one or
// root could change: the file itself writable by its group or everyone
// or owned by another user, or any directory in which its path is looked
// up (each directory above it, and above every symlink on the way)
// writable by its group or everyone without the sticky bit, or owned by
// another user. That is the targets' shared-directory rule, except that a
// group counts as others even when this user is in it. A file or
// directory that nobody can change passes (readOnlyForAll: a Kubernetes
// ConfigMap or Secret volume).
func CheckConfig(what, path string) error {
	dirs, final, err := lookupDirs(path)
	if err != nil {
		return &Error{What: what, Path: path, Msg: "cannot be resolved", Err: err}
	}
	for _, d := range dirs {
		if why := othersCanChange(d, true); why != "" {
			return refuseConfig(what, path, "its directory "+d+" "+why)
		}
	}
	if why := othersCanChange(final, false); why != "" {
		if final != path {
			return refuseConfig(what, path, final+" "+why)
		}
		return refuseConfig(what, path, why)
	}
	return nil
}

func refuseConfig(what, path, why string) error {
	return &Error{What: what, Path: path, Msg: fmt.Sprintf("is refused: %s, who could change what this daemon runs and writes; make it writable only by root or the daemon's user (chmod go-w, chown) (rule %s)", why, target.RefuseSharedDir)}
}

// othersCanChange applies the rule to one directory or file.
func othersCanChange(path string, dir bool) string {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return "cannot be examined (" + plain(err).Error() + ")"
	}
	if readOnlyForAll(path) {
		return "" // nobody changes it
	}
	if !dir {
		st.Mode &^= unix.S_ISVTX // a file's sticky bit protects nothing
	}
	return target.OthersCanWrite(st, func(uint32) bool { return false })
}

// readOnlyForAll says whether the file or directory at path (resolved)
// can be changed by nobody: its filesystem is read-only, or its mount is
// and no mount of the same filesystem in this mount namespace shows it,
// or a directory above it, writable. A bind mount made read-only
// (mount --bind, then remount,bind,ro) of a directory others can write
// leaves that directory writable through its first name, and so does a
// read-only mount of a filesystem also mounted read-write elsewhere; a
// Kubernetes ConfigMap volume is read-only, and the container's other
// mounts of the node's filesystem (/etc/hosts, the termination log) show
// other files. When the mount table cannot be read, the mount's flag
// alone does not pass (fail closed: the owner and mode rule applies).
func readOnlyForAll(path string) bool {
	var sfs unix.Statfs_t
	if unix.Statfs(path, &sfs) != nil || sfs.Flags&unix.ST_RDONLY == 0 {
		return false
	}
	var st unix.Statx_t
	if unix.Statx(unix.AT_FDCWD, path, 0, unix.STATX_MNT_ID, &st) != nil || st.Mask&unix.STATX_MNT_ID == 0 {
		return false
	}
	ms, err := hostfs.ReadMountInfo("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	m, ok := ms.ByID(int(st.Mnt_id))
	if !ok {
		return false
	}
	if slices.Contains(strings.Split(m.SuperOptions, ","), "ro") {
		return true // the filesystem itself: every mount of it is read-only
	}
	rel, err := filepath.Rel(m.MountPoint, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return false
	}
	inFS := filepath.Join(m.Root, rel) // its path in its filesystem
	for _, o := range ms {
		if o.DevNum != m.DevNum || o.HasOption("ro") {
			continue
		}
		if root := filepath.Clean(o.Root); root == "/" || inFS == root || strings.HasPrefix(inFS, root+"/") {
			return false // writable through o.MountPoint
		}
	}
	return true
}

// lookupDirs walks path as the kernel does, component by component,
// following symlinks, and returns every directory a name was looked up
// in (resolved, in order, each once) and where the path leads.
func lookupDirs(path string) ([]string, string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, "", err
	}
	var dirs []string
	seen := map[string]bool{}
	dest := "/"
	rest := strings.Split(strings.TrimPrefix(abs, "/"), "/")
	links := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			dest = filepath.Dir(dest)
			continue
		}
		if !seen[dest] {
			seen[dest] = true
			dirs = append(dirs, dest)
		}
		next := filepath.Join(dest, c)
		fi, err := os.Lstat(next)
		if err != nil {
			return nil, "", err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			dest = next
			continue
		}
		if links++; links > maxLinks {
			return nil, "", errors.New("too many symbolic links")
		}
		to, err := os.Readlink(next)
		if err != nil {
			return nil, "", err
		}
		if strings.HasPrefix(to, "/") {
			dest = "/"
		}
		rest = append(strings.Split(to, "/"), rest...)
	}
	return dirs, dest, nil
}
