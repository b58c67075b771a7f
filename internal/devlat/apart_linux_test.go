package devlat

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/ownio"
	"github.com/ioprobe/ioprobe/internal/target"
	"github.com/ioprobe/ioprobe/internal/testdeps"
	"github.com/ioprobe/ioprobe/internal/testloop"
	"github.com/ioprobe/ioprobe/internal/testwait"
)

// TestNoHashMapPerRequest: the programs use arrays only (the per-request
// state is an array slot per driver tag, the device filter an array
// searched by open addressing), never write a map through a helper (no
// update or delete call in their code), and the filter is read-only to
// them. An LRU hash per request cost more than the programs themselves
// (issue 36).
func TestNoHashMapPerRequest(t *testing.T) {
	spec, err := loadDevlat()
	require.NoError(t, err)
	for _, name := range []string{devlatProgRqIssue, devlatProgRqComplete} {
		p := spec.Programs[name]
		require.NotNil(t, p, name)
		for _, ins := range p.Instructions {
			if ins.IsBuiltinCall() {
				require.NotContains(t, []asm.BuiltinFunc{asm.FnMapUpdateElem, asm.FnMapDeleteElem}, asm.BuiltinFunc(ins.Constant), "%s calls a map-writing helper: %v", name, ins)
			}
		}
	}
	for name, m := range spec.Maps {
		if strings.HasPrefix(name, ".") {
			continue // the globals' sections (.bss, .rodata)
		}
		require.Contains(t, []ebpf.MapType{ebpf.Array, ebpf.PerCPUArray}, m.Type, "%s is a %v", name, m.Type)
	}
	require.NotZero(t, spec.Maps[devlatMapFilter].Flags&unix.BPF_F_RDONLY_PROG, "the filter is read-only to the programs")
	require.Len(t, spec.Programs, 3, "rq_issue, rq_complete and the tests' bucket_of")
}

// TestOwnReadsAreCountedApart: reads made through ownio.Do carry
// ioprobe's mark; the programs count them (and their bytes) apart and
// time only the others, while the kernel's diskstats count both; under
// each I/O scheduler (the mark is a hint: no scheduler drops it).
func TestOwnReadsAreCountedApart(t *testing.T) {
	const size = 16 << 20
	path, dev := loopDevice(t, size)
	require.True(t, ownio.Marks(), "Linux 6.5 or later takes I/O priority hints")
	sched := queueSetting(t, dev.Name, "scheduler")
	for _, s := range []string{"none", "mq-deadline", "bfq"} {
		t.Run(s, func(t *testing.T) {
			if err := os.WriteFile(sched, []byte(s), 0); err != nil {
				t.Skipf("no %s: %v", s, err) //hygiene:skip the kernel's I/O schedulers
			}
			tr := openTracer(t, dev)
			before, err := target.ReadDiskStats("", dev.Name)
			require.NoError(t, err)
			require.NoError(t, tr.Record(true))
			const theirs, ours = 300, 40
			readBlocks(t, path, 4096, theirs)
			marked, err := ownio.Do(func() error { readBlocks(t, path, 65536, ours); return nil })
			require.NoError(t, err)
			require.True(t, marked)
			readBlocks(t, path, 4096, theirs)
			require.NoError(t, tr.Record(false))
			after, err := target.ReadDiskStats("", dev.Name)
			require.NoError(t, err)
			rs, err := tr.Read()
			require.NoError(t, err)
			r := rs[0]
			ks := after.Sub(before)
			t.Logf("diskstats %d reads; timed %d, own %d (%d bytes), untimed %d", ks.ReadOps, r.Hist.Read.Count(), r.Own, r.OwnBytes, r.Untimed)
			require.EqualValues(t, 2*theirs, r.Hist.Read.Count(), "the workload's reads, timed")
			require.EqualValues(t, ours, r.Own, "ioprobe's own, counted apart")
			require.EqualValues(t, ours*65536, r.OwnBytes)
			require.EqualValues(t, 2*theirs*4096, r.ReadBytes)
			require.EqualValues(t, ks.ReadOps, r.Hist.Read.Count()+r.Own, "the kernel counts both")
		})
	}
}

