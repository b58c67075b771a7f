package workload

import (
	"encoding/hex"
	"fmt"
)

// MaxPatternBytes bounds a buffer pattern (fio's MAX_PATTERN_SIZE).
const MaxPatternBytes = 512

// BufferContent is what a fio job writes (Spec.Buffer): fio's buffer
// options after its own fix-ups (init.c, options.c), as io_u.c's
// fill_io_buffer fills a buffer with them.
//
// Each write is cut into segments of min(the smallest write,
// CompressChunk) bytes; each segment starts with (100 - CompressPct)%
// random bytes from a seed of its own and ends with Pattern repeated
// from its first byte (zeros without one). DedupePct of the buffers
// repeat another: the next unique one (fio's dedupe_mode=repeat), or with
// DedupeWorkingSetPct one of the first unique ones that fill that share
// of the region (working_set). Without compression or dedupe a buffer is
// all zeros (Zero: zero_buffers, buffer_compress_percentage=100), all
// Pattern, or random.
//
// Refill fills every write anew (fio's refill_buffers, which compression
// and dedupe turn on); else each buffer is filled once and written as it
// is then (a read into it changes it, as in fio). Scramble is fio's
// scramble_buffers in effect: each 512-byte sector of a write that is not
// refilled made unique by its offset and the time (io_u.c:
// small_content_scramble).
type BufferContent struct {
	CompressPct         int    `json:"compress_pct,omitempty"`
	CompressChunk       int64  `json:"compress_chunk,omitempty"`
	Pattern             string `json:"pattern,omitempty"` // hexadecimal
	Zero                bool   `json:"zero,omitempty"`
	DedupePct           int    `json:"dedupe_pct,omitempty"`
	DedupeWorkingSetPct int    `json:"dedupe_working_set_pct,omitempty"`
	Refill              bool   `json:"refill,omitempty"`
	Scramble            bool   `json:"scramble,omitempty"`
}

// Compressing says whether fio's compression or dedupe is on: its
// segment-by-segment fill (and no scramble: TD_F_COMPRESS).
func (b *BufferContent) Compressing() bool {
	return b != nil && (b.CompressPct > 0 || b.DedupePct > 0)
}

// Random says whether the buffers hold fio's plain random data.
func (b *BufferContent) Random() bool {
	return b == nil || (!b.Compressing() && !b.Zero && b.Pattern == "")
}

// Stamped says whether every write keeps ioprobe's self-describing sector
// headers: when fio writes random data that is new or scrambled on every
// write. The headers then stand in for fio's scramble (its offset and
// time in each 512-byte sector): both leave the data incompressible and
// every sector unique. Any other content is fio's bytes as they are (a
// header would make them less compressible, and no sector a duplicate):
// the files written are then no longer ioprobe's (docs/fio.md).
func (b *BufferContent) Stamped() bool {
	return b.Random() && (b == nil || b.Refill || b.Scramble)
}

// PatternBytes is the pattern as bytes.
func (b *BufferContent) PatternBytes() []byte {
	if b == nil || b.Pattern == "" {
		return nil
	}
	p, _ := hex.DecodeString(b.Pattern)
	return p
}

// validateBuffer checks Spec.Buffer.
func (s *Spec) validateBuffer() error {
	b := s.Buffer
	if b == nil {
		return nil
	}
	p, err := hex.DecodeString(b.Pattern)
	switch {
	case err != nil || len(p) > MaxPatternBytes:
		return fieldErr("buffer_pattern", b.Pattern, "must be at most %d bytes in hexadecimal", MaxPatternBytes)
	case b.CompressPct < 0 || b.CompressPct > 99:
		return fieldErr("buffer_compress_percentage", b.CompressPct, "must be 0 to 99 (100 is zero_buffers or the pattern alone, as fio makes it)")
	case b.CompressChunk < 0 || b.CompressChunk > MaxBlockSize:
		return fieldErr("buffer_compress_chunk", b.CompressChunk, "must be 0 to %d bytes", int64(MaxBlockSize))
	case b.DedupePct < 0 || b.DedupePct > 100:
		return fieldErr("dedupe_percentage", b.DedupePct, "must be 0 to 100")
	case b.DedupeWorkingSetPct < 0 || b.DedupeWorkingSetPct > 100:
		return fieldErr("dedupe_working_set_percentage", b.DedupeWorkingSetPct, "must be 0 to 100")
	case b.Zero && (b.Pattern != "" || b.Compressing()):
		return fieldErr("zero_buffers", true, "zeros alone: fio fills a pattern, or compresses, instead")
	case s.Verify && !b.Stamped():
		return fieldErr("--verify", true, "checks ioprobe's self-describing sectors, which fio's buffer contents (%s) leave out", b)
	}
	return nil
}

// String says what the buffers hold, in fio's words.
func (b *BufferContent) String() string {
	switch {
	case b == nil:
		return "random"
	case b.Compressing():
		s := fmt.Sprintf("buffer_compress_percentage=%d buffer_compress_chunk=%d", b.CompressPct, b.CompressChunk)
		if b.Pattern != "" {
			s += " buffer_pattern=0x" + b.Pattern
		}
		if b.DedupePct > 0 {
			s += fmt.Sprintf(" dedupe_percentage=%d", b.DedupePct)
			if b.DedupeWorkingSetPct > 0 {
				s += fmt.Sprintf(" dedupe_mode=working_set dedupe_working_set_percentage=%d", b.DedupeWorkingSetPct)
			}
		}
		return s
	case b.Zero:
		return "zero_buffers"
	case b.Pattern != "":
		return "buffer_pattern=0x" + b.Pattern
	case b.Scramble || b.Refill:
		return "random"
	}
	return "scramble_buffers=0"
}
