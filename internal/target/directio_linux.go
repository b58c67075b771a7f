package target

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/iobuf"
	"github.com/ioprobe/ioprobe/internal/verify"
)

// openDirect opens path with O_DIRECT and O_CLOEXEC added to flags,
// retrying on EINTR. It asks for O_NOATIME too, so that a read does not
// cost the kernel an access-time update (a measurable share of a fast
// device's per-read work), and drops it where the kernel refuses it (EPERM:
// only the owner of a file, or CAP_FOWNER, may ask).
func openDirect(path string, flags int, perm uint32) (int, error) {
	if flags&unix.O_CREAT == 0 {
		fd, err := openRetry(path, flags|unix.O_DIRECT|unix.O_CLOEXEC|unix.O_NOATIME, perm)
		if err != unix.EPERM {
			return fd, err
		}
	}
	return openRetry(path, flags|unix.O_DIRECT|unix.O_CLOEXEC, perm)
}

// openReadOnly opens an existing target for reading with O_DIRECT and
// stats it: the first step of opening a file or a device. A filesystem that
// refuses O_DIRECT is a refusal; any other failure is bad input.
func openReadOnly(path, resolved string) (int, unix.Stat_t, error) {
	var st unix.Stat_t
	fd, err := openDirect(resolved, unix.O_RDONLY, 0)
	if errors.Is(err, unix.EINVAL) {
		return -1, st, noDirectIO(path, resolved)
	}
	if err != nil {
		return -1, st, &InputError{Path: path, Msg: "cannot open", Err: err}
	}
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, st, fmt.Errorf("target %s: fstat: %w", path, err)
	}
	return fd, st, nil
}

func openRetry(path string, flags int, perm uint32) (int, error) {
	for {
		fd, err := unix.Open(path, flags, perm)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// dioAlign is what statx says about direct I/O on an open file.
type dioAlign struct {
	known  bool  // the kernel reported STATX_DIOALIGN
	offset int64 // dio_offset_align; 0 with known: no direct I/O on this file
	mem    int64 // dio_mem_align
}

func statxFD(fd int) (unix.Statx_t, dioAlign, error) {
	var st unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_BASIC_STATS|unix.STATX_DIOALIGN, &st); err != nil {
		return st, dioAlign{}, err
	}
	d := dioAlign{known: st.Mask&unix.STATX_DIOALIGN != 0}
	if d.known {
		d.offset, d.mem = int64(st.Dio_offset_align), int64(st.Dio_mem_align)
	}
	return st, d, nil
}

// blkSize64 is the BLKGETSIZE64 ioctl: the device size in bytes.
func blkSize64(fd int) (int64, error) {
	var size uint64
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(unix.BLKGETSIZE64), uintptr(unsafe.Pointer(&size)))
	if errno != 0 {
		return 0, errno
	}
	return int64(size), nil
}

// readDirect reads n bytes at off through O_DIRECT fd into anonymous mmap'd
// memory (never a Go slice: on some devices a misaligned buffer is accepted
// and the kernel writes outside it) and returns a copy.
// off and n must be multiples of the device's logical block size.
func readDirect(fd int, off int64, n int) ([]byte, error) {
	page := unix.Getpagesize()
	mem, err := unix.Mmap(-1, 0, (n+page-1)/page*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("mmap %d bytes: %w", n, err)
	}
	defer unix.Munmap(mem)
	for done := 0; done < n; {
		got, err := unix.Pread(fd, mem[done:n], off+int64(done))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %d bytes at %d: %w", n-done, off+int64(done), err)
		}
		if got == 0 {
			return nil, fmt.Errorf("read at %d: unexpected end of device", off+int64(done))
		}
		done += got
	}
	return append([]byte(nil), mem[:n]...), nil
}

// fillChunk is the size of each O_DIRECT write that fills a new file.
const fillChunk = 4 << 20

// A fill checks for a cancel (a signal) between its writes, which the
// kernel does not interrupt: on storage slow enough that one write takes
// longer than fillSlice (a crawling NFS or FUSE server), the next ones are
// half as large, down to minFillWrite, so that a signal is not held for
// the seconds a 4 MiB write takes there; one four times quicker doubles
// them again, up to the chunk.
const (
	fillSlice    = 250 * time.Millisecond
	minFillWrite = 128 << 10
)

// fillDirect writes incompressible pseudo-random data, every sector in
// --verify's self-describing format (internal/verify) under key, over [from, to) of
// O_DIRECT fd, fillChunk bytes at a time (in smaller writes on storage
// that crawls, see fillSlice), from mmap'd memory. Every chunk
// gets its own stream, so no two blocks of the file are alike and neither
// compression nor deduplication flatters later reads. from and to must be
// multiples of the file's direct-I/O alignment. hook (a cancel, and the
// check that the file still has its name) may fail the fill before the
// chunk, or the part of it, at off is written.
func fillDirect(fd int, from, to int64, key, seed uint64, progress func(done, total int64), hook func(off int64) error) error {
	if to <= from {
		return nil
	}
	chunk := int64(fillChunk)
	if to-from < chunk {
		chunk = to - from
	}
	buf, err := iobuf.New(1, int(chunk), seed)
	if err != nil {
		return err
	}
	defer buf.Close()
	mem := buf.Slot(0, chunk)
	total := to - from
	step := chunk // bytes per write (fillSlice)
	for off := from; off < to; {
		n := min(chunk, to-off)
		p := mem[:n]
		iobuf.FillRandom(p, iobuf.Mix64(seed^uint64(off)))
		verify.Format(p, off, key, seed, 0)
		if hook != nil {
			if err := hook(off); err != nil {
				return err
			}
		}
		for w := int64(0); w < n; {
			if w > 0 && hook != nil {
				if err := hook(off + w); err != nil {
					return err
				}
			}
			t0 := time.Now()
			got, err := unix.Pwrite(fd, p[w:min(w+step, n)], off+w)
			switch took := time.Since(t0); {
			case took > fillSlice && step > minFillWrite:
				// A multiple of 128 KiB stays one of the alignment.
				step = max(step/2/minFillWrite*minFillWrite, minFillWrite)
			case took < fillSlice/4 && step < chunk:
				step = min(step*2, chunk) // a moment of load passed
			}
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return fmt.Errorf("write %d bytes at %d: %w", n-w, off+w, err)
			}
			if got == 0 {
				return fmt.Errorf("write at %d: no progress", off+w)
			}
			w += int64(got)
		}
		off += n
		if progress != nil {
			progress(off-from, total)
		}
	}
	return nil
}
