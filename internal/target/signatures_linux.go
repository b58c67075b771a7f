package target

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/blkid"
	"github.com/ioprobe/ioprobe/internal/hostfs"
)

// scanDevice looks for signatures on the block device open as O_DIRECT
// fd, of logical block lbs, reading only what the probes ask for, in
// aligned chunks: every round of blkid.Scan.
func scanDevice(fd int, size, lbs int64) ([]Signature, error) {
	return scanDeviceWith(fd, size, lbs, nil, blkid.Scan)
}

// scanDeviceWith is scanDevice running scan, adding the reads it makes to
// c (if set).
func scanDeviceWith(fd int, size, lbs int64, c *ReadCount, scan blkidScan) ([]Signature, error) {
	return scanSignaturesWith(size, lbs, lbs, func(off int64, n int) ([]byte, error) { return c.add(readDirect(fd, off, n)) }, scan)
}

// scanFileTarget is scanDevice for a regular file open as O_DIRECT fd,
// read in lbs-aligned chunks (its direct-I/O alignment) and probed with
// 512-byte sectors, as libblkid probes a file; its size need not be a
// multiple of lbs: what lies past its end reads as zeros.
func scanFileTarget(fd int, size, lbs int64) ([]Signature, error) {
	return scanFileWith(fd, size, lbs, nil, blkid.Scan)
}

// scanFileWith is scanFileTarget running scan, adding the reads it makes
// to c (if set).
func scanFileWith(fd int, size, lbs int64, c *ReadCount, scan blkidScan) ([]Signature, error) {
	whole := size / lbs * lbs
	return scanSignaturesWith(size, lbs, fileSectorSize, func(off int64, n int) ([]byte, error) {
		if off+int64(n) <= whole {
			return c.add(readDirect(fd, off, n))
		}
		var p []byte
		if head := whole - off; head > 0 {
			var err error
			if p, err = c.add(readDirect(fd, off, int(head))); err != nil {
				return nil, err
			}
		}
		last, err := c.add(readLastBlock(fd, whole, lbs))
		if err != nil {
			return nil, err
		}
		return append(p, last...), nil
	}, scan)
}

// add counts one read of p (nil c: nothing).
func (c *ReadCount) add(p []byte, err error) ([]byte, error) {
	if c != nil && err == nil {
		c.Ops++
		c.Bytes += uint64(len(p))
		if c.Each != nil {
			c.Each(len(p))
		}
	}
	return p, err
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

// fileSectorSize is the sector size libblkid probes a regular file with
// (its DEFAULT_SECTOR_SIZE: BLKSSZGET is for block devices only).
const fileSectorSize = 512

// refuseForeignFileData refuses, whatever the flags, writes to an existing
// file that is active swap or holds a signature, ioprobe's own included
// (keys: the keys its sectors may be stamped under, see
// refuseFileSignatures): the refusals --allow-destructive cannot lift,
// said before the one it can (foreign-file), so the flag is never offered
// for nothing. A file ioprobe owns (owned: its marker holds) is looked at
// in the primary places only: every byte of it is ioprobe's, or the marker
// would not hold, so no backup copy of somebody's metadata can lie there
// without its primary; any other file gets every round of the search.
func (e env) refuseForeignFileData(path string, fd int, st *unix.Stat_t, size, lbs int64, owned bool, keys ...uint64) error {
	swaps, _ := readSwapDevs(e.swaps) // absent without CONFIG_SWAP: nothing is swap then
	ms, _ := e.mountTable()
	for _, name := range swaps {
		if !e.scope.mayHold(name, ms) {
			continue // on another filesystem: not this file, and not asked
		}
		sst, err := e.host().Stat(e.ctx(), name, "swap file "+name)
		if errors.Is(err, hostfs.ErrNoAnswer) {
			return refusal(path, true, because(RefuseUnverifiable, "cannot tell whether it is active swap: "+err.Error()))
		}
		if err == nil && sst.Mode&unix.S_IFMT == unix.S_IFREG && sst.Dev == st.Dev && sst.Ino == st.Ino {
			return refusal(path, true, because(RefuseSwap, fmt.Sprintf("it is an active swap file (%s in /proc/swaps)", name)))
		}
	}
	scan := ownKept(fd, lbs, keys...)
	if owned {
		scan = blkid.ScanPrimary
	}
	return refuseFileSignatures(path, fd, size, lbs, scan, keys...)
}

// refuseFileSignatures refuses writes to an existing file that holds a
// filesystem, a partition table or any other signature scan finds: an
// image is somebody's data, --allow-destructive or not. A magic that lies
// in one of ioprobe's own sectors under one of keys is ioprobe's random
// data, not a signature (dropOwnSectors).
func refuseFileSignatures(path string, fd int, size, lbs int64, scan blkidScan, keys ...uint64) error {
	sigs, err := scanFileWith(fd, size, lbs, nil, scan)
	if err == nil {
		sigs = dropOwnSectors(fd, sigs, lbs, keys...)
	}
	if fs := signatureFindings(sigs, err); len(fs) > 0 {
		return refusal(path, true, fs...)
	}
	return nil
}
