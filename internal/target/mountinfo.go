package target

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ioprobe/ioprobe/internal/hostfs"
)

// mount is one line of /proc/PID/mountinfo (proc(5)), as internal/hostfs
// reads it: ID is unique on the machine, across mount namespaces
// (fdinfo's mnt_id); Major and Minor are the filesystem's device.
type mount = hostfs.Mount

// parseMountInfo parses a mountinfo table (hostfs.ParseMountInfo): a line
// it cannot make sense of is an error, because a mount we fail to see is
// a device we might write to.
func parseMountInfo(r io.Reader) ([]mount, error) { return hostfs.ParseMountInfo(r) }

// readMounts reads a mountinfo file, bounded (hostfs.ReadMountInfo).
func readMounts(path string) ([]mount, error) { return hostfs.ReadMountInfo(path) }

// majMin parses "MAJOR:MINOR" with numbers in base (16: /proc/locks);
// mountinfo's and sysfs's decimal ones are hostfs.ParseDevNum's.
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
func unescapeOctal(s string) string { return hostfs.UnescapeOctal(s) }

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
