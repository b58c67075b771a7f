package devlat

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/target"
	"github.com/ioprobe/ioprobe/internal/testloop"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// TestBucketIndexIsIoprobes holds the programs' bucket index against
// result.BucketIndex, value by value: every boundary of the layout, its
// neighbours, and random values over the whole range.
func TestBucketIndexIsIoprobes(t *testing.T) {
	testloop.SkipUnlessRoot(t)
	spec, err := loadDevlat()
	require.NoError(t, err)
	prog, err := ebpf.NewProgram(spec.Programs[devlatProgBucketOf])
	require.NoError(t, err)
	defer prog.Close()

	var values []uint64
	for i := 0; i < result.NumBuckets; i++ {
		lo, hi := result.BucketBounds(i)
		values = append(values, lo, hi-1, hi, lo+(hi-lo)/2)
	}
	for range 2000 {
		values = append(values, rand.Uint64N(1<<42), rand.Uint64())
	}
	values = append(values, 0, 1, 1<<40-1, 1<<40, 1<<63, ^uint64(0))
	for _, v := range values {
		ctx := v
		got, err := prog.Run(&ebpf.RunOptions{Context: &ctx})
		require.NoError(t, err)
		require.Equal(t, uint32(result.BucketIndex(v)), got, "bucket of %d ns", v)
	}
}

// TestCountsAndTimeAgreeWithDiskstats: the requests the programs saw are
// the kernel's completions for the same window, and their mean time
// (queue + service) is what the kernel's diskstats accumulate per
// request (from the request's start), within 20%.
func TestCountsAndTimeAgreeWithDiskstats(t *testing.T) {
	const size = 64 << 20
	path, dev := loopDevice(t, size)
	tr := openTracer(t, dev)
	before, err := target.ReadDiskStats("", dev.Name)
	require.NoError(t, err)
	require.NoError(t, tr.Record(true))
	n := directIO(t, path, size, time.Second, 5000)
	require.NoError(t, tr.Record(false))
	after, err := target.ReadDiskStats("", dev.Name)
	require.NoError(t, err)
	rs, err := tr.Read()
	require.NoError(t, err)
	require.Len(t, rs, 1)
	h := rs[0].Hist

	ks := after.Sub(before)
	kernelN := ks.ReadOps + ks.WriteOps + ks.DiscardOps + ks.FlushOps
	seen := h.Read.Count() + h.Write.Count() + h.Flush.Count() + rs[0].Discards
	t.Logf("%d I/Os; programs saw %d requests (%d reads, %d writes); diskstats %d", n, seen, h.Read.Count(), h.Write.Count(), kernelN)
	require.GreaterOrEqual(t, float64(seen), 0.99*float64(n), "every I/O is a request")
	require.InDelta(t, float64(kernelN), float64(seen), float64(kernelN)/100+1, "the programs see the kernel's completions")
	require.InDelta(t, float64(ks.ReadOps), float64(h.Read.Count()), float64(ks.ReadOps)/100+1)
	require.InDelta(t, float64(ks.WriteOps), float64(h.Write.Count()), float64(ks.WriteOps)/100+1)
	// Bytes as the counts: a request may be missed at the edges of the
	// window (1 of 5,000 seen on a loaded machine), never more than 1%.
	require.InDelta(t, float64(ks.ReadBytes()), float64(rs[0].ReadBytes), float64(ks.ReadBytes())/100+1)
	require.InDelta(t, float64(ks.WriteBytes()), float64(rs[0].WriteBytes), float64(ks.WriteBytes())/100+1)

	kernelMs := float64(ks.ReadTicks+ks.WriteTicks) / float64(ks.ReadOps+ks.WriteOps)
	oursNs := float64(h.Read.Sum()+h.Write.Sum()+h.QueueRead.Sum()+h.QueueWrite.Sum()) / float64(h.Read.Count()+h.Write.Count())
	t.Logf("mean per request: diskstats %.4f ms, programs %.4f ms (service %.4f, queue %d inserted)", kernelMs, oursNs/1e6,
		float64(h.Read.Sum()+h.Write.Sum())/float64(h.Read.Count()+h.Write.Count())/1e6, h.QueueRead.Count()+h.QueueWrite.Count())
	require.InEpsilon(t, kernelMs, oursNs/1e6, 0.20)
}

// TestRecordsOnlyWhileRecording: requests completed while recording is
// off are followed, not counted.
func TestRecordsOnlyWhileRecording(t *testing.T) {
	const size = 16 << 20
	path, dev := loopDevice(t, size)
	tr := openTracer(t, dev)
	require.Positive(t, directIO(t, path, size, time.Second, 200))
	rs, err := tr.Read()
	require.NoError(t, err)
	require.Zero(t, rs[0].Hist.Read.Count()+rs[0].Hist.Write.Count())
}

