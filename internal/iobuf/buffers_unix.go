//go:build unix

package iobuf

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Buffers is page-aligned memory outside the Go heap (an anonymous mmap),
// cut into equal slots. O_DIRECT I/O only ever sees this memory: the
// garbage collector never moves it, and a device that writes past a
// misaligned buffer cannot scribble over Go objects.
type Buffers struct {
	mem      []byte
	slotSize int
	slots    int
}

// New maps slots buffers of slotSize bytes each (rounded up to whole
// pages) and fills them with incompressible pseudo-random bytes from seed, so
// that writes are not flattered by compressing or deduplicating storage.
func New(slots, slotSize int, seed uint64) (*Buffers, error) {
	if slots <= 0 || slotSize <= 0 {
		return nil, fmt.Errorf("buffers: bad geometry %d x %d", slots, slotSize)
	}
	page := unix.Getpagesize()
	size := (slotSize + page - 1) / page * page
	mem, err := unix.Mmap(-1, 0, slots*size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("buffers: mmap %d bytes: %w", slots*size, err)
	}
	// Transparent huge pages where the kernel has them (madvise mode): a
	// 1 MiB write's buffer is then one page, not 256, for the TLB when its
	// sectors are stamped and for the kernel when it pins the buffer for
	// O_DIRECT. Advice only: without it the buffers work the same.
	_ = unix.Madvise(mem, unix.MADV_HUGEPAGE)
	FillRandom(mem, seed)
	return &Buffers{mem: mem, slotSize: size, slots: slots}, nil
}

// Slot returns buffer i, n bytes long.
func (b *Buffers) Slot(i int, n int64) []byte {
	off := i * b.slotSize
	return b.mem[off : off+int(n) : off+b.slotSize]
}

// Len is the number of slots.
func (b *Buffers) Len() int { return b.slots }

// SlotSize is the size of a slot in bytes (a whole number of pages).
func (b *Buffers) SlotSize() int { return b.slotSize }

// Memory returns the whole mapping (for io_uring buffer registration).
func (b *Buffers) Memory() []byte { return b.mem }

// Close unmaps the memory. No I/O may use it afterwards.
func (b *Buffers) Close() error {
	if b == nil || b.mem == nil {
		return nil
	}
	err := unix.Munmap(b.mem)
	b.mem = nil
	return err
}
