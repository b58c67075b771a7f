package safefile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/target"
)

// Read reads the regular file at path (a symlink to one is followed),
// refusing anything else and any file larger than k.Max. The open never
// blocks: a FIFO is opened O_NONBLOCK and refused by fstat before any read.
func (k Kind) Read(path string) ([]byte, error) {
	f, err := k.open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, &Error{What: k.What, Path: path, Msg: "cannot be examined", Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, &Error{What: k.What, Path: path, Msg: fmt.Sprintf("is %s, not a regular file: ioprobe reads a %s only from a regular file", target.FileType(st.Mode), k.What)}
	}
	if st.Size > k.Max {
		return nil, k.tooLarge(path)
	}
	// Sized once from fstat (no doubling of a large document); the file
	// may grow while it is read: read one byte past the bound.
	buf := bytes.NewBuffer(make([]byte, 0, st.Size+1))
	if _, err := buf.ReadFrom(io.LimitReader(f, k.Max+1)); err != nil {
		return nil, &Error{What: k.What, Path: path, Msg: "cannot be read", Err: err}
	}
	if int64(buf.Len()) > k.Max {
		return nil, k.tooLarge(path)
	}
	return buf.Bytes(), nil
}

func (k Kind) open(path string) (*os.File, error) {
	for {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &Error{What: k.What, Path: path, Msg: "cannot be opened", Err: plain(err)}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}

// plain turns an errno into the words os would use ("no such file or
// directory"), without repeating the path.
func plain(err error) error {
	var errno unix.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}
