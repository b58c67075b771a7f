//go:build !linux

package safefile

import (
	"fmt"
	"io"
	"os"
)

// Read reads the regular file at path, refusing anything else and any
// file larger than k.Max. (On Linux the open cannot block on a FIFO;
// here the type is checked by name first.)
func (k Kind) Read(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &Error{What: k.What, Path: path, Msg: "cannot be opened", Err: err}
	}
	if !st.Mode().IsRegular() {
		return nil, &Error{What: k.What, Path: path, Msg: fmt.Sprintf("is not a regular file (%s): ioprobe reads a %s only from a regular file", st.Mode().Type(), k.What)}
	}
	if st.Size() > k.Max {
		return nil, k.tooLarge(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{What: k.What, Path: path, Msg: "cannot be opened", Err: err}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, k.Max+1))
	if err != nil {
		return nil, &Error{What: k.What, Path: path, Msg: "cannot be read", Err: err}
	}
	if int64(len(data)) > k.Max {
		return nil, k.tooLarge(path)
	}
	return data, nil
}
