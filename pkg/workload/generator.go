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
	// rmap is the worker's random map of the target (Spec.RandomMap),
	// made by the first generator on the cursor; nil without one.
	rmap *blockMap
	// dist is the worker's non-uniform distribution on the target
	// (Spec.RandomDistribution): fio keeps one per job and file, its hot
	// spot placed once. perm is its lfsr pass (Spec.RandomGenerator).
	// Made by the first generator on the cursor; nil without.
	dist *distGen
	perm *blockPerm
	// fresh: a new pass started (NewPass) on a buffered run, and no I/O
	// has dropped the target's cache for it yet.
	fresh atomic.Bool
	// loop is the stream's progress through the loops of a budget that
	// start over (see Generator.loopStart), made by the first generator
	// on the cursor; nil without. The cursor's, not a generator's: the
	// sync engine's lanes on the target each have a generator, and a
	// loop is all of theirs (counted by one lane's share alone, a loop
	// started over mid-pass once that lane had placed a pass's bytes:
	// in six loops at QD 4, a block read nine times). Its generators
	// place one at a time (the sync lanes under their booking lock).
	loop *loopState
	_    [12]byte // keep neighbouring cursors off this cache line
}

// loopState counts the I/Os placed on a stream towards its loops: the
// I/O count and bytes at which the next loop starts, and those placed.
type loopState struct {
	nextBytes, nextCount int64
	doneBytes, doneCount int64
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

// restart puts both sequential positions back at the region's start
// (fio_file_reset, when the random map starts a new pass).
func (c *Cursor) restart() {
	c.pos[0].Store(0)
	c.pos[1].Store(0)
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
	// DropCache, set by the generator on a Buffered spec without
	// KeepCache, says that this I/O starts a new pass over the region (a
	// sequential stream wrapped, the random map filled): the engine drops
	// the target's cached pages before issuing it, as fio's invalidate=1
	// does each time it starts over.
	DropCache bool
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
	// The random map (Spec.RandomMap): blocks of minBlock bytes, lastb of
	// them drawn from; nil without one.
	rmap     *blockMap
	minBlock int64
	lastb    uint64
	// A non-uniform distribution, or fio's lfsr, draws the blocks of
	// random I/Os instead (nil without; then minBlock is set too).
	dist *distGen
	perm *blockPerm
	drop bool // Buffered without KeepCache: flag the I/O that starts a pass
	// passes: a budgeted run (Spec.Loops) with a size mix: a sequential
	// transfer is fitted to the region's end (see pass.go). seqOnly and
	// randOnly: every line with a share is sequential, or random (a pass
	// can end: PassDone).
	passes, seqOnly, randOnly bool
	// Loops of a budget that start over (fio reopens its files for each
	// loop: an empty map, the streams at the start, the cache dropped):
	// a loop's bytes and I/O count (0: none), and the cursor's count of
	// the stream's loops (shared by the generators on the cursor).
	loopBytes, loopCount int64
	loop                 *loopState
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
	g.passes = spec.Loops > 0 && len(lines) > 1
	g.seqOnly, g.randOnly = !random, !sequential
	g.perDir = spec.SequentialStreams == StreamsDirection
	g.drop = spec.Buffered && !spec.KeepCache
	if g.cursor == nil {
		g.cursor = NewCursor(0, specAlign)
	}
	if spec.Loops > 1 && (spec.RandomMap || g.drop) {
		g.loopBytes, g.loopCount = spec.IOBytes, spec.IOCount
		if g.loopBytes == 0 {
			g.loopBytes = region.Len // fio's io_size: size
		}
		if g.cursor.loop == nil {
			g.cursor.loop = &loopState{nextBytes: g.loopBytes, nextCount: g.loopCount}
		}
		g.loop = g.cursor.loop
	}
	if random {
		if err := g.drawBlocks(spec, seed); err != nil {
			return nil, err
		}
	}
	if spec.RandomMap && random {
		if err := spec.validateRandomMap(); err != nil {
			return nil, err
		}
		// fio: a bit per block of the smallest transfer (rw_min_bs) over
		// the file's region, random offsets drawn from the same blocks
		// (last_block, with blockalign the smallest size).
		g.minBlock = minBlock
		g.lastb = uint64(region.Len / minBlock)
		if g.cursor.rmap == nil || g.cursor.rmap.nbits != g.lastb {
			g.cursor.rmap = newBlockMap(g.lastb)
		}
		g.rmap = g.cursor.rmap
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
	g.Draw(op)
	g.Place(op)
}

// Draw is the first half of Next: it picks the I/O's line (its transfer
// size), burst delay and direction. The caller may change op.Write (a
// rate per direction does, as fio's rate_ddir) before Place.
func (g *Generator) Draw(op *Op) {
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
}

// Place is the second half of Next: random or sequential, the offset
// and, with the random map, the transfer size that fits.
func (g *Generator) Place(op *Op) {
	l := &g.lines[op.Line]
	op.Random = l.randomPct == 100 || (l.randomPct > 0 && g.below(100) < l.randomPct)
	op.DropCache = false
	if g.loopBytes > 0 {
		g.loopStart(op)
		defer g.count(op)
	}
	dir := 0
	if g.perDir && op.Write {
		dir = 1
	}
	switch {
	case op.Random && g.rmap != nil:
		g.placeMapped(op, dir)
	case op.Random && (g.dist != nil || g.perm != nil):
		g.placeDrawn(op, dir)
	case op.Random:
		off := int64(g.below(l.slots)) * l.align
		op.Offset = g.region.Start + off
		if g.follow {
			g.cursor.follow(dir, off+op.Len)
		}
	default:
		off, wrapped := g.sequential(dir, op)
		op.Offset = g.region.Start + off
		op.DropCache = wrapped && g.drop
		if g.drop && g.cursor.fresh.Load() && g.cursor.fresh.Swap(false) {
			op.DropCache = true
		}
	}
}

// loopStart begins fio's next loop when the I/Os placed so far finished
// one (backend.c: a loop ends once its bytes or number_ios were issued;
// clear_io_state then reopens the files): an empty map, both sequential
// streams at the region's start, and for a buffered run the cache
// dropped.
func (g *Generator) loopStart(op *Op) {
	s := g.loop
	if s.doneBytes < s.nextBytes && (g.loopCount == 0 || s.doneCount < s.nextCount) {
		return
	}
	for s.doneBytes >= s.nextBytes || (g.loopCount > 0 && s.doneCount >= s.nextCount) {
		s.nextBytes += g.loopBytes
		s.nextCount += g.loopCount
	}
	if g.rmap != nil {
		g.rmap.reset()
	}
	g.cursor.restart()
	op.DropCache = g.drop
}

// count books a placed I/O towards the loop.
func (g *Generator) count(op *Op) {
	g.loop.doneBytes += op.Len
	g.loop.doneCount++
}

// placeMapped places a random I/O with fio's random map (io_u.c:
// get_next_rand_offset, get_next_buflen, mark_random_map): a block drawn
// from the region, or the next free one after it; when none is free the
// pass starts again (fio_file_reset: an empty map, both sequential
// streams back at the start). Then the size: the drawn line's if it fits
// before the region's end, else the next line in order that fits (fio's
// bssplit passes the share on), else a new draw. Last the I/O is
// shortened to the free blocks from its start.
func (g *Generator) placeMapped(op *Op, dir int) {
	b := g.below(g.lastb)
	if g.rmap.isSet(b) {
		var ok bool
		if b, ok = g.rmap.nextFree(b); !ok {
			g.rmap.reset()
			g.cursor.restart()
			op.DropCache = g.drop
			b = g.below(g.lastb)
		}
	}
	off := int64(b) * g.minBlock
	g.fit(op, off)
	blocks := uint64((op.Len + g.minBlock - 1) / g.minBlock)
	if set := g.rmap.setRun(b, blocks); set < blocks {
		op.Len = int64(set) * g.minBlock
	}
	op.Offset = g.region.Start + off
	if g.follow {
		g.cursor.follow(dir, off+op.Len)
	}
}

// fit gives a random I/O at off a transfer size that ends inside the
// region, as fio's get_next_buflen: the drawn line's if it fits, else the
// next line in order that fits (fio's bssplit passes the share on), else
// a new draw.
func (g *Generator) fit(op *Op, off int64) {
	if len(g.lines) < 2 {
		return
	}
	idx := op.Line
	for off+g.lines[idx].size > g.region.Len {
		if idx++; idx == len(g.lines) {
			idx = g.pick()
		}
	}
	op.Line, op.Len = idx, g.lines[idx].size
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
