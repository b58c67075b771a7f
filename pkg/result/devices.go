package result

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// machineKey tells apart the machines whose kernel counters (host CPU,
// diskstats) a merge counts once each: the kernel's boot id, else, for a
// result written before it, the hostname.
func machineKey(h Host) string {
	if h.BootID != "" {
		return "boot\x00" + h.BootID
	}
	return "host\x00" + h.Hostname
}

// deviceLatencySum is the devices' latency of merged runs: the
// histograms and the bytes of the requests timed (nil h: some run did not
// measure it).
type deviceLatencySum struct {
	h                               *DeviceHistograms
	readBytes, writeBytes, discards uint64
	untimed, noStart                uint64
}

func (l *deviceLatencySum) add(h *DeviceHistograms, d *DeviceLatency) {
	if l.h == nil || !h.complete() {
		l.h = nil
		return
	}
	l.h.Add(h)
	if d != nil {
		l.readBytes += d.Read.Bytes
		l.writeBytes += d.Write.Bytes
		l.discards += d.Discards
		l.untimed += d.Untimed
	}
}

// addQueue adds what a run's queue latency counted without a time.
func (l *deviceLatencySum) addQueue(q *QueueLatency) {
	if l.h != nil && q != nil {
		l.noStart += q.NoStart
	}
}

// mergeDevices adds up the kernel's device counts of rs (nil when none
// has them): over machines and devices, but once for runs that measured
// the same devices on one machine at the same time, since the kernel
// counted every I/O there once for all of them (the largest of their
// counts is taken, and Shared says so). Runs one after another add up, as
// do runs whose time is unknown and, with sequential, every run. The
// devices' latency (histogram.device, measured in the kernel: every
// request of the device, whoever made it) is counted the same way: the
// histogram of the run that timed the most requests stands for runs that
// shared the devices.
func mergeDevices(rs []*Result, sequential bool) (*DeviceStats, deviceLatencySum) {
	type member struct {
		d        *DeviceStats
		h        *DeviceHistograms
		host     string
		from, to time.Time
	}
	lat := deviceLatencySum{h: NewDeviceHistograms()}
	var order []string
	groups := map[string][]member{}
	var out *DeviceStats
	for i, r := range rs {
		d := r.Summary.Device
		if d == nil {
			continue
		}
		if out == nil {
			out = &DeviceStats{}
		}
		out.Devices = append(out.Devices, d.Devices...)
		out.FlushDevices = append(out.FlushDevices, d.FlushDevices...)
		if out.OwnInLatency == "" {
			out.OwnInLatency = d.OwnInLatency
		}
		out.Shared = append(out.Shared, d.Shared...)
		devs := slices.Clone(d.Devices)
		slices.Sort(devs)
		key := machineKey(r.Host) + "\x00" + strings.Join(devs, ",")
		if r.Merged != nil && len(r.Merged.Hosts) > 1 {
			// Already summed over several machines: it stands alone.
			key = fmt.Sprintf("merged\x00%d", i)
		}
		from := r.StartedAt.Add(secondsDuration(r.Workload.RampSeconds))
		m := member{d: d, h: r.Histogram.Device, host: r.Host.Hostname, from: from, to: from.Add(secondsDuration(r.Summary.ElapsedSeconds))}
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], m)
	}
	if out == nil {
		return nil, deviceLatencySum{}
	}
	add := func(d *DeviceStats) {
		out.ReadOps += d.ReadOps
		out.WriteOps += d.WriteOps
		out.ReadBytes += d.ReadBytes
		out.WriteBytes += d.WriteBytes
		out.ReadMerges += d.ReadMerges
		out.WriteMerges += d.WriteMerges
		out.FlushOps += d.FlushOps
		out.FlushSeconds += d.FlushSeconds
		out.OwnReadOps += d.OwnReadOps
		out.OwnReadBytes += d.OwnReadBytes
	}
	for _, key := range order {
		ms := groups[key]
		sort.SliceStable(ms, func(i, j int) bool { return ms[i].from.Before(ms[j].from) })
		for i := 0; i < len(ms); {
			// The runs from i whose windows overlap: one count.
			j, end := i+1, ms[i].to
			for !sequential && !ms[i].from.IsZero() && j < len(ms) && !ms[j].from.IsZero() && ms[j].from.Before(end) {
				if ms[j].to.After(end) {
					end = ms[j].to
				}
				j++
			}
			if j == i+1 {
				add(ms[i].d)
				lat.add(ms[i].h, ms[i].d.Latency)
				lat.addQueue(ms[i].d.QueueLatency)
				i = j
				continue
			}
			once := &DeviceStats{}
			var hosts []string
			most := ms[i]
			for _, m := range ms[i:j] {
				if m.d.Latency != nil && (most.d.Latency == nil || m.d.Latency.Count > most.d.Latency.Count) {
					most = m
				}
				if !m.h.complete() {
					lat.h = nil
				}
				once.ReadOps = max(once.ReadOps, m.d.ReadOps)
				once.WriteOps = max(once.WriteOps, m.d.WriteOps)
				once.ReadBytes = max(once.ReadBytes, m.d.ReadBytes)
				once.WriteBytes = max(once.WriteBytes, m.d.WriteBytes)
				once.ReadMerges = max(once.ReadMerges, m.d.ReadMerges)
				once.WriteMerges = max(once.WriteMerges, m.d.WriteMerges)
				once.FlushOps = max(once.FlushOps, m.d.FlushOps)
				once.FlushSeconds = math.Max(once.FlushSeconds, m.d.FlushSeconds)
				once.OwnReadOps = max(once.OwnReadOps, m.d.OwnReadOps)
				once.OwnReadBytes = max(once.OwnReadBytes, m.d.OwnReadBytes)
				if !slices.Contains(hosts, m.host) {
					hosts = append(hosts, m.host)
				}
			}
			add(once)
			lat.add(most.h, most.d.Latency)
			lat.addQueue(most.d.QueueLatency)
			devs := slices.Clone(ms[i].d.Devices)
			slices.Sort(devs)
			out.Shared = append(out.Shared, SharedDevices{Hosts: hosts, Devices: devs, Runs: j - i})
			i = j
		}
	}
	slices.Sort(out.Devices)
	out.Devices = slices.Compact(out.Devices)
	slices.Sort(out.FlushDevices)
	out.FlushDevices = slices.Compact(out.FlushDevices)
	return out, lat
}

// sharedText is the CSV cell of device.shared: per entry its hosts, its
// devices and how many runs shared them ("node1:sdb:3"), entries joined
// with ";".
func sharedText(s *Summary) string {
	if s.Device == nil {
		return ""
	}
	parts := make([]string, len(s.Device.Shared))
	for i, sh := range s.Device.Shared {
		parts[i] = strings.Join(sh.Hosts, "+") + ":" + strings.Join(sh.Devices, "+") + ":" + fmt.Sprint(sh.Runs)
	}
	return strings.Join(parts, ";")
}
