//go:build linux

package syncio_test

import (
	"testing"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/engine/enginetest"
	"github.com/ioprobe/ioprobe/internal/engine/syncio"
)

func TestConformance(t *testing.T) {
	enginetest.Run(t, func() engine.Engine { return syncio.New() })
}

func BenchmarkRandRead4kQD1(b *testing.B) {
	enginetest.Benchmark(b, func() engine.Engine { return syncio.New() }, 1)
}

func BenchmarkRandRead4kQD16(b *testing.B) {
	enginetest.Benchmark(b, func() engine.Engine { return syncio.New() }, 16)
}

func BenchmarkRandRead4kQD32(b *testing.B) {
	enginetest.Benchmark(b, func() engine.Engine { return syncio.New() }, 32)
}

// One op is one write; see enginetest.BenchmarkWrites.
func BenchmarkWriteQD16(b *testing.B) {
	enginetest.BenchmarkWrites(b, func() engine.Engine { return syncio.New() }, 16)
}

// One op is one I/O under a rate no device reaches; see
// enginetest.BenchmarkPaced.
func BenchmarkRandRead4kQD1Paced(b *testing.B) {
	enginetest.BenchmarkPaced(b, func() engine.Engine { return syncio.New() }, 1)
}

func BenchmarkRandRead4kQD16Paced(b *testing.B) {
	enginetest.BenchmarkPaced(b, func() engine.Engine { return syncio.New() }, 16)
}
