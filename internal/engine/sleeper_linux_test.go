package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A timer that expires before its goroutine reaches the poller still ends
// the wait: the runtime's poller is edge-triggered and forgets a readiness
// that came before the wait began, so only a read sees such an expiry (a
// short slot, or a goroutine preempted between arming and waiting). Were
// the wake lost, wait would park with no edge to come and this test would
// hang until go test's timeout.
func TestTimerFDExpiredBeforeTheWait(t *testing.T) {
	tf, err := newTimerFD()
	require.NoError(t, err)
	defer tf.close()
	for range 5 {
		deadline := Nanotime() + int64(100*time.Microsecond)
		require.NoError(t, tf.arm(deadline))
		//hygiene:sleep the point: the timer expires, and the idle runtime's poller sees its edge, before the wait begins
		time.Sleep(2 * time.Millisecond)
		require.NoError(t, tf.wait())
		require.GreaterOrEqual(t, Nanotime(), deadline)
	}
}
