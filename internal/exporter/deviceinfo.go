package exporter

import (
	"context"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ioprobe/ioprobe/internal/hostfs"
	"github.com/ioprobe/ioprobe/internal/stack"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// deviceInfoEvery is how often ioprobe_device_info is read again: a
// scheduler switched or a cache mode changed through sysfs shows within
// it. A reload reads it at once.
const deviceInfoEvery = 30 * time.Second

// Bounds of ioprobe_device_info's label values: a device says what it
// likes of its model and firmware (a USB bridge, a faulty or hostile
// device), and a label value is kept in every sample of every scrape.
const (
	maxModelLabel = 64
	maxLabel      = 32
)

var deviceInfoLabels = []string{"device", "kind", "model", "firmware", "bus", "scheduler", "rotational", "write_cache", "fua",
	"logical_block_bytes", "physical_block_bytes", "nr_requests", "max_sectors_kb", "discard_max_bytes", "numa_node", "serial_sha256"}

// deviceInfo publishes ioprobe_device_info: one series per block device
// under the configured targets and in the devices list, labelled with its
// settings (internal/stack reads them from sysfs). It is read in the
// background (at start, every deviceInfoEvery, at every reload): a scrape
// only copies the last reading, and never waits on a filesystem.
type deviceInfo struct {
	host  *hostfs.Host
	every time.Duration
	desc  *prometheus.Desc
	kick  chan struct{}

	mu     sync.Mutex
	series [][]string // label values, by device name
}

func newDeviceInfo(sysRoot, procRoot string) *deviceInfo {
	return &deviceInfo{host: &hostfs.Host{Sys: sysRoot, Proc: procRoot}, every: deviceInfoEvery, kick: make(chan struct{}, 1),
		desc: prometheus.NewDesc("ioprobe_device_info",
			"The settings of each block device under the configured targets and in the devices list, as sysfs says (read every 30 s and at a reload): kind is disk, loop, dm or md; scheduler is empty for a device without a request queue of its own; model and firmware are cut to 64 and 32 characters; serial_sha256 is the SHA-256 of the serial number. Always 1.",
			deviceInfoLabels, nil)}
}

func (i *deviceInfo) Describe(ch chan<- *prometheus.Desc) { ch <- i.desc }

func (i *deviceInfo) Update(ch chan<- prometheus.Metric) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	for _, v := range i.series {
		ch <- prometheus.MustNewConstMetric(i.desc, prometheus.GaugeValue, 1, v...)
	}
	return nil
}

// reread asks for a reading now (a reload); it never blocks.
func (i *deviceInfo) reread() {
	select {
	case i.kick <- struct{}{}:
	default:
	}
}

// loop reads the devices at once, then every i.every and when asked,
// until ctx ends. want says which: the configured targets' paths and the
// names of the devices list.
func (i *deviceInfo) loop(ctx context.Context, want func() (paths, devices []string)) {
	t := time.NewTicker(i.every)
	defer t.Stop()
	for {
		paths, devs := want()
		i.refresh(ctx, paths, devs)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-i.kick:
		}
	}
}

// refresh reads the devices under paths (a target not created yet: the
// devices under its directory) and the devices named.
func (i *deviceInfo) refresh(ctx context.Context, paths, devices []string) {
	byName := map[string][]string{}
	add := func(d stack.Description) {
		for _, dev := range d.Devices() {
			byName[dev.Name] = infoLabels(dev, kindOf(d, dev.Name))
		}
	}
	for _, p := range paths {
		// The nearest directory that exists stands for a file a job has
		// yet to create: the file will lie on its filesystem.
		for n := 0; n < 64; n++ {
			d := stack.DescribeDevices(ctx, i.host, p)
			if !d.Missing || filepath.Dir(p) == p {
				add(d)
				break
			}
			p = filepath.Dir(p)
		}
	}
	for _, name := range devices {
		add(stack.DescribeDevice(ctx, i.host, name))
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	series := make([][]string, len(names))
	for k, n := range names {
		series[k] = byName[n]
	}
	i.mu.Lock()
	i.series = series
	i.mu.Unlock()
}

// kindOf is the kind of the layer of d named name.
func kindOf(d stack.Description, name string) string {
	for _, l := range d.Stack {
		if l.Name == name && l.Kind != result.LayerFile && l.Kind != result.LayerFilesystem {
			return l.Kind
		}
	}
	return result.LayerDisk
}

// infoLabels are ioprobe_device_info's label values for device d, each
// bounded.
func infoLabels(d result.Disk, kind string) []string {
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	b := func(v bool) string {
		if v {
			return "1"
		}
		return "0"
	}
	numa := ""
	if d.NUMANode != nil {
		numa = strconv.Itoa(*d.NUMANode)
	}
	return []string{d.Name, kind, stack.Clean(d.Model, maxModelLabel), stack.Clean(d.Firmware, maxLabel), stack.Clean(d.Bus, maxLabel),
		stack.Clean(d.Scheduler, maxLabel), b(d.Rotational), stack.Clean(d.WriteCache, maxLabel), b(d.FUA),
		i64(d.LogicalBlockBytes), i64(d.PhysicalBlockBytes), i64(d.NrRequests), i64(d.MaxSectorsKB), i64(d.DiscardMaxBytes),
		numa, stack.Clean(d.SerialSHA256, 64)}
}
