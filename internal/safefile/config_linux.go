package safefile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

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
// directory on a read-only mount (a Kubernetes ConfigMap or Secret
// volume) can be changed by nobody and passes.
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
	var sfs unix.Statfs_t
	if unix.Statfs(path, &sfs) == nil && sfs.Flags&unix.ST_RDONLY != 0 {
		return "" // a read-only mount: nobody changes it
	}
	if !dir {
		st.Mode &^= unix.S_ISVTX // a file's sticky bit protects nothing
	}
	return target.OthersCanWrite(st, func(uint32) bool { return false })
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
