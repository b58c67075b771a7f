package engine

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTake: the I/O that starts while fewer than the budget's I/Os and
// bytes went before it is issued, the next is not; without a budget
// everything is.
func TestTake(t *testing.T) {
	w := &Worker{budget: newBudget(2, 3, 0, 1<<20)}
	for i := 0; i < 6; i++ {
		require.True(t, w.Take(4096), "I/O %d of 2 loops × 3", i)
	}
	require.False(t, w.Take(4096))

	w = &Worker{budget: newBudget(1, 0, 10000, 1<<20)}
	require.True(t, w.Take(4096))
	require.True(t, w.Take(4096))
	require.True(t, w.Take(4096), "8192 bytes went before: under 10000")
	require.False(t, w.Take(4096))

	w = &Worker{budget: newBudget(3, 0, 0, 8192)}
	for i := 0; i < 6; i++ {
		require.True(t, w.Take(4096), "the region (8 KiB) × 3 loops")
	}
	require.False(t, w.Take(512))

	w = &Worker{budget: newBudget(0, 0, 0, 8192)}
	for i := 0; i < 100; i++ {
		require.True(t, w.Take(1<<20), "no budget")
	}
}

// BenchmarkTake is what the budget costs per I/O: one worker's lanes
// taking from it at once (the sync engine's), and none for a run
// without a budget.
func BenchmarkTake(b *testing.B) {
	b.Run("budget", func(b *testing.B) {
		w := &Worker{budget: newBudget(1, 1<<62, 0, 1<<62)}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				w.Take(4096)
			}
		})
	})
	b.Run("none", func(b *testing.B) {
		w := &Worker{}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			w.Take(4096)
		}
	})
}