// TestOnlyTheWatchedDevice: I/O on another device is not counted.
func TestOnlyTheWatchedDevice(t *testing.T) {
	const size = 16 << 20
	_, watched := loopDevice(t, size)
	other, _ := loopDevice(t, size)
	tr := openTracer(t, watched)
	require.NoError(t, tr.Record(true))
	require.Positive(t, directIO(t, other, size, time.Second, 200))
	rs, err := tr.Read()
	require.NoError(t, err)
	require.Zero(t, rs[0].Hist.Read.Count()+rs[0].Hist.Write.Count())
}

func TestResolveRefusesBioBasedDevices(t *testing.T) {
	root := t.TempDir()
	mk := func(name, dev string, mq bool) {
		dir := filepath.Join(root, "devices", name)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "dev"), []byte(dev+"\n"), 0o644))
		if mq {
			for q, tags := range []string{"64", "128"} {
				hw := filepath.Join(dir, "mq", fmt.Sprint(q))
				require.NoError(t, os.MkdirAll(hw, 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(hw, "nr_tags"), []byte(tags+"\n"), 0o644))
			}
		}
		require.NoError(t, os.MkdirAll(filepath.Join(root, "class", "block"), 0o755))
		require.NoError(t, os.Symlink(dir, filepath.Join(root, "class", "block", filepath.Base(name))))
	}
	mk("zram0", "253:0", false)
	mk("vda", "254:0", true)
	mk("vda/vda1", "254:1", false)
	require.NoError(t, os.WriteFile(filepath.Join(root, "devices", "vda", "vda1", "partition"), []byte("1\n"), 0o644))

	_, err := Resolve(root, "zram0")
	require.EqualError(t, err, "zram0 is a bio-based device (no blk-mq queue): its I/O never becomes block-layer requests, so it has no request service time to trace")
	d, err := Resolve(root, "vda1")
	require.NoError(t, err)
	require.Equal(t, Device{Name: "vda1", Major: 254, Minor: 1, Disk: "vda", DiskMajor: 254, DiskMinor: 0, HWQueues: 2, Tags: 128}, d)
	require.Equal(t, uint32(254<<20|1), d.kernelDev())
	require.Equal(t, uint32(254<<20), d.diskDev())
	require.True(t, d.Partition())
	_, err = Resolve(root, "../vda")
	require.Error(t, err)
	_, err = Resolve(root, "sdz")
	require.EqualError(t, err, "no block device sdz in "+root+"/class/block")
}

// TestQueueTimeUnderAScheduler: with mq-deadline every request is
// inserted before it is issued, so every one has a queue time, and queue
// plus service time is what diskstats accumulate.
func TestQueueTimeUnderAScheduler(t *testing.T) {
	const size = 64 << 20
	path, dev := loopDevice(t, size)
	sched := queueSetting(t, dev.Name, "scheduler")
	if err := os.WriteFile(sched, []byte("mq-deadline"), 0); err != nil {
		t.Skipf("no mq-deadline: %v", err) //hygiene:skip the kernel's I/O schedulers
	}
	tr := openTracer(t, dev)
	before, err := target.ReadDiskStats("", dev.Name)
	require.NoError(t, err)
	require.NoError(t, tr.Record(true))
	directIO(t, path, size, time.Second, 3000)
	require.NoError(t, tr.Record(false))
	after, err := target.ReadDiskStats("", dev.Name)
	require.NoError(t, err)
	rs, err := tr.Read()
	require.NoError(t, err)
	h := rs[0].Hist
	served, queued := h.Read.Count()+h.Write.Count(), h.QueueRead.Count()+h.QueueWrite.Count()
	t.Logf("served %d, queued %d", served, queued)
	require.Positive(t, served)
	require.InDelta(t, float64(served), float64(queued), float64(served)/100+1, "every request was inserted")
	ks := after.Sub(before)
	kernelMs := float64(ks.ReadTicks+ks.WriteTicks) / float64(ks.ReadOps+ks.WriteOps)
	oursMs := float64(h.Read.Sum()+h.Write.Sum()+h.QueueRead.Sum()+h.QueueWrite.Sum()) / float64(served) / 1e6
	t.Logf("mean per request: diskstats %.4f ms, programs %.4f ms", kernelMs, oursMs)
	require.InEpsilon(t, kernelMs, oursMs, 0.20)
}
