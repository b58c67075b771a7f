package uring

// edges finds in constant time whether an I/O touches one of the batch
// being prepared on the same target: it ends where the new one starts, or
// starts where the new one ends (the block layer merges both ways). It
// holds every batch I/O's start and end in an open-addressing table whose
// entries carry the batch's number, so a new batch begins empty without
// clearing anything: the adaptive submission's test per I/O (loop.prep).
type edges struct {
	slots []edge
	shift uint8  // 64 - log2(len(slots))
	batch uint64 // the batch being prepared (from 1); entries of others are free
}

// edge is one start or end offset of an I/O of batch number batch on
// target tgt.
type edge struct {
	off   int64
	tgt   uint32 // target index << 1 | 1 for an end, 0 for a start
	batch uint64
}

// newEdges sizes the table for n I/Os per batch at most, half full at most.
func newEdges(n int) edges {
	size, shift := 4, uint8(62)
	for size < 4*n {
		size, shift = size*2, shift-1
	}
	return edges{slots: make([]edge, size), shift: shift, batch: 1}
}

func (e *edges) index(off int64, tgt uint32) uint64 {
	return (uint64(off) ^ uint64(tgt)<<52) * 0x9e3779b97f4a7c15 >> e.shift
}

// touches says whether [off, end) on target tgt starts where an I/O of the
// batch ends or ends where one starts.
func (e *edges) touches(tgt int, off, end int64) bool {
	return e.has(uint32(tgt)<<1|1, off) || e.has(uint32(tgt)<<1, end)
}

func (e *edges) has(tgt uint32, off int64) bool {
	mask := uint64(len(e.slots) - 1)
	for i := e.index(off, tgt); ; i = (i + 1) & mask {
		s := &e.slots[i]
		if s.batch != e.batch {
			return false
		}
		if s.off == off && s.tgt == tgt {
			return true
		}
	}
}

// add records [off, end) on target tgt in the batch.
func (e *edges) add(tgt int, off, end int64) {
	e.put(uint32(tgt)<<1, off)
	e.put(uint32(tgt)<<1|1, end)
}

func (e *edges) put(tgt uint32, off int64) {
	mask := uint64(len(e.slots) - 1)
	for i := e.index(off, tgt); ; i = (i + 1) & mask {
		s := &e.slots[i]
		if s.batch != e.batch {
			*s = edge{off: off, tgt: tgt, batch: e.batch}
			return
		}
		if s.off == off && s.tgt == tgt {
			return
		}
	}
}

// next empties the table for the next batch (2^64 batches: no wrap).
func (e *edges) next() { e.batch++ }
