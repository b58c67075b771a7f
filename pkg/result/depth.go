package result

// DepthBuckets is the number of buckets of fio's queue figures.
const DepthBuckets = 7

// Depth is fio's view of a run's queues, as counts in fio's buckets so
// that results add up exactly (fio's iodepth_level, iodepth_submit and
// iodepth_complete are these as percentages).
//
//   - Level: I/Os by the depth of their worker's queue when they were
//     submitted (they included): 1, 2-3, 4-7, 8-15, 16-31, 32-63, 64 and more
//     (fio's keys "1", "2", "4", "8", "16", "32", ">=64").
//   - Submit: submission calls by the I/Os each carried: 0, 1-4, 5-8,
//     9-16, 17-32, 33-64, more (fio's "0", "4", "8", "16", "32", "64", ">=64").
//   - Complete: looks for completions by the completions each found, in
//     Submit's buckets.
type Depth struct {
	Level    [DepthBuckets]uint64 `json:"level"`
	Submit   [DepthBuckets]uint64 `json:"submit"`
	Complete [DepthBuckets]uint64 `json:"complete"`
}

// LevelBucket is the Level bucket of a queue depth (io_u_mark_depth).
func LevelBucket(depth int) int {
	switch {
	case depth >= 64:
		return 6
	case depth >= 32:
		return 5
	case depth >= 16:
		return 4
	case depth >= 8:
		return 3
	case depth >= 4:
		return 2
	case depth >= 2:
		return 1
	}
	return 0
}

// BatchBucket is the Submit and Complete bucket of a call that handled n
// I/Os (__io_u_mark_map).
func BatchBucket(n int) int {
	switch {
	case n > 64:
		return 6
	case n > 32:
		return 5
	case n > 16:
		return 4
	case n > 8:
		return 3
	case n > 4:
		return 2
	case n > 0:
		return 1
	}
	return 0
}

// Add adds o's counts to d.
func (d *Depth) Add(o *Depth) {
	for i := range d.Level {
		d.Level[i] += o.Level[i]
		d.Submit[i] += o.Submit[i]
		d.Complete[i] += o.Complete[i]
	}
}

// DiskUtil is one device's block-layer counters over the measured window,
// as fio's disk_util reports them: the deltas of /sys/block/DEV/stat
// fields 1, 5 (requests completed), 2, 6 (merged), 4, 8 (milliseconds
// spent on reads, writes), 11 (milliseconds weighted by requests in
// flight, fio's in_queue) and 10 (milliseconds the device was busy), and
// the window's length in milliseconds (fio's util is IOTicksMs ÷ WindowMs).
type DiskUtil struct {
	Name         string `json:"name"`
	ReadIOs      uint64 `json:"read_ios"`
	WriteIOs     uint64 `json:"write_ios"`
	ReadMerges   uint64 `json:"read_merges"`
	WriteMerges  uint64 `json:"write_merges"`
	ReadTicksMs  uint64 `json:"read_ticks_ms"`
	WriteTicksMs uint64 `json:"write_ticks_ms"`
	InQueueMs    uint64 `json:"in_queue_ms"`
	IOTicksMs    uint64 `json:"io_ticks_ms"`
	WindowMs     uint64 `json:"window_ms"`
}

// Util is the share of the window the device was busy, in %, at most 100
// (fio's util).
func (d *DiskUtil) Util() float64 {
	if d.WindowMs == 0 {
		return 0
	}
	return min(100, 100*float64(d.IOTicksMs)/float64(d.WindowMs))
}

// addDiskUtil adds b's counters to the entries of a with the same name,
// and appends the others: repeats of a run on one host add up.
func addDiskUtil(a []DiskUtil, b []DiskUtil) []DiskUtil {
	for _, d := range b {
		i := 0
		for i < len(a) && a[i].Name != d.Name {
			i++
		}
		if i == len(a) {
			a = append(a, d)
			continue
		}
		x := &a[i]
		x.ReadIOs += d.ReadIOs
		x.WriteIOs += d.WriteIOs
		x.ReadMerges += d.ReadMerges
		x.WriteMerges += d.WriteMerges
		x.ReadTicksMs += d.ReadTicksMs
		x.WriteTicksMs += d.WriteTicksMs
		x.InQueueMs += d.InQueueMs
		x.IOTicksMs += d.IOTicksMs
		x.WindowMs += d.WindowMs
	}
	return a
}
