package workload

// Passes (Spec.Loops): a budgeted run reads or writes each target's
// region a whole number of times, as fio's loops do. With a size mix a
// sequential stream then ends each pass at the region's end, as fio's
// get_next_buflen does: a transfer drawn too big for what is left of the
// region is drawn again among the sizes that fit there, never wrapped to
// the region's start early (which read the start twice and left the
// tail unread). A worker that takes its targets in turn asks each target
// whether its pass is done (PassDone) and starts the next loop on all of
// them at once (NewPass): see engine.Turn.

// sequential claims the next transfer of the sequential stream dir and
// returns its offset, relative to the region's start: the position
// rounded up to the line's alignment (seqAlign). The stream wraps to the
// region's start when the transfer would pass its end (wrapped then says
// so); in passes only once no size fits before the end (see above).
// Lanes of one worker share the position: it is claimed with a
// compare-and-swap, never a lock, the size fitted to the position it
// claims.
func (g *Generator) sequential(dir int, op *Op) (off int64, wrapped bool) {
	p := &g.cursor.pos[dir&1] // &1: no bounds check on the hot path
	for {
		cur := p.Load()
		if g.passes && !g.fits(op.Line, cur) && g.fitsAny(cur) {
			g.refit(op, cur)
		}
		off, wrapped = alignUp(cur, g.lines[op.Line].seqAlign), false
		if off+op.Len > g.region.Len {
			off, wrapped = 0, cur != 0
		}
		if p.CompareAndSwap(cur, off+op.Len) {
			return off, wrapped
		}
	}
}

// alignUp rounds off up to a multiple of align (0: as it is).
func alignUp(off, align int64) int64 {
	if align > 0 {
		if r := off % align; r != 0 {
			off += align - r
		}
	}
	return off
}

// fits reports whether line i's transfer at the sequential position cur
// ends inside the region.
func (g *Generator) fits(i int, cur int64) bool {
	l := &g.lines[i]
	return alignUp(cur, l.seqAlign)+l.size <= g.region.Len
}

// fitsAny reports whether some line with a share fits at cur.
func (g *Generator) fitsAny(cur int64) bool {
	prev := uint64(0)
	for i, c := range g.cum {
		if c > prev && g.fits(i, cur) {
			return true
		}
		prev = c
	}
	return false
}

// refit draws op's line again until its transfer fits at cur (some line
// does: fitsAny), as fio's get_next_buflen draws the size again until it
// fits: the sizes that fit keep their shares among themselves.
func (g *Generator) refit(op *Op, cur int64) {
	idx := op.Line
	for !g.fits(idx, cur) {
		idx = g.pick()
	}
	op.Line, op.Len = idx, g.lines[idx].size
}

// PassDone reports whether the stream's pass over its region is over: a
// sequential stream's position leaves no room for a transfer before the
// region's end (either direction's, with a stream per direction: fio's
// file is done when the direction it draws cannot go on), or a random
// stream's map is full (fio: no free block left). A stream of random
// and sequential I/O together, or of random I/O without the map, has no
// pass that ends by itself: its loops end by the budget alone (as fio's
// end by io_size).
func (g *Generator) PassDone() bool {
	switch {
	case g.seqOnly:
		return !g.fitsAny(g.cursor.pos[0].Load()) || (g.perDir && !g.fitsAny(g.cursor.pos[1].Load()))
	case g.randOnly && g.rmap != nil:
		return g.rmap.full()
	}
	return false
}

// NewPass starts the next pass over the region (fio's clear_io_state at a
// new loop): both sequential positions at its start, the map empty, and,
// for a buffered run, the target's cache dropped before the next I/O on
// it. Every generator on the same cursor (a worker's lanes on the target)
// sees it.
func (g *Generator) NewPass() {
	g.cursor.restart()
	if g.rmap != nil {
		g.rmap.reset()
	}
	if g.drop {
		g.cursor.fresh.Store(true)
	}
}
