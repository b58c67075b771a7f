package workload

import "math/bits"

// blockMap is fio's random map (lib/axmap.c, used by io_u.c): one bit per
// block of a target's region, set once a random I/O of the current pass
// touched the block. Above the bits sit summary levels, a bit per word of
// the level below that is full, so that finding the next free block costs
// a few word reads however full the map is (log64 of the blocks).
//
// The semantics are axmap's: isSet (random_map_free), setRun
// (axmap_set_nr: set up to n blocks from b, stopping at the first block
// already set) and nextFree (axmap_next_free: the first free block after
// b, wrapping to the start; none when the map is full). The bits past the
// last block of each level are kept set, so a level's last word is full
// exactly when its blocks are.
//
// One generator owns a map (Spec.RandomMap allows one stream per worker
// and target): it takes no lock and allocates nothing after newBlockMap.
type blockMap struct {
	levels [][]uint64 // levels[0]: a bit per block; levels[i+1]: a bit per full word of levels[i]
	nbits  uint64
}

// newBlockMap returns an empty map of n blocks (n > 0).
func newBlockMap(n uint64) *blockMap {
	m := &blockMap{nbits: n}
	for words := (n + 63) / 64; ; words = (words + 63) / 64 {
		m.levels = append(m.levels, make([]uint64, words))
		if words <= 1 {
			break
		}
	}
	m.reset()
	return m
}

// reset empties the map (fio_file_reset: a new pass).
func (m *blockMap) reset() {
	n := m.nbits
	for _, l := range m.levels {
		clear(l)
		// Keep the padding past the level's last bit set.
		if r := n % 64; r != 0 {
			l[len(l)-1] = ^uint64(0) << r
		}
		n = uint64(len(l))
	}
}

// full reports whether every block is set.
func (m *blockMap) full() bool {
	top := m.levels[len(m.levels)-1]
	return top[0] == ^uint64(0)
}

// isSet reports whether block b was touched in this pass.
func (m *blockMap) isSet(b uint64) bool {
	return m.levels[0][b>>6]&(1<<(b&63)) != 0
}

// setRun sets up to n blocks from b, stopping at the end of the map or at
// the first block already set, and returns how many it set (fio's
// axmap_set_nr; 0 when b itself is set).
func (m *blockMap) setRun(b, n uint64) uint64 {
	if b >= m.nbits {
		return 0
	}
	n = min(n, m.nbits-b)
	var done uint64
	l0 := m.levels[0]
	for done < n {
		w, bit := b>>6, b&63
		take := min(n-done, 64-bit)
		mask := ^uint64(0) >> (64 - take) << bit
		if used := l0[w] & mask; used != 0 {
			// Stop before the first set block of the run.
			take = uint64(bits.TrailingZeros64(used)) - bit
			mask = ^uint64(0) >> (64 - take) << bit
			if take == 0 {
				return done
			}
			m.setBits(0, w, mask)
			return done + take
		}
		m.setBits(0, w, mask)
		done += take
		b += take
	}
	return done
}

// setBits ors mask into word w of level lvl and, when the word becomes
// full, sets its bit in the level above.
func (m *blockMap) setBits(lvl int, w, mask uint64) {
	for {
		l := m.levels[lvl]
		l[w] |= mask
		if l[w] != ^uint64(0) || lvl+1 == len(m.levels) {
			return
		}
		lvl, mask, w = lvl+1, 1<<(w&63), w>>6
	}
}

// nextFree returns the first free block after b, wrapping to the start of
// the map (fio's axmap_next_free), and false when the map is full.
func (m *blockMap) nextFree(b uint64) (uint64, bool) {
	next := b + 1
	if next >= m.nbits {
		next = 0
	}
	if f, ok := m.findZero(0, next); ok {
		return f, true
	}
	if next == 0 {
		return 0, false
	}
	return m.findZero(0, 0)
}

// findZero returns the first clear bit at or after from in level lvl: a
// free block at level 0, a word that is not full above it.
func (m *blockMap) findZero(lvl int, from uint64) (uint64, bool) {
	l := m.levels[lvl]
	w := from >> 6
	if w >= uint64(len(l)) {
		return 0, false
	}
	if free := ^l[w] &^ (1<<(from&63) - 1); free != 0 {
		return w<<6 + uint64(bits.TrailingZeros64(free)), true
	}
	if lvl+1 == len(m.levels) {
		return 0, false // the top level is one word
	}
	nw, ok := m.findZero(lvl+1, w+1)
	if !ok {
		return 0, false
	}
	return nw<<6 + uint64(bits.TrailingZeros64(^l[nw])), true
}