// readBlocks reads n blocks of bs bytes with O_DIRECT from the start of
// path, one at a time.
func readBlocks(t *testing.T, path string, bs, n int) {
	fd, buf := openDirect(t, path, unix.O_RDONLY, bs)
	for i := range n {
		_, err := unix.Pread(fd, buf, int64(i*bs))
		require.NoError(t, err)
	}
}

// TestPartitionFlushesCountForIt: a flush request is the whole disk's
// (the block layer counts it on the disk, never on a partition); the
// programs count the disk's flushes for a watched partition whose disk
// is not watched, as many as the disk's diskstats.
func TestPartitionFlushesCountForIt(t *testing.T) {
	testdeps.Need(t, testdeps.Tool("sfdisk"), testdeps.Tool("partx"))
	img := filepath.Join(t.TempDir(), "disk.img")
	require.NoError(t, os.WriteFile(img, nil, 0o600))
	require.NoError(t, os.Truncate(img, 32<<20))
	sfdisk := exec.Command("sfdisk", "-q", img)
	sfdisk.Stdin = strings.NewReader("label: dos\n,16MiB,L\n")
	out, err := sfdisk.CombinedOutput()
	require.NoError(t, err, "%s", out)
	disk := testloop.File(t, img)
	part := disk + "p1"
	out, err = exec.Command("partx", "-a", disk).CombinedOutput() // no partition scan without --partscan
	require.NoError(t, err, "%s", out)
	// A partition added by hand outlives the loop device's detach: it
	// goes first (cleanups run last first), or the next test to attach
	// this loop device finds it.
	t.Cleanup(func() {
		if out, err := exec.Command("partx", "-d", disk).CombinedOutput(); err != nil {
			t.Errorf("partx -d %s: %v: %s", disk, err, out)
		}
	})
	require.Eventually(t, func() bool { _, err := os.Stat(part); return err == nil }, testwait.Patience, 10*time.Millisecond)
	dev, err := Resolve("", filepath.Base(part))
	require.NoError(t, err)
	require.Equal(t, filepath.Base(disk), dev.Disk)
	tr := openTracer(t, dev)

	fd, buf := openDirect(t, part, unix.O_WRONLY, 4096)
	before, err := target.ReadDiskStats("", dev.Disk)
	require.NoError(t, err)
	partBefore, err := target.ReadDiskStats("", dev.Name)
	require.NoError(t, err)
	require.NoError(t, tr.Record(true))
	const n = 200
	for i := range n {
		_, err := unix.Pwrite(fd, buf, int64(i)*4096)
		require.NoError(t, err)
		require.NoError(t, unix.Fdatasync(fd))
	}
	require.NoError(t, tr.Record(false))
	after, err := target.ReadDiskStats("", dev.Disk)
	require.NoError(t, err)
	partStats, err := target.ReadDiskStats("", dev.Name)
	require.NoError(t, err)
	rs, err := tr.Read()
	require.NoError(t, err)
	r, d := rs[0], after.Sub(before)
	// Where every request went, before any check: the partition's
	// diskstats count its writes and, as writes too, the empty requests
	// that asked for the flushes (ended by the flush machinery without
	// being issued: the programs leave them out, as requests no device
	// served); the programs' runs the kernel skipped (recursion) are
	// requests they never saw.
	misses := func(p *ebpf.Program) uint64 {
		st, err := p.Stats()
		require.NoError(t, err)
		return st.RecursionMisses
	}
	t.Logf("%d writes and fdatasyncs; the disk's flushes %d, the partition's (ever) %d, its writes %d; the programs: %d flushes, %d writes, untimed %d, own %d; runs skipped: completion %d, issue %d",
		n, d.FlushOps, partStats.FlushOps, partStats.Sub(partBefore).WriteOps, r.Hist.Flush.Count(), r.Hist.Write.Count(), r.Untimed, r.Own,
		misses(tr.objs.RqComplete), misses(tr.objs.RqIssue))
	require.Zero(t, partStats.FlushOps, "the kernel never counts a flush on a partition")
	require.GreaterOrEqual(t, d.FlushOps, uint64(n))
	require.Zero(t, r.Untimed)
	// Every flush the programs count is one of the disk's, and they count
	// all but the few completions the kernel did not run them for. Under
	// load the kernel now and then fires block_rq_complete without
	// running the attached BPF programs, and counts no recursion miss for
	// it (notes/flush.md: ftrace's own probe recorded the flush's
	// completion and its preflush request's end in a softirq, the
	// programs' first instruction never ran for either; 1 or 2 flushes
	// of 200 in 9 of 660 runs, two at once beside make test, never a
	// flush or write that did not happen). A program that left the partition's flushes out
	// counts none; one that counted a request twice, or another disk's,
	// counts more than diskstats.
	unrun := n / 100
	require.LessOrEqual(t, r.Hist.Flush.Count(), d.FlushOps, "never more flushes than the disk's")
	require.GreaterOrEqual(t, r.Hist.Flush.Count()+uint64(unrun), d.FlushOps, "the disk's flushes, counted for the partition: all but at most %d, completions the kernel did not run the programs for", unrun)
	require.LessOrEqual(t, r.Hist.Write.Count(), partStats.Sub(partBefore).WriteOps, "never more writes than the partition's")
	require.GreaterOrEqual(t, r.Hist.Write.Count()+uint64(unrun), uint64(n), "the partition's writes")
	// The block layer issues its flush requests from kblockd, outside any
	// plug: their issue time is the kernel's own (io_start_time_ns). Each
	// flush's time as the programs take it (issue to completion) lies
	// inside the span diskstats count for it: from the flush request's
	// start, before kblockd picks it up, to its end_io, after the
	// completion. So the programs' sum is at most diskstats', which
	// /proc/diskstats shows in whole milliseconds (the floor of a running
	// sum: a window's difference is at most 1 ms short of the truth). No
	// ratio: the wait for kblockd is in diskstats' time alone and grows
	// with the machine's load (at load 30 diskstats' mean was 1.02 to
	// 1.43 times the programs').
	t.Logf("flush time: diskstats %d ms (mean %.3f ms), programs %.3f ms (mean %.3f ms, min %d ns)",
		d.FlushTicks, float64(d.FlushTicks)/float64(d.FlushOps), float64(r.Hist.Flush.Sum())/1e6, r.Hist.Flush.Mean()/1e6, r.Hist.Flush.Min())
	require.Positive(t, r.Hist.Flush.Min(), "every flush issued before it completed")
	require.LessOrEqual(t, r.Hist.Flush.Sum(), (d.FlushTicks+1)*uint64(time.Millisecond), "the programs' flush time within diskstats'")
}

