package engine

import (
	"github.com/ioprobe/ioprobe/internal/iobuf"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// contentOf is the fill of a spec's fio buffer contents (nil: ioprobe's
// own) for a worker whose targets' regions add up to regions bytes.
func contentOf(spec *workload.Spec, regions int64) *iobuf.Content {
	b := spec.Buffer
	if b == nil {
		return nil
	}
	minWrite := spec.MinBlock()
	c := &iobuf.Content{Percent: b.CompressPct, Pattern: b.PatternBytes(), Segmented: b.Compressing(), Zero: b.Zero, Dedupe: b.DedupePct}
	// fio's segment: min_not_zero(the smallest write, buffer_compress_chunk).
	c.Segment = int(minWrite)
	if b.CompressChunk > 0 {
		c.Segment = int(min(minWrite, b.CompressChunk))
	}
	if b.DedupePct > 0 && b.DedupeWorkingSetPct > 0 {
		// dedupe.c: size × the working set's percentage, in pages of the
		// smallest write, each that many segments.
		c.WorkingSet = max(1, uint64(regions/100*int64(b.DedupeWorkingSetPct)/minWrite))
		c.PageSegments = uint64(minWrite) / uint64(c.Segment)
	}
	return c
}

// fillSlots gives every buffer slot of the worker its first content, as
// fio fills each io_u at its start (backend.c: init_io_u); without
// refill_buffers it is what every write from the slot carries (unless a
// read replaced it).
func (w *Worker) fillSlots() {
	if w.content == nil || !w.fillOnce {
		return
	}
	f := w.content.NewFiller(w.Seed ^ uint64(w.ID))
	for i := range w.Buffers.Len() {
		f.Fill(w.Buffers.Slot(i, int64(w.Buffers.SlotSize())))
	}
}

// fillWrite readies buf for the write op with fio's buffer contents, when
// the job has them, as fio's get_io_u: filled anew (refill_buffers), else
// scrambled where fio scrambles content that is not random; and says
// whether the write keeps ioprobe's sector headers (which stand in for
// the scramble of random data).
func (w *Worker) fillWrite(s *Lane, op *IO, buf []byte) (stamp bool) {
	if w.content == nil {
		return true
	}
	b := w.Spec.Buffer
	switch {
	case w.refill:
		s.fill.Fill(buf)
	case b.Scramble && !b.Random():
		now := Nanotime()
		iobuf.Scramble(buf, op.Offset, now/1e9, now%1e9)
	}
	return b.Stamped()
}
