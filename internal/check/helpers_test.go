package check

import (
	"time"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// samples makes a histogram of fast samples at base and slow ones at
// tail: slow of n.
func samples(n, slow int, base, tail time.Duration) *result.Histogram {
	h := result.NewHistogram()
	for i := 0; i < n-slow; i++ {
		h.Record(int64(base))
	}
	for i := 0; i < slow; i++ {
		h.Record(int64(tail))
	}
	return h
}
