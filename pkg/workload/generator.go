package workload

import (
	"fmt"
	"math/bits"
	"sync/atomic"
)

// Region is the byte range of a target that I/O touches (Iometer's access
// region, our --size).
type Region struct {
	Start int64
	Len   int64
}

// Cursor is the sequential position of one worker on one target. All of that
// worker's outstanding I/Os share it, so the worker's stream stays
// sequential whatever the queue depth; it is advanced with a compare-and-swap,
// never a lock.
type Cursor struct {
	pos atomic.Int64
	_   [56]byte // keep neighbouring cursors off this cache line
}

// NewCursor returns a cursor whose first sequential I/O starts at start bytes
// into the region (rounded down to align).
func NewCursor(start, align int64) *Cursor {
	c := &Cursor{}
	if align > 0 {
		start -= start % align
	}
	c.pos.Store(start)
	return c
}

// next claims n bytes of the sequential stream and returns the offset,
// relative to the region start. The stream wraps to the start of the region
// when the next transfer would pass its end.
func (c *Cursor) next(n, regionLen int64) int64 {
	for {
		cur := c.pos.Load()
		off, nxt := cur, cur+n
		if nxt > regionLen {
			off, nxt = 0, n
		}
		if c.pos.CompareAndSwap(cur, nxt) {
			return off
		}
	}
}

// Op is one I/O to issue.
type Op struct {
	Write   bool
	Random  bool
	Offset  int64 // absolute byte offset in the target
	Len     int64
	SizeIdx int // index into the spec's BlockSizes
	// Verify is set by the engine when a read is issued whose data can be
	// checked (--verify); the generator leaves it false.
	Verify bool
	// VerifyMark and VerifyStamp carry --verify's lost-write bookkeeping
	// from an I/O's issue to its completion (engine.Verifier); the
	// generator leaves them alone.
	VerifyMark, VerifyStamp uint64
}

// Generator draws the I/Os of one stream (an outstanding-I/O slot, or a whole
// ring) from an access specification. It does not allocate and takes no
// lock; one goroutine owns it.
type Generator struct {
	rng       uint64
	readPct   uint64
	randomPct uint64
	sizes     []int64
	cum       []uint64 // cumulative weights
	total     uint64
	slots     []uint64 // random start positions per size
	align     int64
	region    Region
	cursor    *Cursor
}

// NewGenerator builds a generator for spec over region. Outstanding I/Os of
// one worker on one target share cursor; seed makes the stream repeatable.
func NewGenerator(spec *Spec, region Region, cursor *Cursor, seed uint64) (*Generator, error) {
	align := spec.Alignment()
	g := &Generator{
		rng:       seed ^ 0x9e3779b97f4a7c15,
		readPct:   uint64(spec.ReadPct),
		randomPct: uint64(spec.RandomPct),
		align:     align,
		region:    region,
		cursor:    cursor,
	}
	if region.Len < spec.MaxBlock() {
		return nil, fmt.Errorf("region of %d bytes cannot hold a %d-byte transfer", region.Len, spec.MaxBlock())
	}
	for _, b := range spec.BlockSizes {
		g.sizes = append(g.sizes, b.Bytes)
		g.total += uint64(b.Weight)
		g.cum = append(g.cum, g.total)
		g.slots = append(g.slots, uint64((region.Len-b.Bytes)/align+1))
	}
	if g.cursor == nil {
		g.cursor = NewCursor(0, align)
	}
	return g, nil
}

// rand is wyrand: fast, 64 bits of state, good enough for choosing offsets.
func (g *Generator) rand() uint64 {
	g.rng += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(g.rng, g.rng^0xe7037ed1a0b428db)
	return hi ^ lo
}

// below returns a uniform integer in [0, n).
func (g *Generator) below(n uint64) uint64 {
	hi, _ := bits.Mul64(g.rand(), n)
	return hi
}

// Next fills op with the next I/O of the stream.
func (g *Generator) Next(op *Op) {
	op.Write = g.below(100) >= g.readPct
	idx := 0
	if len(g.sizes) > 1 {
		w := g.below(g.total)
		for idx < len(g.cum)-1 && w >= g.cum[idx] {
			idx++
		}
	}
	op.SizeIdx = idx
	op.Len = g.sizes[idx]
	op.Random = g.randomPct == 100 || (g.randomPct > 0 && g.below(100) < g.randomPct)
	if op.Random {
		op.Offset = g.region.Start + int64(g.below(g.slots[idx]))*g.align
	} else {
		op.Offset = g.region.Start + g.cursor.next(op.Len, g.region.Len)
	}
}

// Uint64 returns the next raw random number of the stream (for payloads and
// jitter that must not share a sequence with another stream).
func (g *Generator) Uint64() uint64 { return g.rand() }
