package hostfs

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Mount is one line of /proc/PID/mountinfo (proc(5)).
type Mount struct {
	ID, Parent int // ID: unique on the machine, across mount namespaces (fdinfo's mnt_id)
	// DevNum is the filesystem's device (st_dev of its files, but for
	// btrfs subvolumes): m.Major, m.Minor.
	DevNum
	Root         string // the directory of the filesystem mounted here
	MountPoint   string
	Options      string // per-mount options: rw,nosuid,nodev,...
	FSType       string
	Source       string
	SuperOptions string
}

// HasOption says whether the per-mount options include o ("nodev").
func (m Mount) HasOption(o string) bool {
	return slices.Contains(strings.Split(m.Options, ","), o)
}

// String names the mount for a message: "the fuse mount /tmp/x (StallFS)".
func (m Mount) String() string {
	s := "the " + m.FSType + " mount " + m.MountPoint
	if m.Source != "" && m.Source != m.FSType && m.Source != "none" {
		s += " (" + m.Source + ")"
	}
	return s
}

// Mounts is a mount table in the kernel's order (a later mount at the
// same mount point is on top).
type Mounts []Mount

// ReadMountInfo reads a mountinfo file (/proc/self/mountinfo), bounded by
// LimitTable.
func ReadMountInfo(path string) (Mounts, error) {
	b, err := ReadFile(path, LimitTable)
	if err != nil {
		return nil, err
	}
	return ParseMountInfo(bytes.NewReader(b))
}

// Mounts is this process's mount table.
func (h *Host) Mounts() (Mounts, error) {
	return ReadMountInfo(h.ProcPath("self", "mountinfo"))
}

// ParseMountInfo parses a mountinfo table. Paths are unescaped (\040 is a
// space); a line it cannot make sense of is an error, because a mount it
// fails to see is a device it might write to.
func ParseMountInfo(r io.Reader) (Mounts, error) {
	var mounts Mounts
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.TrimSpace(text) == "" {
			continue
		}
		f := strings.Fields(text)
		// id parent maj:min root mountpoint options [optional...] - fstype source superoptions
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if len(f) < 6 || sep < 0 || sep+2 >= len(f) {
			return nil, fmt.Errorf("mountinfo line %d: malformed: %q", line, text)
		}
		dev, err := ParseDevNum(f[2])
		if err != nil {
			return nil, fmt.Errorf("mountinfo line %d: %w", line, err)
		}
		id, err1 := strconv.Atoi(f[0])
		parent, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("mountinfo line %d: bad mount ids %q %q", line, f[0], f[1])
		}
		m := Mount{ID: id, Parent: parent, DevNum: dev,
			Root:       UnescapeOctal(f[3]),
			MountPoint: UnescapeOctal(f[4]),
			Options:    f[5],
			FSType:     f[sep+1],
			Source:     UnescapeOctal(f[sep+2]),
		}
		if sep+3 < len(f) {
			m.SuperOptions = f[sep+3]
		}
		mounts = append(mounts, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("mountinfo: %w", err)
	}
	return mounts, nil
}

// Under is the mounts a file at the absolute path lies on, as far as its
// name tells: those mounted at the longest mount point that is path or a
// directory above it, the top one first (several when mounts are stacked
// at one mount point: the file may have been opened before the top one
// was mounted). Nil for a path that is not absolute.
//
// A name is what the kernel gives (a loop device's backing_file): it is
// the path from this process's root when the file's mount is reachable
// from it, and from the root of a mount namespace or a detached mount
// when not ("/img" once its FUSE mount was unmounted lazily); the mount
// found for such a name is a guess, which is why a caller asks the
// kernel about a file whose mount is the target's.
func (ms Mounts) Under(path string) []Mount {
	if !filepath.IsAbs(path) {
		return nil
	}
	path = filepath.Clean(path)
	best := -1
	var out []Mount
	for _, m := range ms {
		mp := filepath.Clean(m.MountPoint)
		if !within(path, mp) {
			continue
		}
		switch {
		case len(mp) > best:
			best = len(mp)
			out = append(out[:0], m)
		case len(mp) == best:
			out = append(out, m)
		}
	}
	slices.Reverse(out)
	return out
}

// within says whether path is dir or lies under it.
func within(path, dir string) bool {
	if dir == "/" {
		return true
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// ByID is the mount with mount id id (statx's stx_mnt_id).
func (ms Mounts) ByID(id int) (Mount, bool) {
	for _, m := range ms {
		if m.ID == id {
			return m, true
		}
	}
	return Mount{}, false
}

// UnescapeOctal undoes the kernel's \ooo escaping of space, tab, newline
// and backslash in mount paths.
func UnescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
