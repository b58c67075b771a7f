package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The reference tools: what ioprobe is held to beside fio's engines.
//
// bare-…: scripts/bareloop, a C loop of pread(2) at queue depth 1 with the
// clock read around each I/O and nothing else: the floor for the sync
// engine. barego-…: scripts/barego, the same loop in Go (syscall.Syscall6,
// the runtime's clock): the floor for a Go program. Their JSON:
// {"ios":N,"seconds":S,"iops":X,"latency_mean_ns":M}.
//
// tiouring-…: fio's t/io_uring (Jens Axboe's peak-IOPS tool from fio's
// source), whose output is one line a second, "IOPS=312.45K, BW=…,
// IOS/call=…", and with -t1 latency percentiles at the end. It prints
// IOPS rounded and leaves out its last second, so a pair counts the I/Os
// the device completed (benchfio measure --dev) when it can.

func parseBare(path string, s *sample) error {
	var r struct {
		IOs     float64 `json:"ios"`
		IOPS    float64 `json:"iops"`
		MeanNs  float64 `json:"latency_mean_ns"`
		Seconds float64 `json:"seconds"`
	}
	if err := readJSON(path, &r); err != nil {
		return err
	}
	s.ops, s.iops, s.meanLat, s.p99Lat = r.IOs, r.IOPS, r.MeanNs/1e9, math.NaN()
	return nil
}

var tiouringIOPS = regexp.MustCompile(`^IOPS=([0-9.]+)([KM]?),`)

func parseTIOURing(path string, s *sample) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var sum float64
	var lines int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := tiouringIOPS.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return fmt.Errorf("%s: %q: %w", path, sc.Text(), err)
		}
		switch m[2] {
		case "K":
			v *= 1e3
		case "M":
			v *= 1e6
		}
		sum += v
		lines++
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if lines == 0 {
		return fmt.Errorf("%s: no IOPS= line: not t/io_uring's output", path)
	}
	s.iops, s.ops = sum/float64(lines), sum
	if s.rec.DeviceIOs > 0 {
		s.ops = s.rec.DeviceIOs
	}
	s.meanLat, s.p99Lat = math.NaN(), math.NaN()
	return nil
}

// pairOps is the I/O count a pair compares: the device's, when measured,
// so that both sides are counted alike; else the tool's own.
func (s sample) pairOps() float64 {
	if s.rec.DeviceIOs > 0 {
		return s.rec.DeviceIOs
	}
	return s.ops
}

// pairPerCPU is the I/Os per process CPU-second a pair compares: the
// steady state's (measure --window: the device's I/Os and the process
// tree's CPU over the same seconds, set-up left out) when measured, else
// the whole run's pairOps per CPU-second.
func (s sample) pairPerCPU() float64 {
	if w := s.rec.Window; s.windowed() {
		return w.DeviceIOs / w.CPUSeconds
	}
	return s.pairOps() / s.cpuSeconds()
}

// windowed says whether the run has a steady-state window with I/Os and CPU in it.
func (s sample) windowed() bool {
	w := s.rec.Window
	return w != nil && w.CPUSeconds > 0 && w.DeviceIOs > 0
}

// pair is one line of pairs.txt: candidate a held to candidate b, and the
// goal of the ratio a ÷ b when there is one.
type pair struct {
	workload, a, b string
	goal           goal
}

// goal is a bound on a pair's ratio: at least (">=X") or at most ("<=X").
type goal struct {
	atMost bool
	bound  float64 // 0: none
}

func (g goal) String() string {
	switch {
	case g.bound == 0:
		return ""
	case g.atMost:
		return fmt.Sprintf("≤ %g", g.bound)
	}
	return fmt.Sprintf("≥ %g", g.bound)
}

// met says whether ratio meets the goal ("" without one).
func (g goal) met(ratio float64) string {
	switch {
	case g.bound == 0:
		return ""
	case math.IsNaN(ratio):
		return "unmeasured"
	case g.atMost && ratio <= g.bound, !g.atMost && ratio >= g.bound:
		return "met"
	}
	return "**not met**"
}

func parseGoal(s string) (goal, error) {
	var g goal
	switch {
	case strings.HasPrefix(s, "<="):
		g.atMost = true
	case strings.HasPrefix(s, ">="):
	default:
		return g, fmt.Errorf("goal %q: want <=X or >=X", s)
	}
	v, err := strconv.ParseFloat(s[2:], 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return g, fmt.Errorf("goal %q: want <=X or >=X with X > 0", s)
	}
	g.bound = v
	return g, nil
}

