//go:build linux

package enginetest

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// testNoAllocsPerIO: once running, an engine's hot path allocates nothing
// per I/O, unpaced at QD 1 and 8, paced (the canary's path: the pacer, the
// sleeper, a paced ring's brief wait) and batched. The heap's allocation
// count is read at the warm-th and the last completion (the benchmarks'
// hot-allocs/op, as a test): between them, fewer allocations than one per
// hundred I/Os, whatever the machine's speed (the counts, not the time,
// are asserted; a paced run of 20,000 IOPS lasts a fraction of a second).
func testNoAllocsPerIO(t *testing.T, f Factory, path string) {
	fd := openDirect(t, path, unix.O_RDONLY)
	rr := workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 4 * kib, Weight: 1}}, ReadPct: 100, RandomPct: 100, Workers: 1, Duration: 1}
	for _, c := range []struct {
		name string
		edit func(*workload.Spec)
	}{
		{"qd1", func(s *workload.Spec) { s.QueueDepth = 1 }},
		{"qd8", func(s *workload.Spec) { s.QueueDepth = 8 }},
		{"qd1-paced", func(s *workload.Spec) { s.QueueDepth = 1; s.RateIOPS = 20_000 }},
		{"qd8-batched", func(s *workload.Spec) { s.QueueDepth = 8; s.SubmitBatch = 8; s.CompleteMin = 8 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := rr
			c.edit(&spec)
			const n = 2000
			run := runHot(t, f, spec, engine.Target{FD: fd, Region: workload.Region{Len: 8 * mib}}, 7, 500, n, func() {}, func() {})
			require.Less(t, run.allocs, uint64(n/100), "%d heap allocations over %d I/Os: the hot path allocates per I/O", run.allocs, n)
		})
	}
}
