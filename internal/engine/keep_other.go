//go:build !linux

package engine

// keepSectors: buffered runs are Linux-only (ioprobe runs targets on
// Linux only).
func keepSectors(fd int, buf []byte, off int64) {}
