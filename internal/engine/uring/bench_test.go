package uring_test

import (
	"testing"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/engine/enginetest"
	"github.com/ioprobe/ioprobe/internal/engine/uring"
)

// BenchmarkRandRead4k: one op is one 4 KiB random read; see enginetest.Bench.
func BenchmarkRandRead4k(b *testing.B) {
	enginetest.Bench(b, func() engine.Engine { return uring.New() })
}
