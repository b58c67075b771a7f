package runner

import (
	"sort"
	"time"

	"github.com/ioprobe/ioprobe/internal/cpuacct"
	"github.com/ioprobe/ioprobe/internal/target"
)

// window is the measured period: wall time, CPU, and the kernel's own
// block-layer counters of every device under the targets.
type window struct {
	t0, t1  time.Time
	cpu     *cpuacct.Window
	usage   cpuacct.Usage
	cpuErr  error
	devices []string
	disk0   map[string]target.DiskStats
	disk1   map[string]target.DiskStats
}

func startWindow(targets []*openTarget) *window {
	w := &window{disk0: map[string]target.DiskStats{}, disk1: map[string]target.DiskStats{}}
	seen := map[string]bool{}
	for _, ot := range targets {
		if d := ot.t.Device; d != "" && !seen[d] {
			seen[d] = true
			w.devices = append(w.devices, d)
		}
	}
	sort.Strings(w.devices)
	w.readDisks(w.disk0)
	w.cpu = cpuacct.Start()
	w.t0 = time.Now()
	return w
}

func (w *window) stop() {
	w.t1 = time.Now()
	w.usage, w.cpuErr = w.cpu.Stop()
	w.readDisks(w.disk1)
}

func (w *window) readDisks(into map[string]target.DiskStats) {
	for _, d := range w.devices {
		if st, err := target.ReadDiskStats("", d); err == nil {
			into[d] = st
		}
	}
}
