//go:build unix

package engine

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

// NewBuffers maps slots buffers of slotSize bytes each (rounded up to whole
// pages) and fills them with incompressible pseudo-random bytes from seed, so
// that writes are not flattered by compressing or deduplicating storage.
func NewBuffers(slots, slotSize int, seed uint64) (*Buffers, error) {
	if slots <= 0 || slotSize <= 0 {
		return nil, fmt.Errorf("buffers: bad geometry %d x %d", slots, slotSize)
	}
	page := unix.Getpagesize()
	size := (slotSize + page - 1) / page * page
	mem, err := unix.Mmap(-1, 0, slots*size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("buffers: mmap %d bytes: %w", slots*size, err)
	}
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

// FillRandom fills p with pseudo-random bytes (splitmix64 stream from seed).
func FillRandom(p []byte, seed uint64) {
	x := seed
	i := 0
	for ; i+8 <= len(p); i += 8 {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		p[i], p[i+1], p[i+2], p[i+3] = byte(z), byte(z>>8), byte(z>>16), byte(z>>24)
		p[i+4], p[i+5], p[i+6], p[i+7] = byte(z>>32), byte(z>>40), byte(z>>48), byte(z>>56)
	}
	for ; i < len(p); i++ {
		x += 0x9e3779b97f4a7c15
		p[i] = byte(splitmix(x))
	}
}

// Stamp writes the offset and a sequence number over the first 16 bytes of
// a write buffer, so that no two written blocks are identical (storage that
// deduplicates would otherwise serve the same block for free).
func Stamp(buf []byte, offset int64, seq uint64) {
	if len(buf) < 16 {
		return
	}
	o, s := uint64(offset), seq
	buf[0], buf[1], buf[2], buf[3], buf[4], buf[5], buf[6], buf[7] = byte(o), byte(o>>8), byte(o>>16), byte(o>>24), byte(o>>32), byte(o>>40), byte(o>>48), byte(o>>56)
	buf[8], buf[9], buf[10], buf[11], buf[12], buf[13], buf[14], buf[15] = byte(s), byte(s>>8), byte(s>>16), byte(s>>24), byte(s>>32), byte(s>>40), byte(s>>48), byte(s>>56)
}
