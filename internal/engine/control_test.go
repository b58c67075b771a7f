package engine_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Failures that arrive together on several lanes once the error budget is
// spent stop the run once: onStop (the runner cancels the run with it; a
// test closes a channel) is called exactly once.
func TestErrorBudgetStopsOnce(t *testing.T) {
	for round := 0; round < 200; round++ {
		var calls int
		var mu sync.Mutex
		ctl := engine.NewControl(1, func() { mu.Lock(); calls++; mu.Unlock() })
		start := make(chan struct{})
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := &engine.Lane{Worker: g}
				op := &engine.IO{Op: workload.Op{Len: 4096}}
				<-start
				ctl.Fail(s, op, 5, -5)
			}()
		}
		close(start)
		wg.Wait()
		require.True(t, ctl.Stopped())
		require.EqualValues(t, 8, ctl.Errors())
		require.Equal(t, 1, calls, "round %d: onStop called %d times", round, calls)
	}
}
