package uring

// edges finds in constant time whether an I/O touches one of the batch
// being prepared on the same target: it starts where one ends, or ends
// where one starts (the block layer merges both ways). It holds every
// boundary of the batch's I/Os (an offset on a target, and whether an
// I/O starts or ends there) in an open-addressing table whose entries
// carry the batch's number, so a new batch begins empty without clearing
// anything: the adaptive submission's test per I/O (loop.split), one
// probe sequence per boundary.
type edges struct {
	slots []edge
	shift uint8  // 64 - log2(len(slots))
	batch uint64 // the batch being prepared (from 1); entries of others are free
}

// edge is one boundary: I/Os of the batch start (kinds&starts) or end
// (kinds&ends) at offset off of target tgt.
type edge struct {
	off   int64
	batch uint64
	tgt   uint32
	kinds uint8
}

const (
	starts = 1 << iota
	ends
)

// newEdges sizes the table for n I/Os per batch at most (2n boundaries),
// half full at most.
func newEdges(n int) edges {
	size, shift := 4, uint8(62)
	for size < 4*n {
		size, shift = size*2, shift-1
	}
	return edges{slots: make([]edge, size), shift: shift, batch: 1}
}

// mark records that an I/O of the batch has a boundary of kind at off on
// target tgt, and says whether one of the other kind is there already:
// an I/O that ends where this one starts, or starts where it ends.
func (e *edges) mark(tgt uint32, off int64, kind uint8) (touches bool) {
	mask := uint64(len(e.slots) - 1)
	for i := (uint64(off) ^ uint64(tgt)<<52) * 0x9e3779b97f4a7c15 >> e.shift; ; i = (i + 1) & mask {
		s := &e.slots[i]
		if s.batch != e.batch {
			*s = edge{off: off, batch: e.batch, tgt: tgt, kinds: kind}
			return false
		}
		if s.off == off && s.tgt == tgt {
			touches = s.kinds&^kind != 0
			s.kinds |= kind
			return touches
		}
	}
}

// add records [off, end) on target tgt in the batch and says whether it
// touches an I/O recorded before it.
func (e *edges) add(tgt int, off, end int64) bool {
	a := e.mark(uint32(tgt), off, starts)
	b := e.mark(uint32(tgt), end, ends)
	return a || b
}

// next empties the table for the next batch (2^64 batches: no wrap).
func (e *edges) next() { e.batch++ }
