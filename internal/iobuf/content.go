package iobuf

import "sync/atomic"

// Content fills write buffers the way fio's fill_io_buffer does (io_u.c,
// lib/rand.c: fill_random_buf_percentage; lib/pattern.c: cpy_pattern), so
// that compressing and deduplicating storage sees data as compressible
// and as often repeated as fio's. The random bytes are ioprobe's own
// (FillRandom), not fio's generator's: what a compressor or a
// deduplicating device sees of them is the same, none of their bytes
// repeating.
type Content struct {
	// Percent is the compressible share of each segment (0 to 99): a
	// segment is (100 - Percent)% random bytes, then Pattern repeated
	// from its first byte, or zeros without one.
	Percent int
	// Segment is the segment's length: fio's min(smallest write,
	// buffer_compress_chunk).
	Segment int
	Pattern []byte
	// Segmented: compression or dedupe is on (fio's segment-by-segment
	// fill). Without it a buffer is all zeros (Zero), all Pattern, or
	// random.
	Segmented bool
	Zero      bool
	// Dedupe is the share of buffers that repeat another (0 to 100); with
	// WorkingSet > 0 one of the first WorkingSet unique buffers of
	// PageSegments segments each (fio's dedupe_mode=working_set), else
	// the next unique one (repeat: fio hands a dedupe buffer the seed its
	// next unique one will have).
	Dedupe       int
	WorkingSet   uint64
	PageSegments uint64
}

// Stream is one worker's sequence of unique buffers (fio's buf_state, per
// job clone): the lanes of a worker share it, so that a dedupe buffer
// repeats a buffer of the worker's, as in fio.
type Stream struct {
	c    Content
	base uint64
	next atomic.Uint64 // the index of the next unique segment seed
}

// NewStream starts a worker's stream of content c from seed.
func NewStream(c Content, seed uint64) *Stream {
	if c.Segment <= 0 {
		c.Segment = 512
	}
	return &Stream{c: c, base: Mix64(seed)}
}

// Filler fills the buffers of one lane (one goroutine) from its worker's
// stream; its own draws decide which buffers repeat.
type Filler struct {
	s   *Stream
	rng uint64
}

// NewFiller returns a lane's filler (seed: the lane's own).
func (s *Stream) NewFiller(seed uint64) Filler {
	return Filler{s: s, rng: Mix64(seed ^ 0x5851f42d4c957f2d)}
}

// below draws from [0, n).
func (f *Filler) below(n uint64) uint64 {
	f.rng += 0x9e3779b97f4a7c15
	return Mix64(f.rng) % n
}

// Fill fills buf as fio fills a buffer of its length.
func (f *Filler) Fill(buf []byte) {
	c := &f.s.c
	if !c.Segmented {
		switch {
		case c.Zero:
			clear(buf)
		case len(c.Pattern) > 0:
			fillPattern(buf, c.Pattern)
		default:
			FillRandom(buf, f.s.seed(f.s.next.Add(1)-1))
		}
		return
	}
	segs := uint64((len(buf) + c.Segment - 1) / c.Segment)
	var idx uint64
	switch dup := c.Dedupe == 100 || (c.Dedupe > 0 && f.below(100) < uint64(c.Dedupe)); {
	case dup && c.WorkingSet > 0:
		idx = f.below(c.WorkingSet) * c.PageSegments
	case dup:
		idx = f.s.next.Load() // the next unique buffer's, not taken
	default:
		idx = f.s.next.Add(segs) - segs
	}
	for off := 0; off < len(buf); off += c.Segment {
		seg := buf[off:min(off+c.Segment, len(buf))]
		rnd := len(seg) * (100 - c.Percent) / 100
		FillRandom(seg[:rnd], f.s.seed(idx))
		idx++
		if len(c.Pattern) > 0 {
			fillPattern(seg[rnd:], c.Pattern)
		} else {
			clear(seg[rnd:])
		}
	}
}

// seed is the seed of unique segment i of the stream.
func (s *Stream) seed(i uint64) uint64 { return Mix64(s.base ^ i*0xd6e8feb86659fd93) }

// fillPattern repeats p over buf from its first byte (fio's cpy_pattern).
func fillPattern(buf, p []byte) {
	n := copy(buf, p)
	for n < len(buf) {
		n += copy(buf[n:], buf[:n])
	}
}

// Scramble writes, in each 512-byte sector of buf (written at byte off),
// the sector's offset and the issue time, as fio's small_content_scramble
// does where it scrambles content of its own (zeros, a pattern): the
// offset at one of the sector's first eight 64-byte lines (picked by the
// time and offset), the time's seconds and nanoseconds in the last 16
// bytes of the first line. Every sector is then unique, little else
// changes.
func Scramble(buf []byte, off int64, sec, nsec int64) {
	line := int((uint64(nsec) ^ uint64(off)) & 7)
	for s := 0; s+512 <= len(buf); s += 512 {
		p := buf[s : s+512 : s+512]
		putLE64(p[line*64:], uint64(off)+uint64(s))
		putLE64(p[48:], uint64(sec))
		putLE64(p[56:], uint64(nsec))
	}
}

func putLE64(p []byte, v uint64) {
	_ = p[7]
	p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56)
}
