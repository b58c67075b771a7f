package exporter

import (
	"errors"
	"log/slog"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ioprobe/ioprobe/internal/devlat"
	"github.com/ioprobe/ioprobe/internal/hostfs"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// deviceWatch is the host-wide device latency of config devices: the BPF
// programs of internal/devlat on every request of the devices the
// patterns match (all of their I/O, not only ioprobe's), published as
// ioprobe_device_latency_seconds and ioprobe_device_queue_latency_seconds.
// The series are cumulative since the daemon started watching a device:
// a reload that changes the devices reloads the programs and keeps what
// they counted so far.
type deviceWatch struct {
	logger  *slog.Logger
	sysRoot string

	mu       sync.Mutex
	patterns []string
	tracer   *devlat.Tracer
	names    []string // the devices the tracer watches, in its order
	why      string   // why nothing is watched although patterns match
	// base holds what earlier tracers counted, by device.
	base map[string]*result.DeviceHistograms

	lat, queue *prometheus.Desc
}

func newDeviceWatch(logger *slog.Logger) *deviceWatch {
	labels := []string{"device", "op"}
	return &deviceWatch{logger: logger, base: map[string]*result.DeviceHistograms{},
		lat: prometheus.NewDesc("ioprobe_device_latency_seconds",
			"Service time (issue to completion) of every request of the watched block devices (config devices), measured in the kernel with eBPF, all I/O on them, since the daemon started watching the device; op is read, write or flush (a partition's flushes are its whole disk's when the disk is not watched itself: a flush request is the disk's) (native and classic buckets).", labels, nil),
		queue: prometheus.NewDesc("ioprobe_device_queue_latency_seconds",
			"Queue time (from the request's start, the kernel's own stamp, to its issue to the driver) of the reads and writes of the watched block devices, measured in the kernel with eBPF, since the daemon started watching the device (native and classic buckets).", labels, nil),
	}
}

// match lists the block devices (sysfs names) that patterns match, sorted.
func (w *deviceWatch) match(patterns []string) []string {
	root := w.sysRoot
	if root == "" {
		root = "/sys"
	}
	names, err := hostfs.ReadDirNames(root + "/class/block")
	if err != nil {
		return nil
	}
	var out []string
	for _, name := range names {
		for _, p := range patterns {
			if ok, _ := path.Match(p, name); ok {
				out = append(out, name)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// apply watches the devices patterns match now (at start and at every
// reload): unchanged devices keep their programs; otherwise what the old
// programs counted is kept and new ones are loaded.
func (w *deviceWatch) apply(patterns []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.patterns = slices.Clone(patterns)
	names := w.match(patterns)
	var devs []devlat.Device
	var refused []string
	for _, n := range names {
		d, err := devlat.Resolve(w.sysRoot, n)
		if err != nil {
			refused = append(refused, err.Error())
			continue
		}
		devs = append(devs, d)
	}
	var watch []string
	for _, d := range devs {
		watch = append(watch, d.Name)
	}
	if len(refused) > 0 {
		w.logger.Warn("devices not watched", "why", strings.Join(refused, "; "))
	}
	if slices.Equal(watch, w.names) && (w.tracer != nil || len(watch) == 0) {
		return
	}
	w.closeLocked()
	w.names, w.why = nil, ""
	if len(patterns) > 0 && len(devs) == 0 {
		w.why = "no block device with a request queue matches devices " + strings.Join(patterns, ", ")
		w.logger.Warn("device latency: nothing to watch", "why", w.why)
		return
	}
	if len(devs) == 0 {
		return
	}
	t, err := devlat.Open(devs)
	if err == nil {
		err = t.Record(true)
	}
	if err != nil {
		if t != nil {
			_ = t.Close()
		}
		w.why = err.Error()
		w.logger.Error("device latency: cannot watch the devices", "devices", watch, "err", err)
		return
	}
	w.tracer, w.names = t, watch
	w.logger.Info("device latency: watching", "devices", watch)
}

// closeLocked folds what the tracer counted into base and unloads it.
func (w *deviceWatch) closeLocked() {
	if w.tracer == nil {
		return
	}
	if rs, err := w.tracer.Read(); err == nil {
		for i, r := range rs {
			w.baseOf(w.names[i]).Add(r.Hist)
		}
	}
	_ = w.tracer.Close()
	w.tracer = nil
}

func (w *deviceWatch) baseOf(name string) *result.DeviceHistograms {
	b := w.base[name]
	if b == nil {
		b = result.NewDeviceHistograms()
		w.base[name] = b
	}
	return b
}

// close unloads the programs (the daemon stops).
func (w *deviceWatch) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closeLocked()
}

func (w *deviceWatch) Describe(ch chan<- *prometheus.Desc) {
	ch <- w.lat
	ch <- w.queue
}

// Update publishes every device counted so far: the live programs'
// readings on top of what earlier ones counted. With devices configured
// but not watched it fails (ioprobe_scrape_collector_success 0) and says
// why in the log.
func (w *deviceWatch) Update(ch chan<- prometheus.Metric) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	all := map[string]*result.DeviceHistograms{}
	for name, b := range w.base {
		h := result.NewDeviceHistograms()
		h.Add(b)
		all[name] = h
	}
	if w.tracer != nil {
		rs, err := w.tracer.Read()
		if err != nil {
			return err
		}
		for i, r := range rs {
			h := all[w.names[i]]
			if h == nil {
				h = result.NewDeviceHistograms()
				all[w.names[i]] = h
			}
			h.Add(r.Hist)
		}
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		h := all[n]
		ch <- newHistogramMetric(w.lat, h.Read, n, "read")
		ch <- newHistogramMetric(w.lat, h.Write, n, "write")
		ch <- newHistogramMetric(w.lat, h.Flush, n, "flush")
		ch <- newHistogramMetric(w.queue, h.QueueRead, n, "read")
		ch <- newHistogramMetric(w.queue, h.QueueWrite, n, "write")
	}
	if w.why != "" {
		return errors.New("device latency: " + w.why)
	}
	return nil
}
