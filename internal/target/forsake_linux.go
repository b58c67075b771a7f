package target

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// A run whose writes are not ioprobe's self-describing sectors (a fio job's
// buffer contents: compressible, repeated or patterned data, written as
// fio writes it; Options.ForeignContent) leaves a file that nothing shows
// to be ioprobe's. Before its first write to a file ioprobe owns, the
// marker says so (forsakenMarker), so that a run killed midway leaves a
// file the next run refuses to write without --allow-destructive, naming
// why. Only the process that wrote it may write it again without the
// flag: it remembers each such file as it left it (its identity, size
// and times) and takes it back while nothing else has changed it (a fio
// job file whose jobs write one file in turn).

// forsakenMarker is the xattr value of a file ioprobe wrote with content
// not its own: no marker of ownership, only the reason it has none.
const forsakenMarker = "ioprobe.target/forsaken a fio job wrote it with its buffer contents, not ioprobe's self-describing sectors"

// forsakenWhy is the refusal's reason for a file that carries it.
const forsakenWhy = "ioprobe wrote it with a fio job's buffer contents (compressible, repeated or patterned data, as fio writes it) rather than its self-describing sectors, so nothing shows that it still holds only what ioprobe wrote (delete it, and ioprobe makes it anew)"

// isForsaken says whether an xattr value is forsakenMarker.
func isForsaken(b []byte) bool {
	return strings.HasPrefix(string(b), "ioprobe.target/forsaken")
}

// forsake marks the file open as fd as written with foreign content,
// replacing its marker; where the filesystem keeps no xattrs, its marker
// cannot be there either.
func forsakeMarker(fd int) error {
	err := unix.Fsetxattr(fd, markerXattr, []byte(forsakenMarker), 0)
	if err != nil && !errors.Is(err, unix.ENOTSUP) {
		// A marker that cannot be replaced must not stay.
		if rerr := unix.Fremovexattr(fd, markerXattr); rerr != nil && !errors.Is(rerr, unix.ENODATA) {
			return fmt.Errorf("mark as written with foreign content (xattr %s): %w", markerXattr, err)
		}
	}
	return nil
}

// leftFile is a file this process wrote with foreign content, as it left
// it.
type leftFile struct {
	dev   uint64
	id    identity
	times fileTimes
}

// maxLeft bounds what a long-lived process (the daemon) remembers.
const maxLeft = 4096

var left struct {
	sync.Mutex
	files []leftFile
}

// fileStamp is the file open as fd as leftFile records it.
func fileStamp(fd int) (leftFile, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return leftFile{}, err
	}
	id, err := identityOf(fd)
	if err != nil {
		return leftFile{}, err
	}
	times, err := timesOf(fd)
	if err != nil {
		return leftFile{}, err
	}
	return leftFile{dev: st.Dev, id: id, times: times}, nil
}

// rememberLeft records the file open as fd as this process leaves it.
func rememberLeft(fd int) {
	s, err := fileStamp(fd)
	if err != nil {
		return
	}
	left.Lock()
	defer left.Unlock()
	left.files = append(dropLeft(left.files, s), s)
	if len(left.files) > maxLeft {
		left.files = left.files[len(left.files)-maxLeft:]
	}
}

// dropLeft removes from files any record of the file s is.
func dropLeft(files []leftFile, s leftFile) []leftFile {
	out := files[:0]
	for _, f := range files {
		if f.dev != s.dev || f.id != s.id {
			out = append(out, f)
		}
	}
	return out
}

// leftByThisProcess says whether the file open as fd is one this process
// wrote with foreign content and left, unchanged since: its identity,
// size and times as it left them, to the nanosecond.
func leftByThisProcess(fd int) bool {
	s, err := fileStamp(fd)
	if err != nil {
		return false
	}
	left.Lock()
	defer left.Unlock()
	for _, f := range left.files {
		if f == s {
			return true
		}
	}
	return false
}
