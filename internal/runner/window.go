package runner

import (
	"sort"
	"time"

	"github.com/ioprobe/ioprobe/internal/cpuacct"
	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/target"
)

// window is the measured period: wall time, CPU, and the kernel's own
// block-layer counters of every device under the targets.
//
// The kernel's counters are read just before and just after counting is
// switched on (and off), and the window takes the midpoint of each pair:
// on a loaded host the runner can be descheduled between the two steps,
// and every I/O that completes in that gap is one side's and not the
// other's. The midpoint halves that error and does not lean either way.
type window struct {
	t0, t1  time.Time
	cpu     *cpuacct.Window
	usage   cpuacct.Usage
	cpuErr  error
	devices []string
	// flushDisks are the whole disks of the devices that are partitions,
	// by partition: a flush is the disk's request, counted on the disk
	// only, so the window takes a partition's flushes from its disk.
	flushDisks map[string]string
	// disk0 and disk1 hold the sums of the two readings around the start
	// and the end (halve their difference for the delta).
	disk0 map[string]target.DiskStats
	disk1 map[string]target.DiskStats
	// devLat times the devices' requests in the kernel while the window
	// is open, switched with the counting.
	devLat *deviceLatency
	// tasks0 and tasks1 are looks at every process just outside the
	// window's ends (the kernel threads' CPU, other processes' I/O), for
	// summary.host_others; tasksOK says both were taken in time.
	tasks0, tasks1 cpuacct.Tasks
	tasksOK        bool
	tasksHurried   bool // the end's look was not waited for: the run was interrupted
	// maxRequest is the largest request the devices take (the smallest
	// of their max_sectors_kb), 0 when unknown.
	maxRequest int64
}

// tasksWait bounds a look at the host's processes (see
// cpuacct.LookAtTasks): no process may hold the window.
const tasksWait = time.Second

// startWindow samples everything and switches counting on; opening, if
// set, is called as counting goes on (between the two readings).
func startWindow(targets []*openTarget, ctl *engine.Control, devLat *deviceLatency, opening func()) *window {
	w := &window{disk0: map[string]target.DiskStats{}, disk1: map[string]target.DiskStats{}, devLat: devLat}
	seen := map[string]bool{}
	for _, ot := range targets {
		if d := ot.t.Device; d != "" && !seen[d] {
			seen[d] = true
			w.devices = append(w.devices, d)
		}
	}
	sort.Strings(w.devices)
	for _, d := range w.devices {
		if m := target.MaxRequestBytes("", d); m > 0 && (w.maxRequest == 0 || m < w.maxRequest) {
			w.maxRequest = m
		}
	}
	// Outside the two readings of the kernel's counters, which the
	// window's start lies between.
	endLook := BeginStep("the look at the host's processes")
	w.tasks0, w.tasksOK = cpuacct.LookAtTasks(tasksWait)
	endLook()
	w.flushDisks = map[string]string{}
	for _, d := range w.devices {
		if disk := target.FlushDisk("", d); disk != d {
			w.flushDisks[d] = disk
		}
	}
	before := w.readDisks()
	w.cpu = cpuacct.Start()
	w.t0 = time.Now()
	ctl.SetMeasuring(true)
	devLat.record(true)
	if opening != nil {
		opening()
	}
	w.disk0 = sumStats(before, w.readDisks())
	return w
}

// stop switches counting off and samples everything again; closing, if
// set, is called as counting goes off (between the two readings). The
// look at the host's processes is not waited for once hurry is closed
// (the run was interrupted): it takes up to tasksWait on a loaded host.
func (w *window) stop(ctl *engine.Control, hurry <-chan struct{}, closing func()) {
	before := w.readDisks()
	ctl.SetMeasuring(false)
	w.devLat.record(false)
	if closing != nil {
		closing()
	}
	w.t1 = time.Now()
	w.usage, w.cpuErr = w.cpu.Stop()
	w.disk1 = sumStats(before, w.readDisks())
	endLook := BeginStep("the look at the host's processes")
	t1, ok := cpuacct.LookAtTasksUnless(tasksWait, hurry)
	endLook()
	w.tasks1, w.tasksOK = t1, w.tasksOK && ok
	w.tasksHurried = !ok && isClosed(hurry)
}

// isClosed says whether c is closed (a nil c never is).
func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func (w *window) readDisks() map[string]target.DiskStats {
	out := map[string]target.DiskStats{}
	read := func(d string) {
		if _, done := out[d]; done {
			return
		}
		if st, err := target.ReadDiskStats("", d); err == nil {
			out[d] = st
		}
	}
	for _, d := range w.devices {
		read(d)
	}
	for _, d := range w.devices {
		if disk, ok := w.flushDisks[d]; ok {
			read(disk)
		}
	}
	return out
}

// sumStats adds two readings of the counters the window uses, per device
// read both times.
func sumStats(a, b map[string]target.DiskStats) map[string]target.DiskStats {
	out := map[string]target.DiskStats{}
	for d, x := range a {
		y, ok := b[d]
		if !ok {
			continue
		}
		out[d] = target.DiskStats{
			ReadOps: x.ReadOps + y.ReadOps, ReadSectors: x.ReadSectors + y.ReadSectors,
			WriteOps: x.WriteOps + y.WriteOps, WriteSectors: x.WriteSectors + y.WriteSectors,
			ReadMerges: x.ReadMerges + y.ReadMerges, WriteMerges: x.WriteMerges + y.WriteMerges,
			ReadTicks: x.ReadTicks + y.ReadTicks, WriteTicks: x.WriteTicks + y.WriteTicks,
			IOTicks: x.IOTicks + y.IOTicks, QueueTicks: x.QueueTicks + y.QueueTicks,
			FlushOps: x.FlushOps + y.FlushOps, FlushTicks: x.FlushTicks + y.FlushTicks,
		}
	}
	return out
}
