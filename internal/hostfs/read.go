package hostfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Bounds of what ioprobe reads of the host. The kernel writes these files;
// a bound larger than any real one still keeps a broken or hostile file
// (a FUSE filesystem mounted over /proc in a container, a fixture gone
// wrong) from costing more than that.
const (
	// LimitAttr is a sysfs attribute: the kernel's show functions write at
	// most a page.
	LimitAttr = 4096
	// LimitTable is a table of /proc: mountinfo (a Kubernetes node with
	// thousands of mounts has a few hundred KiB), stat, diskstats, locks,
	// cpuinfo.
	LimitTable = 16 << 20
	// LimitSmall is a /proc file of one process or one descriptor
	// (fdinfo, comm, cmdline).
	LimitSmall = 64 << 10
	// LimitEntries is the most entries a directory listing reads (/proc
	// with every pid, /sys/block with every device).
	LimitEntries = 1 << 20
)

// TooLargeError is a file larger than the bound it is read with.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %d bytes, the most ioprobe reads of it", e.Path, e.Limit)
}

// ReadFile reads the file at path whole, refusing one larger than limit
// bytes (a *TooLargeError). Files of /proc and /sys say they are empty
// (st_size 0) and are read until EOF, so the bound is on what is read.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAllBounded(f, path, limit)
}

func readAllBounded(r io.Reader, path string, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	return b, nil
}

// ReadText is ReadFile trimmed of surrounding white space, for the
// one-value files of sysfs and /proc/sys.
func ReadText(path string, limit int64) (string, error) {
	b, err := ReadFile(path, limit)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// ReadDirNames lists the names in directory path, at most LimitEntries of
// them (more is an error naming the directory).
func ReadDirNames(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var names []string
	for {
		batch, err := f.Readdirnames(4096)
		names = append(names, batch...)
		if len(names) > LimitEntries {
			return nil, fmt.Errorf("%s has more than %d entries, the most ioprobe reads", path, LimitEntries)
		}
		if errors.Is(err, io.EOF) {
			return names, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