// readPairs reads DIR/pairs.txt ("WORKLOAD A B [GOAL]" a line, GOAL <=X or
// >=X on A ÷ B; # comments); none is no error.
func readPairs(dir string) ([]pair, error) {
	f, err := os.Open(filepath.Join(dir, "pairs.txt"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []pair
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fs := strings.Fields(line)
		if len(fs) != 3 && len(fs) != 4 {
			return nil, fmt.Errorf("pairs.txt:%d: want WORKLOAD A B [GOAL], got %q", n, line)
		}
		p := pair{workload: fs[0], a: fs[1], b: fs[2]}
		if len(fs) == 4 {
			g, err := parseGoal(fs[3])
			if err != nil {
				return nil, fmt.Errorf("pairs.txt:%d: %w", n, err)
			}
			p.goal = g
		}
		out = append(out, p)
	}
	return out, sc.Err()
}

// pairResult is a pair's medians: of each side's I/Os per CPU-second and
// IOPS, and of the per-round ratios a ÷ b.
type pairResult struct {
	pair
	rounds                         int
	aPerCPU, bPerCPU, aIOPS, bIOPS float64
	perCPU, iops                   float64
	aDevice, bDevice               bool      // counted by the device
	aWindow, bWindow               bool      // in the steady-state window
	rounds_                        []float64 // the per-round ratios of I/Os per CPU-s, by round
}

// ratios lists per-round ratios with two decimals.
func ratios(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatFloat(x, 'f', 2, 64)
	}
	return strings.Join(s, " ")
}

func pairRatios(all []sample, pairs []pair) []pairResult {
	var out []pairResult
	for _, p := range pairs {
		a, b := map[int]sample{}, map[int]sample{}
		for _, s := range all {
			if s.workload != p.workload {
				continue
			}
			switch s.candidate {
			case p.a:
				a[s.round] = s
			case p.b:
				b[s.round] = s
			}
		}
		r := pairResult{pair: p}
		var perCPU, iops, aPer, bPer, aIOPS, bIOPS []float64
		r.aDevice, r.bDevice, r.aWindow, r.bWindow = true, true, true, true
		var rounds []int
		for round := range a {
			if _, ok := b[round]; ok {
				rounds = append(rounds, round)
			}
		}
		sort.Ints(rounds)
		for _, round := range rounds {
			x, y := a[round], b[round]
			xp, yp := x.pairPerCPU(), y.pairPerCPU()
			perCPU = append(perCPU, xp/yp)
			iops = append(iops, x.iops/y.iops)
			aPer, bPer = append(aPer, xp), append(bPer, yp)
			aIOPS, bIOPS = append(aIOPS, x.iops), append(bIOPS, y.iops)
			r.aDevice = r.aDevice && x.rec.DeviceIOs > 0
			r.bDevice = r.bDevice && y.rec.DeviceIOs > 0
			r.aWindow, r.bWindow = r.aWindow && x.windowed(), r.bWindow && y.windowed()
		}
		r.rounds, r.rounds_ = len(perCPU), perCPU
		r.perCPU, r.iops = median(perCPU), median(iops)
		r.aPerCPU, r.bPerCPU, r.aIOPS, r.bIOPS = median(aPer), median(bPer), median(aIOPS), median(bIOPS)
		out = append(out, r)
	}
	return out
}

func reportPairs(w io.Writer, res []pairResult) {
	if len(res) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "#### Held to the references")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Each pair: the median of the per-round ratios A ÷ B of I/Os per process CPU-second (the I/Os the device completed where measured, marked d; in the steady-state window, marked w: the process tree's CPU and the device's I/Os over the same seconds, each tool's set-up left out) and of IOPS; beside them each side's median. Above 1 is better for A.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| workload | A | B | rounds | I/Os per CPU-s A ÷ B | goal | per-round ratios | IOPS A ÷ B | A: I/Os per CPU-s | B: I/Os per CPU-s | A: IOPS | B: IOPS |")
	fmt.Fprintln(w, "| --- | --- | --- | --: | --: | --- | --- | --: | --: | --: | --: | --: |")
	for _, r := range res {
		g := strings.TrimSpace(r.goal.String() + " " + r.goal.met(r.perCPU))
		if r.rounds == 0 {
			fmt.Fprintf(w, "| %s | %s | %s | 0 | – | %s | | – | | | | |\n", r.workload, r.a, r.b, g)
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s | %d | **%.3f** | %s | %s | %.3f | %.0f%s | %.0f%s | %.0f | %.0f |\n",
			r.workload, r.a, r.b, r.rounds, r.perCPU, g, ratios(r.rounds_), r.iops, r.aPerCPU, mark(r.aDevice, r.aWindow), r.bPerCPU, mark(r.bDevice, r.bWindow), r.aIOPS, r.bIOPS)
	}
}

func mark(device, window bool) string {
	switch {
	case window:
		return " w"
	case device:
		return " d"
	}
	return ""
}
