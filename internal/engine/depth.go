package engine

import (
	"sync/atomic"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// DepthStats are fio's queue figures of one worker, counted while the
// control measures, in fio's buckets (io_u.c: io_u_mark_depth,
// __io_u_mark_map): how deep the worker's queue was when each I/O was
// submitted (iodepth_level), how many I/Os each submission call carried
// (iodepth_submit) and how many completions each reap found
// (iodepth_complete). Only the worker's engine loop writes them; a
// snapshot reads them at any time.
type DepthStats struct {
	level    [result.DepthBuckets]atomic.Uint64
	submit   [result.DepthBuckets]atomic.Uint64
	complete [result.DepthBuckets]atomic.Uint64
}

// Submitted records one submission call that handed n I/Os to the kernel
// with depth I/Os in flight once they were (these n included).
func (d *DepthStats) Submitted(n, depth int) {
	d.submit[result.BatchBucket(n)].Add(1)
	if n > 0 {
		d.level[result.LevelBucket(depth)].Add(uint64(n))
	}
}

// SubmittedEach records n I/Os each submitted on its own with depth I/Os
// in flight and reaped on its own: a synchronous engine's, where a call is
// an I/O.
func (d *DepthStats) SubmittedEach(n uint64, depth int) {
	d.submit[result.BatchBucket(1)].Add(n)
	d.complete[result.BatchBucket(1)].Add(n)
	d.level[result.LevelBucket(depth)].Add(n)
}

// Reaped records one look for completions that found n.
func (d *DepthStats) Reaped(n int) { d.complete[result.BatchBucket(n)].Add(1) }

// Add adds d's counts to out.
func (d *DepthStats) Add(out *result.Depth) {
	for i := range out.Level {
		out.Level[i] += d.level[i].Load()
		out.Submit[i] += d.submit[i].Load()
		out.Complete[i] += d.complete[i].Load()
	}
}
