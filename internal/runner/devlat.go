package runner

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/ioprobe/ioprobe/internal/devlat"
	"github.com/ioprobe/ioprobe/internal/ownio"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// deviceLatency is the kernel side of the window: the BPF programs that
// time every request of the targets' devices (internal/devlat), loaded
// while the workers are set up, recording while the window is open.
type deviceLatency struct {
	done chan struct{} // closed, under mu, when loading has finished
	// mu orders the loader's end against a run that stops waiting for
	// it: the loader publishes tracer and why only if the run has not
	// abandoned it, and else closes what it loaded itself.
	mu        sync.Mutex
	abandoned bool
	tracer    *devlat.Tracer
	why       string // why there is no tracer
}

// loadHook, when set (tests), runs in the loader before the programs are
// loaded: a load that takes its time, as it does on a loaded machine.
var loadHook func()

// startDeviceLatency loads the programs for the targets' devices in the
// background; wait joins it. Off (Plan.NoDeviceLatency) or without a
// device, it says why at once.
func (p *Plan) startDeviceLatency(targets []*openTarget) *deviceLatency {
	dl := &deviceLatency{done: make(chan struct{})}
	var names []string
	seen := map[string]bool{}
	for _, ot := range targets {
		if d := ot.t.Device; d != "" && !seen[d] {
			seen[d] = true
			names = append(names, d)
		}
	}
	sort.Strings(names)
	switch {
	case p.NoDeviceLatency && p.NoDeviceLatencyWhy != "":
		dl.why = p.NoDeviceLatencyWhy
	case p.NoDeviceLatency:
		dl.why = "not asked for (--device-latency=false)"
	case len(names) == 0:
		dl.why = "no block device under the targets"
	}
	if dl.why != "" {
		close(dl.done)
		return dl
	}
	go func() {
		t, why := load(names)
		dl.mu.Lock()
		defer dl.mu.Unlock()
		defer close(dl.done) // after what it publishes: wait reads it unlocked
		if dl.abandoned {
			// The run ended without it: nothing of it stays attached.
			if t != nil {
				_ = t.Close()
			}
			return
		}
		dl.tracer, dl.why = t, why
	}()
	return dl
}

// load loads and attaches the programs for the named devices, or says
// why not.
func load(names []string) (*devlat.Tracer, string) {
	if loadHook != nil {
		loadHook()
	}
	var devs []devlat.Device
	var refused []string
	for _, n := range names {
		d, err := devlat.Resolve("", n)
		if err != nil {
			refused = append(refused, err.Error())
			continue
		}
		devs = append(devs, d)
	}
	if len(refused) > 0 {
		return nil, strings.Join(refused, "; ")
	}
	t, err := devlat.Open(devs)
	if err != nil {
		return nil, err.Error()
	}
	return t, ""
}

// wait waits for the programs to be loaded (or to have failed), unless
// stop (the run's end: a signal, a failed worker) comes first: loading
// and attaching cannot be cancelled and takes seconds on a loaded
// machine, and an interrupted run must not be held up for programs it
// will not use. Abandoned, the loader closes what it loaded when it
// finishes (and the kernel does at the process's end: nothing is
// pinned), and the result says the device latency was not measured.
// It says whether the programs' load has finished.
func (dl *deviceLatency) wait(stop <-chan struct{}) bool {
	select {
	case <-dl.done:
		return true
	case <-stop:
	}
	dl.mu.Lock()
	defer dl.mu.Unlock()
	select {
	case <-dl.done:
		return true // finished meanwhile: what it published is kept
	default:
	}
	dl.abandoned = true
	dl.why = "the run was interrupted while the BPF programs were loading"
	return false
}

// record switches recording on or off (the window's edges).
func (dl *deviceLatency) record(on bool) {
	if dl == nil || dl.tracer == nil {
		return
	}
	if err := dl.tracer.Record(on); err != nil && dl.why == "" {
		dl.why = fmt.Sprintf("switching the BPF recording: %v", err)
	}
}

// close unloads the programs; a load still running is abandoned (its
// loader closes what it loaded), not waited for: close runs on every way
// out of a run, an interrupted one too.
func (dl *deviceLatency) close() {
	if dl == nil {
		return
	}
	stop := make(chan struct{})
	close(stop)
	if !dl.wait(stop) {
		return
	}
	if dl.tracer != nil {
		_ = dl.tracer.Close()
		dl.tracer = nil
	}
}

// summarize sets the result's device histograms and latency summaries
// from what the programs recorded in the window (or why not), and takes
// ioprobe's own reads out of the kernel's counts (ownReads).
func (dl *deviceLatency) summarize(res *result.Result) {
	d := res.Summary.Device
	if dl == nil || d == nil {
		return
	}
	var rs []devlat.Reading
	why := dl.why
	if dl.tracer != nil && why == "" {
		var err error
		if rs, err = dl.tracer.Read(); err != nil {
			rs, why = nil, err.Error()
		}
	}
	ownReads(d, rs, res.SafetyChecks, ownio.Marks())
	if rs == nil {
		d.SetDeviceLatency(nil, 0, 0, 0, why)
		return
	}
	h := result.NewDeviceHistograms()
	var rb, wb, discards, untimed, noStart uint64
	for _, r := range rs {
		h.Add(r.Hist)
		rb += r.ReadBytes
		wb += r.WriteBytes
		discards += r.Discards
		untimed += r.Untimed
		noStart += r.NoStart
	}
	res.Histogram.Device = h
	d.SetDeviceLatency(h, rb, wb, discards, "")
	d.SetUntimed(untimed, noStart)
}

// ownReads takes ioprobe's own reads in the window (the safety checks'
// looks) out of the kernel's read counts, and says how many they were:
// the requests the programs saw carrying ioprobe's mark when they ran
// (rs) and the kernel takes the mark; else the looks' reads as the guard
// counted them, and then the device latency, if measured, holds them.
func ownReads(d *result.DeviceStats, rs []devlat.Reading, checks *result.SafetyChecks, marks bool) {
	var ops, bytes uint64
	switch {
	case rs != nil && marks:
		for _, r := range rs {
			ops += r.Own
			bytes += r.OwnBytes
		}
	case checks != nil:
		ops, bytes = checks.WindowReadOps, checks.WindowReadBytes
		if rs != nil && ops > 0 {
			d.OwnInLatency = fmt.Sprintf("ioprobe's own %d check reads are in the device latency: this kernel does not take the I/O priority hint that marks them (Linux 6.5 or later)", ops)
		}
	}
	ops, bytes = min(ops, d.ReadOps), min(bytes, d.ReadBytes)
	d.ReadOps -= ops
	d.ReadBytes -= bytes
	d.OwnReadOps, d.OwnReadBytes = ops, bytes
}
