package target

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// mount is one line of /proc/PID/mountinfo (proc(5)).
type mount struct {
	ID           int // unique on the machine, across mount namespaces (fdinfo's mnt_id)
	Major, Minor uint32
	Root         string
	MountPoint   string
	Options      string // this mount's: "rw,nodev,relatime"
	FSType       string
	Source       string
	SuperOptions string // the filesystem's: "rw,hidepid=invisible"
}

// parseMountInfo parses /proc/self/mountinfo. Paths are unescaped (\040 is
// a space); lines it cannot make sense of are errors, because a mount we
// fail to see is a device we might write to.
func parseMountInfo(r io.Reader) ([]mount, error) {
	var mounts []mount
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
		maj, min, err := parseMajMin(f[2])
		if err != nil {
			return nil, fmt.Errorf("mountinfo line %d: %w", line, err)
		}
		id, err := strconv.Atoi(f[0])
		if err != nil {
			return nil, fmt.Errorf("mountinfo line %d: bad mount id %q", line, f[0])
		}
		m := mount{
			ID:    id,
			Major: maj, Minor: min,
			Root:       unescapeOctal(f[3]),
			MountPoint: unescapeOctal(f[4]),
			Options:    f[5],
			FSType:     f[sep+1],
			Source:     unescapeOctal(f[sep+2]),
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

// parseMajMin parses "MAJOR:MINOR" as in mountinfo and sysfs dev files.
func parseMajMin(s string) (uint32, uint32, error) { return majMin(strings.TrimSpace(s), 10) }

// majMin parses "MAJOR:MINOR" with numbers in base.
func majMin(s string, base int) (uint32, uint32, error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, fmt.Errorf("bad major:minor %q", s)
	}
	maj, err1 := strconv.ParseUint(a, base, 32)
	min, err2 := strconv.ParseUint(b, base, 32)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("bad major:minor %q", s)
	}
	return uint32(maj), uint32(min), nil
}

// unescapeOctal undoes the kernel's \ooo escaping of space, tab, newline
// and backslash in mount paths.
func unescapeOctal(s string) string {
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

// parseSwaps returns the file names of active swap areas from /proc/swaps.
func parseSwaps(r io.Reader) ([]string, error) {
	var names []string
	sc := bufio.NewScanner(r)
	first := true
	for sc.Scan() {
		if first {
			first = false
			if strings.HasPrefix(sc.Text(), "Filename") {
				continue
			}
		}
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		names = append(names, unescapeOctal(f[0]))
	}
	return names, sc.Err()
}
