// Command barego is the Go floor for ioprobe's sync engine, beside
// scripts/bareloop's C one: one goroutine, queue depth 1, random O_DIRECT
// reads with pread(2) through syscall.Syscall6 (the runtime's system call
// entry and exit, as the sync engine's), the runtime's monotonic clock
// read just before and just after each, the latency summed: nothing else.
// What ioprobe costs beyond this loop per I/O is its own (a generator, a
// histogram, lane counters); what this loop costs beyond the C one is the
// Go runtime's.
//
//	barego [-b BYTES] [-s BYTES] [-yield=false] -t SECONDS FILE
//
// -yield (default on) yields the processor every 5 ms, as ioprobe's loops
// do: without it the runtime's sysmon preempts the loop every 10 ms in
// the middle of a read and then polls every 20 µs for a while, which costs
// a read loop on a RAM device 10-15% (internal/engine/yield.go).
//
// It prints bareloop's JSON: {"ios":N,"seconds":S,"iops":X,
// "latency_mean_ns":M,"latency_min_ns":A,"latency_max_ns":B,"errors":E}.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"
	_ "unsafe" // go:linkname

	"golang.org/x/sys/unix"
)

//go:linkname nanotime runtime.nanotime
func nanotime() int64

func main() {
	bs := flag.Int64("b", 4096, "transfer size, also the alignment of every offset")
	region := flag.Int64("s", 0, "the region read, from offset 0 (0: the whole file or device)")
	seconds := flag.Float64("t", 0, "run time in seconds")
	yield := flag.Bool("yield", true, "yield the processor every 5 ms, as ioprobe's loops do")
	flag.Parse()
	if flag.NArg() != 1 || *bs <= 0 || *seconds <= 0 || *region < 0 {
		fmt.Fprintln(os.Stderr, "usage: barego [-b BYTES] [-s BYTES] [-yield=false] -t SECONDS FILE")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *bs, *region, *seconds, *yield); err != nil {
		fmt.Fprintln(os.Stderr, "barego:", err)
		os.Exit(1)
	}
}

func run(path string, bs, region int64, seconds float64, yield bool) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if region == 0 {
		if region, err = size(fd); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	blocks := uint64(region / bs)
	if blocks == 0 {
		return fmt.Errorf("%s: region smaller than one block", path)
	}
	// Page-aligned, outside the Go heap, as ioprobe's buffers.
	buf, err := unix.Mmap(-1, 0, int(bs), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return err
	}
	x := uint64(0x9e3779b97f4a7c15) ^ uint64(nanotime()) // xorshift64
	start := nanotime()
	end := start + int64(seconds*1e9)
	next := start + 5_000_000
	t1 := start
	var ios, errs uint64
	var sum, hi int64
	lo := int64(1<<63 - 1)
	for t1 < end {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		off := int64(x%blocks) * bs
		t0 := nanotime()
		n, _, errno := syscall.Syscall6(syscall.SYS_PREAD64, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(bs), uintptr(off), 0, 0)
		t1 = nanotime()
		if errno != 0 || int64(n) != bs {
			errs++
			continue
		}
		lat := t1 - t0
		sum += lat
		lo, hi = min(lo, lat), max(hi, lat)
		ios++
		if yield && t1 >= next {
			runtime.Gosched()
			next = t1 + 5_000_000
		}
	}
	wall := float64(t1-start) / 1e9
	out := map[string]any{"ios": ios, "seconds": wall, "iops": float64(ios) / wall, "latency_mean_ns": 0.0,
		"latency_min_ns": 0, "latency_max_ns": hi, "errors": errs}
	if ios > 0 {
		out["latency_mean_ns"], out["latency_min_ns"] = float64(sum)/float64(ios), lo
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		return err
	}
	if errs > 0 {
		return fmt.Errorf("%d reads failed", errs)
	}
	return nil
}

// size is a block device's size (BLKGETSIZE64) or a file's.
func size(fd int) (int64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFBLK {
		var n uint64
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.BLKGETSIZE64, uintptr(unsafe.Pointer(&n))); errno != 0 {
			return 0, errno
		}
		return int64(n), nil
	}
	return st.Size, nil
}
