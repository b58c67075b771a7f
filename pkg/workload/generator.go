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
// never a lock. It holds a position per direction: Iometer's one stream uses
// the first only; with Spec.SequentialStreams "direction" reads use the
// first and writes the second, as fio's last_pos[ddir].
type Cursor struct {
	pos [2]atomic.Int64
	_   [48]byte // keep neighbouring cursors off this cache line
}

// NewCursor returns a cursor whose first sequential I/O starts at start bytes
// into the region (rounded down to align).
func NewCursor(start, align int64) *Cursor {
	c := &Cursor{}
	if align > 0 {
		start -= start % align
	}
	c.pos[0].Store(start)
	c.pos[1].Store(start)
	return c
}

// next claims n bytes of the sequential stream and returns the offset,
// relative to the region start. The offset is the cursor rounded up to
// align (0: no rounding needed); the stream wraps to the start of the
// region when the next transfer would pass its end.
func (c *Cursor) next(dir int, n, regionLen, align int64) int64 {
	p := &c.pos[dir&1] // &1: no bounds check on the hot path
	for {
		cur := p.Load()
		off := cur
		if align > 0 {
			if r := off % align; r != 0 {
				off += align - r
			}
		}
		if off+n > regionLen {
			off = 0
		}
		if p.CompareAndSwap(cur, off+n) {
			return off
		}
	}
}

// follow moves the sequential position of dir to end, the end of a random
// I/O: as in Iometer (and fio, per direction), a sequential I/O continues
// where the previous I/O of its stream on the target ended, whether that
// one was sequential or random.
func (c *Cursor) follow(dir int, end int64) { c.pos[dir&1].Store(end) }

// Op is one I/O to issue.
type Op struct {
	Write  bool
	Random bool
	Offset int64 // absolute byte offset in the target
	Len    int64
	// Line is the index of the access specification line the I/O belongs
	// to, into Spec.Normalized() (for a block-size mix: into BlockSizes).
	Line int
	// DelayNs, when not 0, is Iometer's transfer delay: the I/O is the
	// first of a burst of a line with a delay, and the engine waits this
	// long before issuing it (still completing what is in flight).
	DelayNs int64
}

// genLine is one line as the generator runs it.
type genLine struct {
	size      int64
	align     int64  // random offsets are multiples of it
	seqAlign  int64  // sequential offsets are rounded up to it (0: always aligned already)
	slots     uint64 // random start positions
	readPct   uint64
	randomPct uint64
	burst     int
	delayNs   int64
}

// Generator draws the I/Os of one stream (an outstanding-I/O slot, or a whole
// ring) from an access specification. It does not allocate and takes no
// lock; one goroutine owns it.
//
// Each I/O belongs to a line, picked by share as Iometer's Dynamo does: a
// line is drawn for each burst (burst length 1: for each I/O), then read or
// write and random or sequential by that line's percentages. A line with a
// delay marks the first I/O of each of its bursts with DelayNs. The burst
// is the stream's own (see Spec docs: each sync lane, each uring target).
type Generator struct {
	rng    uint64
	lines  []genLine
	cum    []uint64 // cumulative shares
	total  uint64
	bursts bool // some line has a burst or a delay: count bursts
	follow bool // random and sequential I/O mix: sequential follows every I/O
	perDir bool // a sequential stream per direction (SequentialStreams "direction")
	cur    int  // line of the current burst
	left   int  // I/Os left in the current burst
	region Region
	cursor *Cursor
}

// NewGenerator builds a generator for spec over region. Outstanding I/Os of
// one worker on one target share cursor; seed makes the stream repeatable.
func NewGenerator(spec *Spec, region Region, cursor *Cursor, seed uint64) (*Generator, error) {
	g := &Generator{
		rng:    seed ^ 0x9e3779b97f4a7c15,
		region: region,
		cursor: cursor,
	}
	if region.Len < spec.MaxBlock() {
		return nil, fmt.Errorf("region of %d bytes cannot hold a %d-byte transfer", region.Len, spec.MaxBlock())
	}
	lines := spec.Normalized()
	if len(lines) == 0 {
		return nil, fmt.Errorf("access specification has no lines")
	}
	minBlock, specAlign := spec.MinBlock(), spec.Alignment()
	var random, sequential bool
	for _, l := range lines {
		a := lineAlign(l, minBlock)
		gl := genLine{
			size: l.Bytes, align: a, slots: uint64((region.Len-l.Bytes)/a + 1),
			readPct: uint64(l.ReadPct), randomPct: uint64(l.RandomPct),
			burst: l.BurstLen(), delayNs: int64(l.DelayMs) * 1e6,
		}
		if specAlign%a != 0 || region.Start%a != 0 {
			gl.seqAlign = a
		}
		for _, o := range lines {
			if o.Bytes%a != 0 || lineAlign(o, minBlock)%a != 0 {
				gl.seqAlign = a
			}
		}
		g.lines = append(g.lines, gl)
		g.total += uint64(l.Share)
		g.cum = append(g.cum, g.total)
		g.bursts = g.bursts || gl.burst > 1 || gl.delayNs > 0
		random = random || (l.Share > 0 && l.RandomPct > 0)
		sequential = sequential || (l.Share > 0 && l.RandomPct < 100)
	}
	if g.total == 0 {
		return nil, fmt.Errorf("every line of the access specification has a share of 0")
	}
	g.follow = random && sequential
	g.perDir = spec.SequentialStreams == StreamsDirection
	if g.cursor == nil {
		g.cursor = NewCursor(0, specAlign)
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
	idx := 0
	op.DelayNs = 0
	if g.bursts {
		if g.left <= 0 {
			g.cur = g.pick()
			g.left = g.lines[g.cur].burst
			op.DelayNs = g.lines[g.cur].delayNs
		}
		g.left--
		idx = g.cur
	} else if len(g.lines) > 1 {
		idx = g.pick()
	}
	l := &g.lines[idx]
	op.Line = idx
	op.Len = l.size
	op.Write = g.below(100) >= l.readPct
	op.Random = l.randomPct == 100 || (l.randomPct > 0 && g.below(100) < l.randomPct)
	dir := 0
	if g.perDir && op.Write {
		dir = 1
	}
	if op.Random {
		off := int64(g.below(l.slots)) * l.align
		op.Offset = g.region.Start + off
		if g.follow {
			g.cursor.follow(dir, off+op.Len)
		}
	} else {
		op.Offset = g.region.Start + g.cursor.next(dir, op.Len, g.region.Len, l.seqAlign)
	}
}

// pick draws a line by share.
func (g *Generator) pick() int {
	if len(g.lines) == 1 {
		return 0
	}
	w := g.below(g.total)
	idx := 0
	for idx < len(g.cum)-1 && w >= g.cum[idx] {
		idx++
	}
	return idx
}

// Uint64 returns the next raw random number of the stream (for payloads and
// jitter that must not share a sequence with another stream).
func (g *Generator) Uint64() uint64 { return g.rand() }
