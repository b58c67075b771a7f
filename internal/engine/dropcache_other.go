//go:build !linux

package engine

import "errors"

// DropCache is Linux-only (posix_fadvise, BLKFLSBUF).
func DropCache(fd int) error { return errors.ErrUnsupported }

// DropCache counts the failure: ioprobe runs targets on Linux only.
func (w *Worker) DropCache(fd int) { w.dropFailures.Add(1) }
