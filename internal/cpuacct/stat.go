package cpuacct

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// CPUTimes is one "cpu" line of /proc/stat: time per mode in USER_HZ ticks
// since boot. Guest and GuestNice are already counted in User and Nice
// (the kernel adds guest time to both), so Total leaves them out.
type CPUTimes struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal, Guest, GuestNice uint64
}

// Total is every tick of the line: user + nice + system + idle + iowait +
// irq + softirq + steal.
func (t CPUTimes) Total() uint64 {
	return t.User + t.Nice + t.System + t.Idle + t.IOWait + t.IRQ + t.SoftIRQ + t.Steal
}

// Busy is Total − Idle − IOWait (the reports' definition): iowait is idle time with I/O
// outstanding, not work. Steal counts as busy, as it does for esxtop's
// %Processor time of a guest: those cycles were not available to the host.
func (t CPUTimes) Busy() uint64 {
	return t.Total() - t.Idle - t.IOWait
}

// Sub returns t − earlier field by field. A field that went backwards (a
// CPU taken offline and back, iowait on some kernels) gives 0, never a huge
// unsigned wrap.
func (t CPUTimes) Sub(earlier CPUTimes) CPUTimes {
	d := func(a, b uint64) uint64 {
		if a < b {
			return 0
		}
		return a - b
	}
	return CPUTimes{
		User: d(t.User, earlier.User), Nice: d(t.Nice, earlier.Nice),
		System: d(t.System, earlier.System), Idle: d(t.Idle, earlier.Idle),
		IOWait: d(t.IOWait, earlier.IOWait), IRQ: d(t.IRQ, earlier.IRQ),
		SoftIRQ: d(t.SoftIRQ, earlier.SoftIRQ), Steal: d(t.Steal, earlier.Steal),
		Guest: d(t.Guest, earlier.Guest), GuestNice: d(t.GuestNice, earlier.GuestNice),
	}
}

// CPU is the line of one online logical CPU.
type CPU struct {
	ID int
	CPUTimes
}

// Stat is the CPU part of /proc/stat: the aggregate line over all CPUs and
// one line per online logical CPU (the kernel prints only online CPUs).
type Stat struct {
	All  CPUTimes
	CPUs []CPU
}

// Sub returns the per-mode deltas from earlier to s. Per-CPU deltas are
// kept for CPUs present in both samples.
func (s Stat) Sub(earlier Stat) Stat {
	out := Stat{All: s.All.Sub(earlier.All)}
	prev := make(map[int]CPUTimes, len(earlier.CPUs))
	for _, c := range earlier.CPUs {
		prev[c.ID] = c.CPUTimes
	}
	for _, c := range s.CPUs {
		if p, ok := prev[c.ID]; ok {
			out.CPUs = append(out.CPUs, CPU{ID: c.ID, CPUTimes: c.Sub(p)})
		}
	}
	return out
}

// parseStat reads the cpu lines of /proc/stat. They come first; it stops
// at the first other line without reading it, so it never reads the
// "intr" line, which runs to hundreds of kilobytes on large machines.
// Kernels before 2.6.11 print fewer columns; missing ones read as 0.
func parseStat(r io.Reader) (Stat, error) {
	var s Stat
	sawAll := false
	br := bufio.NewReader(r)
	for {
		p, err := br.Peek(3)
		if err != nil && !errors.Is(err, io.EOF) {
			return Stat{}, fmt.Errorf("/proc/stat: %w", err)
		}
		if string(p) != "cpu" {
			break
		}
		line, err := br.ReadString('\n')
		if err != nil && !(errors.Is(err, io.EOF) && line != "") {
			return Stat{}, fmt.Errorf("/proc/stat: %w", err)
		}
		line = strings.TrimSuffix(line, "\n")
		fields := strings.Fields(line)
		if len(fields) < 5 {
			return Stat{}, fmt.Errorf("/proc/stat: %q: want at least 4 counters", line)
		}
		var v [10]uint64
		for i, f := range fields[1:] {
			if i == len(v) {
				break // a future kernel's extra column
			}
			n, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				return Stat{}, fmt.Errorf("/proc/stat: %q: bad counter %q", line, f)
			}
			v[i] = n
		}
		t := CPUTimes{User: v[0], Nice: v[1], System: v[2], Idle: v[3], IOWait: v[4],
			IRQ: v[5], SoftIRQ: v[6], Steal: v[7], Guest: v[8], GuestNice: v[9]}
		if fields[0] == "cpu" {
			s.All, sawAll = t, true
			continue
		}
		id, err := strconv.Atoi(strings.TrimPrefix(fields[0], "cpu"))
		if err != nil || id < 0 {
			return Stat{}, fmt.Errorf("/proc/stat: bad cpu line %q", line)
		}
		s.CPUs = append(s.CPUs, CPU{ID: id, CPUTimes: t})
	}
	if !sawAll {
		return Stat{}, fmt.Errorf("/proc/stat: no aggregate \"cpu\" line")
	}
	return s, nil
}
