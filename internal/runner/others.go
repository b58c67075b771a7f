package runner

import (
	"github.com/ioprobe/ioprobe/pkg/result"
)

// bioBytes is the most one bio of a direct I/O carries (BIO_MAX_VECS
// pages of 4 KiB): a larger transfer is submitted as several, which the
// kernel counts as requests or as merges.
const bioBytes = 1 << 20

// hostOthers is what other processes did on the host during win (see
// result.HostOthers): their share of the CPU, and the I/O the devices
// served beyond ioprobe's own. It needs the summary and the safety
// checks' reads in the window.
func hostOthers(res *result.Result, win *window) *result.HostOthers {
	if win.usage.Host.All.Total() == 0 {
		return nil // the host's CPU was not measured: nothing to say
	}
	var kthreads uint64
	if win.tasksOK {
		kthreads = win.tasks1.Sub(win.tasks0).KThreadTicks
	}
	o := &result.HostOthers{CPUFraction: win.usage.OthersFraction(kthreads)}
	s, d := &res.Summary, res.Summary.Device
	if d == nil || buffered(res) {
		return o
	}
	var checkOps, checkBytes uint64
	if c := res.SafetyChecks; c != nil {
		checkOps, checkBytes = c.WindowReadOps, c.WindowReadBytes
	}
	// The kernel counts requests and the I/Os merged into them: each of
	// ioprobe's I/Os is one, or one per piece when it is larger than a
	// request or a bio.
	piece := int64(bioBytes)
	if win.maxRequest > 0 {
		piece = min(piece, win.maxRequest)
	}
	pieces := uint64(max(1, (largestTransfer(res)+piece-1)/piece))
	exOps := less(d.ReadOps+d.WriteOps+d.ReadMerges+d.WriteMerges, (s.ReadOps+s.WriteOps)*pieces+checkOps)
	exBytes := less(d.ReadBytes+d.WriteBytes, s.ReadBytes+s.WriteBytes+checkBytes)
	// What other processes submitted to storage bounds the excess: the
	// rest is the kernel's own work for ioprobe (a journal commit after
	// a flush, a filesystem's lazy initialisation). Their I/Os are the
	// excess's in the same proportion.
	if t := win.tasks1.Sub(win.tasks0); win.tasksOK && t.Complete && t.OthersIOBytes < exBytes {
		exOps = uint64(float64(exOps) * float64(t.OthersIOBytes) / float64(exBytes))
		exBytes = t.OthersIOBytes
	}
	o.DeviceOps, o.DeviceBytes = &exOps, &exBytes
	return o
}

// less is a − b, 0 when b is larger.
func less(a, b uint64) uint64 {
	if b >= a {
		return 0
	}
	return a - b
}

// buffered says that some of the run's I/O went through the page cache:
// the device then saw what write-back and read-ahead made of it.
func buffered(res *result.Result) bool {
	if res.Workload.Buffered {
		return true
	}
	for _, g := range res.Groups {
		if g.Buffered {
			return true
		}
	}
	return false
}

// largestTransfer is the largest transfer of any access specification
// of the run.
func largestTransfer(res *result.Result) int64 {
	var n int64
	for _, w := range append([]result.Workload{res.Workload}, res.Groups...) {
		for _, b := range w.BlockSizes {
			n = max(n, b.Bytes)
		}
		for _, l := range w.Lines {
			n = max(n, l.Bytes)
		}
	}
	return n
}
