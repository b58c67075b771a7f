package engine

import (
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/verify"
)

// keepSectors reads into buf, a write of len(buf) bytes at off of the
// target open as fd, what the target holds where verify.Keep says the
// write must leave it as it is: the parts of the sectors at its ends
// that it covers without their whole header (a buffered write of an odd
// size). Only a write that is not whole sectors reads, at most twice and
// at most 512 bytes each, from the page cache the write goes through
// anyway (the kernel reads a partly written page in before it copies).
// A read that fails or comes up short leaves Mark's bytes: the sector may
// then be torn, and the next run's ownership check refuses the file
// rather than trust it.
func keepSectors(fd int, buf []byte, off int64) {
	ranges, n := verify.Keep(off, len(buf))
	for _, r := range ranges[:n] {
		var old [verify.SectorSize]byte
		p := old[:r[1]-r[0]]
		for done := 0; done < len(p); {
			got, err := unix.Pread(fd, p[done:], r[0]+int64(done))
			if err == unix.EINTR {
				continue
			}
			if err != nil || got == 0 {
				p = nil
				break
			}
			done += got
		}
		if p != nil {
			copy(buf[r[0]-off:r[1]-off], p)
		}
	}
}
