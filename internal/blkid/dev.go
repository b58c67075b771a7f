package blkid

import (
	"encoding/binary"
	"io"
)

// Dev is a device as the probes see it: bytes at offsets, and its size.
type Dev struct {
	r          io.ReaderAt
	Size       int64
	SectorSize int64
}

// NewDev wraps r, a device of size bytes with sectorSize-byte logical
// sectors (0 or less: 512).
func NewDev(r io.ReaderAt, size, sectorSize int64) *Dev {
	if sectorSize <= 0 {
		sectorSize = 512
	}
	if size < 0 {
		size = 0
	}
	return &Dev{r: r, Size: size, SectorSize: sectorSize}
}

// At returns n bytes at off, or nil when any of them lies outside the
// device or cannot be read.
func (d *Dev) At(off int64, n int) []byte {
	if n < 0 || off < 0 || off > d.Size || int64(n) > d.Size-off {
		return nil
	}
	p := make([]byte, n)
	if n == 0 {
		return p
	}
	if k, err := d.r.ReadAt(p, off); k != n || (err != nil && err != io.EOF) {
		return nil
	}
	return p
}

// Has says whether magic lies at off.
func (d *Dev) Has(off int64, magic string) bool {
	p := d.At(off, len(magic))
	return p != nil && string(p) == magic
}

// FromEnd is the offset of the byte n bytes before the end of the device
// (negative when the device is smaller than n).
func (d *Dev) FromEnd(n int64) int64 { return d.Size - n }

// The integer readers return 0 where the bytes cannot be read; probes
// check a magic first, so 0 is never mistaken for a field's value.

// U8 reads a byte.
func (d *Dev) U8(off int64) uint8 {
	if p := d.At(off, 1); p != nil {
		return p[0]
	}
	return 0
}

// U16LE reads a little-endian uint16.
func (d *Dev) U16LE(off int64) uint16 { return u16(d, off, binary.LittleEndian) }

// U16BE reads a big-endian uint16.
func (d *Dev) U16BE(off int64) uint16 { return u16(d, off, binary.BigEndian) }

// U32LE reads a little-endian uint32.
func (d *Dev) U32LE(off int64) uint32 { return u32(d, off, binary.LittleEndian) }

// U32BE reads a big-endian uint32.
func (d *Dev) U32BE(off int64) uint32 { return u32(d, off, binary.BigEndian) }

// U64LE reads a little-endian uint64.
func (d *Dev) U64LE(off int64) uint64 { return u64(d, off, binary.LittleEndian) }

// U64BE reads a big-endian uint64.
func (d *Dev) U64BE(off int64) uint64 { return u64(d, off, binary.BigEndian) }

func u16(d *Dev, off int64, o binary.ByteOrder) uint16 {
	if p := d.At(off, 2); p != nil {
		return o.Uint16(p)
	}
	return 0
}

func u32(d *Dev, off int64, o binary.ByteOrder) uint32 {
	if p := d.At(off, 4); p != nil {
		return o.Uint32(p)
	}
	return 0
}

func u64(d *Dev, off int64, o binary.ByteOrder) uint64 {
	if p := d.At(off, 8); p != nil {
		return o.Uint64(p)
	}
	return 0
}
