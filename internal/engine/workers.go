package engine

import (
	"errors"
	"fmt"

	"github.com/ioprobe/ioprobe/internal/iobuf"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// WorkerSet describes one group of identical workers: one access
// specification over a set of targets. A run is one or more groups (the
// business suite's mixed run gives each workload its own workers).
type WorkerSet struct {
	Spec    *workload.Spec
	Targets []Target
	Ctl     *Control
	Start   <-chan struct{}
	Seed    uint64
	FirstID int       // ID of the first worker, so IDs are unique across groups
	Verify  *Verifier // --verify, shared by every worker of the run (nil: off)
	// Ready, when set, is called once for each worker when it is set up
	// and about to wait for Start (see Worker.WaitStart), so the runner
	// can open the start barrier only when every worker is ready.
	Ready func()
}

// NewWorkers builds spec.Workers workers, each with its own page-aligned
// buffers (queue depth × targets slots of the largest transfer) and its own
// sequential cursor per target. Cursors of different workers start evenly
// spread over the region, so sequential workers sharing a target do not
// read the same blocks (which a cache would serve) — except in fio's stream
// model (sequential_streams "direction"), where every worker starts at the
// region's start as fio's job clones do (offset_increment=0).
func NewWorkers(set WorkerSet) ([]*Worker, error) {
	spec := set.Spec
	if len(set.Targets) == 0 {
		return nil, errors.New("no targets")
	}
	align := spec.Alignment()
	var out []*Worker
	perWorkerRate := 0.0
	if spec.RateIOPS > 0 {
		perWorkerRate = float64(spec.RateIOPS) / float64(spec.Workers)
	}
	if spec.CloneFiles && len(set.Targets)%spec.Workers != 0 {
		return nil, fmt.Errorf("%d targets cannot be shared out evenly over %d workers (each its own files)", len(set.Targets), spec.Workers)
	}
	for i := 0; i < spec.Workers; i++ {
		id := set.FirstID + i
		targets, err := workerTargets(spec, set.Targets, i)
		if err != nil {
			CloseWorkers(out)
			return nil, fmt.Errorf("worker %d: %w", id, err)
		}
		var regions int64 // fio's default io_size: the job's size over all its files
		for _, t := range targets {
			regions += t.Region.Len
		}
		slots := spec.QueueDepth * len(targets)
		if spec.FilesInTurn > 0 {
			slots = spec.QueueDepth // one queue over the targets in turn
		}
		bufs, err := iobuf.New(slots, int(spec.MaxBlock()), set.Seed^uint64(id+1)*0x2545f4914f6cdd1d)
		if err != nil {
			CloseWorkers(out)
			return nil, fmt.Errorf("worker %d: %w", id, err)
		}
		w := &Worker{
			ID:         id,
			Spec:       spec,
			Targets:    targets,
			QueueDepth: spec.QueueDepth,
			Start:      set.Start,
			Ctl:        set.Ctl,
			Buffers:    bufs,
			Seed:       set.Seed,
			RateIOPS:   perWorkerRate,
			RateBPS:    [2]float64{float64(spec.RateReadBPS) / float64(spec.Workers), float64(spec.RateWriteBPS) / float64(spec.Workers)},
			Verify:     set.Verify,
			ready:      set.Ready,
			flush:      newFlushState(spec, len(targets)),
			budget:     newBudget(spec.Loops, spec.IOCount, spec.IOBytes, regions),
		}
		if c := contentOf(spec, regions); c != nil {
			w.content = iobuf.NewStream(*c, set.Seed^uint64(id+1)*0x9e3779b97f4a7c15)
			w.refill = spec.Buffer.Refill
			w.fillOnce = !spec.Buffer.Refill && !spec.Buffer.Random()
			w.fillSlots()
		}
		for _, t := range targets {
			start := t.Region.Len / int64(spec.Workers) * int64(i)
			if spec.SequentialStreams == workload.StreamsDirection {
				start = 0
			}
			w.Cursors = append(w.Cursors, workload.NewCursor(start, align))
		}
		out = append(out, w)
	}
	return out, nil
}

// workerTargets are worker k's targets: its share of them with
// Spec.CloneFiles, else all; each with the worker's own region when the
// spec places it (Offset, OffsetIncrement: fio's offset and
// offset_increment × the clone's number), RegionBytes long or to the
// target region's end.
func workerTargets(spec *workload.Spec, all []Target, k int) ([]Target, error) {
	ts := all
	if spec.CloneFiles {
		n := len(all) / spec.Workers
		ts = all[k*n : (k+1)*n]
	}
	start := spec.WorkerRegion(k)
	if start == 0 {
		return ts, nil
	}
	out := make([]Target, len(ts))
	for i, t := range ts {
		r := t.Region
		if spec.RegionBytes > 0 {
			// The target holds the regions of every worker (the runner
			// opened it for Spec.Extent).
			r.Len = spec.RegionBytes
		} else {
			// To the end of what the target holds (fio: io_size is the
			// file's size less the clone's offset).
			r.Len -= start
			if a := spec.Alignment(); r.Len > 0 {
				r.Len -= r.Len % a
			}
		}
		if r.Len < spec.MaxBlock() {
			return nil, fmt.Errorf("%s: its region from offset %d holds no %d-byte transfer (the target's region is %d bytes)", t.Path, start, spec.MaxBlock(), t.Region.Len)
		}
		r.Start += start
		t.Region = r
		out[i] = t
	}
	return out, nil
}

// CloseWorkers releases the workers' buffers. Call it only after every
// engine Run has returned.
func CloseWorkers(ws []*Worker) {
	for _, w := range ws {
		_ = w.Buffers.Close()
	}
}

// Slot returns the buffer of lane q on target t of a worker, n bytes long.
// Lanes of the sync engine map one to one to slots; ring engines use the
// slot of the I/O's queue position.
func (w *Worker) Slot(t, q int, n int64) []byte {
	return w.Buffers.Slot(t*w.QueueDepth+q, n)
}
