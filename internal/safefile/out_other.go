//go:build !linux

package safefile

import (
	"errors"
	"os"
)

var errUnsupported = errors.New("writing output files is supported on Linux only")

// Out is an output file being written (Linux only).
type Out struct{ f *os.File }

// CheckOut refuses every output path on this system.
func CheckOut(path string) error {
	return &Error{What: "--out", Path: path, Msg: "cannot be written here", Err: errUnsupported}
}

// Create refuses every output path on this system.
func Create(path string) (*Out, error) { return nil, CheckOut(path) }

// File is where the document is written.
func (o *Out) File() *os.File { return o.f }

// Commit is never reached on this system.
func (o *Out) Commit() error { return errUnsupported }

// Abort is never reached on this system.
func (o *Out) Abort() {}
