//go:build !linux

package safefile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Out is an output file being written: a new file in path's directory
// until Commit renames it over path. (On Linux the directory is held by
// descriptor; here it is named.)
type Out struct {
	path string
	f    *os.File
}

// CheckOut refuses an output path whose directory does not exist or whose
// name is anything but absent or a regular file (never followed), or is
// one of the files the command uses.
func CheckOut(path string, uses ...InUse) error {
	if err := checkOut(path); err != nil {
		return err
	}
	real := path
	if abs, err := filepath.Abs(path); err == nil {
		if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
			real = filepath.Join(dir, filepath.Base(abs))
		}
	}
	return refuseInUse(path, real, uses)
}

func checkOut(path string) error {
	if strings.HasSuffix(path, "/") {
		return &Error{What: "--out", Path: path, Msg: "names a directory: --out is the file to write"}
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return &Error{What: "--out", Path: path, Msg: "cannot be written: its directory " + filepath.Dir(path) + " does not exist"}
	}
	st, err := os.Lstat(path)
	if err != nil {
		return nil
	}
	if !st.Mode().IsRegular() {
		return &Error{What: "--out", Path: path, Msg: fmt.Sprintf("is not a regular file (%s): ioprobe writes its output only to a regular file and never follows a link", st.Mode().Type())}
	}
	return nil
}

// Create starts writing the output file path.
func Create(path string) (*Out, error) {
	if err := checkOut(path); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.ioprobe-tmp")
	if err != nil {
		return nil, &Error{What: "--out", Path: path, Msg: "cannot be created", Err: err}
	}
	return &Out{path: path, f: f}, nil
}

// File is where the document is written.
func (o *Out) File() *os.File { return o.f }

// Commit renames the written document over path, unless something other
// than a regular file took its name meanwhile.
func (o *Out) Commit() error {
	tmp := o.f.Name()
	err := o.f.Sync()
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = CheckOut(o.path)
	}
	if err == nil {
		err = os.Rename(tmp, o.path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// Abort drops a document not committed.
func (o *Out) Abort() {
	o.f.Close()
	os.Remove(o.f.Name())
}
