//go:build linux

package uring_test

import (
	"testing"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/engine/enginetest"
	"github.com/ioprobe/ioprobe/internal/engine/uring"
)

func factory() engine.Engine { return uring.New() }

func TestConformance(t *testing.T) { enginetest.Run(t, factory) }

// One op is one 4 KiB random read; see enginetest.Benchmark.
func BenchmarkRandRead4kQD1(b *testing.B)  { enginetest.Benchmark(b, factory, 1) }
func BenchmarkRandRead4kQD16(b *testing.B) { enginetest.Benchmark(b, factory, 16) }
func BenchmarkRandRead4kQD32(b *testing.B) { enginetest.Benchmark(b, factory, 32) }

// One op is one 4 KiB random read, the queue submitted and refilled
// whole; see enginetest.BenchmarkBatched.
func BenchmarkRandRead4kQD32Batched(b *testing.B) { enginetest.BenchmarkBatched(b, factory, 32) }

// One op is one write; see enginetest.BenchmarkWrites.
func BenchmarkWriteQD16(b *testing.B) { enginetest.BenchmarkWrites(b, factory, 16) }

// One op is one I/O under a rate no device reaches; see
// enginetest.BenchmarkPaced.
func BenchmarkRandRead4kQD1Paced(b *testing.B) {
	enginetest.BenchmarkPaced(b, factory, 1)
}

func BenchmarkRandRead4kQD16Paced(b *testing.B) {
	enginetest.BenchmarkPaced(b, factory, 16)
}
