package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// window is what measure --window saw of a run's steady state, from
// outside: the CPU the process tree spent (every thread's run time in
// /proc/PID/task/*/schedstat, the tool's children included) and the I/Os
// the device completed, between SKIP and SKIP+LEN seconds after the
// start. It leaves out what a tool does once per run rather than per I/O
// (ioprobe loads its device-latency programs and checks the target for
// signatures before its first I/O; fio sets up its job processes), which
// wait4's whole-run figure counts. Set by the tool's runtime only; never
// by the tool itself.
type window struct {
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpu_seconds"`
	DeviceIOs  float64 `json:"device_ios"`
}

// parseWindow reads SKIP:LEN (seconds, each > 0).
func parseWindow(s string) (skip, length time.Duration, err error) {
	a, b, ok := strings.Cut(s, ":")
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	if !ok || err1 != nil || err2 != nil || x <= 0 || y <= 0 || x > 3600 || y > 3600 {
		return 0, 0, fmt.Errorf("--window %q: want SKIP:LEN, seconds, each in (0, 3600]", s)
	}
	return time.Duration(x * float64(time.Second)), time.Duration(y * float64(time.Second)), nil
}

// treeCPU is the run time, in ns, of every thread of pid and of its
// descendants now. A thread that ends between two readings takes its time
// with it: the tools measured keep their threads for the whole run.
func treeCPU(pid int) (int64, error) {
	children := map[int][]int{}
	procs, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return 0, err
	}
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		self, err1 := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		parent, err2 := strconv.Atoi(f[1])
		if err1 == nil && err2 == nil {
			children[parent] = append(children[parent], self)
		}
	}
	var total int64
	seen := 0
	for todo := []int{pid}; len(todo) > 0; {
		p := todo[len(todo)-1]
		todo = append(todo[:len(todo)-1], children[p]...)
		if seen++; seen > 1<<16 {
			return 0, fmt.Errorf("process tree of %d: more than %d processes", pid, 1<<16)
		}
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/[0-9]*/schedstat", p))
		for _, t := range tasks {
			b, err := os.ReadFile(t)
			if err != nil {
				continue
			}
			f := strings.Fields(string(b))
			if len(f) == 0 {
				continue
			}
			if ns, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				total += ns
			}
		}
	}
	if total == 0 {
		return 0, fmt.Errorf("process %d: no schedstat (is it still running?)", pid)
	}
	return total, nil
}

// watch takes the window's two readings of pid's tree and dev while the
// command runs; done is closed when it has exited. It returns nil when the
// command ended before the window did.
func watch(pid int, dev string, skip, length time.Duration, done <-chan struct{}) (*window, error) {
	read := func() (cpu int64, ios float64, at time.Time, err error) {
		at = time.Now()
		if cpu, err = treeCPU(pid); err != nil {
			return 0, 0, at, err
		}
		if dev != "" {
			ios, err = deviceIOs(dev)
		}
		return cpu, ios, at, err
	}
	select {
	case <-done:
		return nil, nil
	case <-time.After(skip):
	}
	c0, d0, t0, err := read()
	if err != nil {
		return nil, err
	}
	select {
	case <-done:
		return nil, nil
	case <-time.After(length):
	}
	c1, d1, t1, err := read()
	if err != nil {
		return nil, err
	}
	select {
	case <-done: // it may have ended between the reading and now
		return nil, nil
	default:
	}
	return &window{Seconds: t1.Sub(t0).Seconds(), CPUSeconds: float64(c1-c0) / 1e9, DeviceIOs: d1 - d0}, nil
}
