package uring

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// edges against a brute-force search of the batch (an I/O touches another
// when it starts where that one ends or ends where it starts), over batches of every
// size up to the table's bound, on two targets, with offsets drawn from a
// small range so that touching I/Os are common; and a new batch starts
// empty.
func TestEdgesFindTouchingIOs(t *testing.T) {
	type io struct {
		tgt      int
		off, end int64
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 16, 33, 256} {
		e := newEdges(n)
		for range 50 {
			var batch []io
			for range n {
				x := io{tgt: rng.IntN(2), off: int64(rng.IntN(64)) * 4096}
				x.end = x.off + 4096*int64(1+rng.IntN(2))
				want := false
				for _, y := range batch {
					want = want || y.tgt == x.tgt && (y.end == x.off || x.end == y.off)
				}
				require.Equal(t, want, e.add(x.tgt, x.off, x.end), "n %d: %+v in %+v", n, x, batch)
				batch = append(batch, x)
			}
			e.next()
			y := batch[0]
			require.False(t, e.add(y.tgt, y.end, y.end+4096), "a new batch starts empty")
			e.next()
		}
	}
}
