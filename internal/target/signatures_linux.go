package target

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// scanDevice looks for signatures on the device open as O_DIRECT fd,
// reading only what the probes ask for, in aligned chunks.
func scanDevice(fd int, size, lbs int64) ([]Signature, error) {
	return scanSignatures(size, lbs, func(off int64, n int) ([]byte, error) { return readDirect(fd, off, n) })
}

// scanFileTarget is scanDevice for a file open as O_DIRECT fd, whose size need
// not be a multiple of lbs: what lies past its end reads as zeros.
func scanFileTarget(fd int, size, lbs int64) ([]Signature, error) {
	whole := size / lbs * lbs
	return scanSignatures(size, lbs, func(off int64, n int) ([]byte, error) {
		if off+int64(n) <= whole {
			return readDirect(fd, off, n)
		}
		var p []byte
		if head := whole - off; head > 0 {
			var err error
			if p, err = readDirect(fd, off, int(head)); err != nil {
				return nil, err
			}
		}
		last, err := readLastBlock(fd, whole, lbs)
		if err != nil {
			return nil, err
		}
		return append(p, last...), nil
	})
}

// readLastBlock reads the partial block at off (the file's last), padded
// with zeros to lbs bytes, through a page-aligned buffer as O_DIRECT needs.
func readLastBlock(fd int, off, lbs int64) ([]byte, error) {
	page := int64(unix.Getpagesize())
	mem, err := unix.Mmap(-1, 0, int((lbs+page-1)/page*page), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("mmap %d bytes: %w", lbs, err)
	}
	defer unix.Munmap(mem)
	for {
		_, err := unix.Pread(fd, mem[:lbs], off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %d bytes at %d: %w", lbs, off, err)
		}
		return append([]byte(nil), mem[:lbs]...), nil
	}
}

// refuseFileSignatures refuses writes to an existing file that holds a
// filesystem, a partition table or any other signature: an image is
// somebody's data, --allow-destructive or not.
func refuseFileSignatures(path string, fd int, size, lbs int64) error {
	sigs, err := scanFileTarget(fd, size, lbs)
	if err != nil {
		return refusal(path, true, because(RefuseSignature, "cannot read it to look for filesystems and labels: "+err.Error()))
	}
	if len(sigs) > 0 {
		var fs []finding
		for _, r := range signatureReasons(sigs) {
			fs = append(fs, because(RefuseSignature, r))
		}
		return refusal(path, true, fs...)
	}
	return nil
}