// TestQueueTimeNeedsTheKernelsStart: the queue time is the kernel's own
// start stamp to issue. A queue with I/O statistics (iostats 1, the
// default) stamps every request; one without them, and without an I/O
// scheduler, stamps none (blk_mq_need_time_stamp), and its requests are
// timed without a queue time and counted as such (NoStart).
func TestQueueTimeNeedsTheKernelsStart(t *testing.T) {
	const size = 16 << 20
	path, dev := loopDevice(t, size)
	// Loop devices outlive their tests: the settings go back as found.
	// No scheduler: one would stamp every request's start itself.
	require.NoError(t, os.WriteFile(queueSetting(t, dev.Name, "scheduler"), []byte("none"), 0))
	iostats := queueSetting(t, dev.Name, "iostats")
	for _, on := range []bool{true, false} {
		v := "0"
		if on {
			v = "1"
		}
		require.NoError(t, os.WriteFile(iostats, []byte(v), 0))
		tr, err := Open([]Device{dev})
		require.NoError(t, err)
		require.NoError(t, tr.Record(true))
		readBlocks(t, path, 4096, 500)
		require.NoError(t, tr.Record(false))
		rs, err := tr.Read()
		require.NoError(t, err)
		h := rs[0].Hist
		t.Logf("iostats %s: %d reads timed, %d with a queue time (mean %.0f ns, max %d), %d without", v, h.Read.Count(), h.QueueRead.Count(), float64(h.QueueRead.Sum())/float64(max(h.QueueRead.Count(), 1)), h.QueueRead.Max(), rs[0].NoStart)
		require.EqualValues(t, 500, h.Read.Count())
		if on {
			require.EqualValues(t, 500, h.QueueRead.Count(), "every request has the kernel's start")
			require.Zero(t, rs[0].NoStart)
		} else {
			require.Zero(t, h.QueueRead.Count())
			require.EqualValues(t, 500, rs[0].NoStart, "no start stamp: said so")
		}
		require.NoError(t, tr.Close())
	}
}
