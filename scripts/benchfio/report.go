package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ioprobe/ioprobe/internal/cpuacct"
)

// sample is one run of one candidate.
type sample struct {
	workload, candidate string
	round               int
	ops                 float64 // I/Os completed in the tool's run time
	iops                float64
	meanLat, p99Lat     float64 // seconds
	rec                 record
}

func (s sample) tool() string { return strings.SplitN(s.candidate, "-", 2)[0] }

// cpuSeconds is the whole process's CPU: user + system from wait4.
func (s sample) cpuSeconds() float64 { return s.rec.UserSeconds + s.rec.SystemSeconds }

// perCPU is I/Os per second of process CPU; perHost per second of busy host CPU.
func (s sample) perCPU() float64  { return s.ops / s.cpuSeconds() }
func (s sample) perHost() float64 { return s.ops / s.rec.HostBusySeconds }

// others is the CPU, in cores, that the rest of the host was busy with
// while the run lasted: the host's busy time less the tool's own. On a
// shared machine it says how much a run was disturbed.
func (s sample) others() float64 {
	return max(0, s.rec.HostBusySeconds-s.cpuSeconds()) / s.rec.WallSeconds
}

// load reads every run in dir.
func load(dir string) ([]sample, error) {
	recs, err := filepath.Glob(filepath.Join(dir, "*.rec.json"))
	if err != nil {
		return nil, err
	}
	var out []sample
	for _, rp := range recs {
		base := strings.TrimSuffix(filepath.Base(rp), ".rec.json")
		parts := strings.SplitN(base, ".", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("%s: want WORKLOAD.ROUND.CANDIDATE.rec.json", rp)
		}
		round, err := strconv.Atoi(parts[1])
		if err != nil {
			return nil, fmt.Errorf("%s: round: %w", rp, err)
		}
		s := sample{workload: parts[0], round: round, candidate: parts[2]}
		if err := readJSON(rp, &s.rec); err != nil {
			return nil, err
		}
		out = append(out, s)
		i := len(out) - 1
		outPath := filepath.Join(dir, base+".json")
		switch out[i].tool() {
		case "ioprobe":
			err = parseIoprobe(outPath, &out[i])
		case "fio":
			err = parseFio(outPath, &out[i])
		case "bare", "barego":
			err = parseBare(outPath, &out[i])
		case "tiouring":
			err = parseTIOURing(outPath, &out[i])
		default:
			err = fmt.Errorf("%s: candidate %q is none of ioprobe-…, fio-…, bare-…, barego-…, tiouring-…", rp, s.candidate)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func parseIoprobe(path string, s *sample) error {
	var r struct {
		Workload struct {
			Engine       string `json:"engine"`
			EngineReason string `json:"engine_reason"`
		} `json:"workload"`
		Summary struct {
			Ops     float64 `json:"ops"`
			IOPS    float64 `json:"iops"`
			Latency struct {
				Mean        float64            `json:"mean_seconds"`
				Percentiles map[string]float64 `json:"percentiles"`
			} `json:"latency"`
		} `json:"summary"`
	}
	if err := readJSON(path, &r); err != nil {
		return err
	}
	s.ops, s.iops = r.Summary.Ops, r.Summary.IOPS
	s.meanLat, s.p99Lat = r.Summary.Latency.Mean, r.Summary.Latency.Percentiles["99"]
	// ioprobe-ENGINE, or ioprobe-ENGINE-VARIANT (the same engine with
	// other flags).
	if want, _, _ := strings.Cut(s.candidate[len("ioprobe-"):], "-"); r.Workload.Engine != want {
		return fmt.Errorf("%s: candidate %s ran engine %q (%s)", path, s.candidate, r.Workload.Engine, r.Workload.EngineReason)
	}
	return nil
}

// parseFio reads fio's JSON (run with --group_reporting, so jobs[0] is the
// sum of every job, and --lat_percentiles=1, so percentiles are of the
// total latency, submission to completion, like ioprobe's).
func parseFio(path string, s *sample) error {
	type dir struct {
		TotalIOs float64 `json:"total_ios"`
		IOPS     float64 `json:"iops"`
		Lat      struct {
			N          float64            `json:"N"`
			Mean       float64            `json:"mean"`
			Percentile map[string]float64 `json:"percentile"`
		} `json:"lat_ns"`
	}
	var r struct {
		Jobs []struct {
			Read  dir `json:"read"`
			Write dir `json:"write"`
		} `json:"jobs"`
	}
	if err := readJSON(path, &r); err != nil {
		return err
	}
	if len(r.Jobs) != 1 {
		return fmt.Errorf("%s: %d jobs; run fio with --group_reporting", path, len(r.Jobs))
	}
	d := r.Jobs[0].Read
	if r.Jobs[0].Write.TotalIOs > d.TotalIOs {
		d = r.Jobs[0].Write
	}
	s.ops, s.iops = d.TotalIOs, d.IOPS
	s.meanLat, s.p99Lat = d.Lat.Mean/1e9, d.Lat.Percentile["99.000000"]/1e9
	return nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// candidateStats are the medians of one candidate's runs.
type candidateStats struct {
	name                                            string
	runs                                            int
	iops, cpu, hostBusy, perCPU, perHost, mean, p99 float64
	others                                          float64 // cores busy with other work
}

func stats(name string, runs []sample) candidateStats {
	col := func(f func(sample) float64) float64 {
		var xs []float64
		for _, r := range runs {
			xs = append(xs, f(r))
		}
		return median(xs)
	}
	return candidateStats{
		name: name, runs: len(runs),
		iops:     col(func(s sample) float64 { return s.iops }),
		cpu:      col(sample.cpuSeconds),
		hostBusy: col(func(s sample) float64 { return s.rec.HostBusySeconds }),
		perCPU:   col(sample.perCPU),
		perHost:  col(sample.perHost),
		mean:     col(func(s sample) float64 { return s.meanLat }),
		p99:      col(func(s sample) float64 { return s.p99Lat }),
		others:   col(sample.others),
	}
}

// workloadResult is one workload: every candidate, the two winners and the
// medians of the winners' per-round ratios (ioprobe ÷ fio).
type workloadResult struct {
	name                             string
	candidates                       []candidateStats
	ioprobe, fio                     candidateStats
	rounds                           int
	iops, perCPU, perHost, mean, p99 float64
}

func analyse(all []sample) []workloadResult {
	byWorkload := map[string]map[string][]sample{}
	for _, s := range all {
		if byWorkload[s.workload] == nil {
			byWorkload[s.workload] = map[string][]sample{}
		}
		byWorkload[s.workload][s.candidate] = append(byWorkload[s.workload][s.candidate], s)
	}
	var names []string
	for w := range byWorkload {
		names = append(names, w)
	}
	sort.Strings(names)
	var out []workloadResult
	for _, w := range names {
		res := workloadResult{name: w}
		var cands []string
		for c := range byWorkload[w] {
			cands = append(cands, c)
		}
		sort.Strings(cands)
		best := map[string]candidateStats{}
		for _, c := range cands {
			st := stats(c, byWorkload[w][c])
			res.candidates = append(res.candidates, st)
			tool := byWorkload[w][c][0].tool()
			if b, ok := best[tool]; !ok || st.perCPU > b.perCPU {
				best[tool] = st
			}
		}
		res.ioprobe, res.fio = best["ioprobe"], best["fio"]
		// Pair the winners' runs round by round.
		byRound := func(c string) map[int]sample {
			m := map[int]sample{}
			for _, s := range byWorkload[w][c] {
				m[s.round] = s
			}
			return m
		}
		a, b := byRound(res.ioprobe.name), byRound(res.fio.name)
		var iops, perCPU, perHost, mean, p99 []float64
		for r, x := range a {
			y, ok := b[r]
			if !ok {
				continue
			}
			iops = append(iops, x.iops/y.iops)
			perCPU = append(perCPU, x.perCPU()/y.perCPU())
			perHost = append(perHost, x.perHost()/y.perHost())
			mean = append(mean, x.meanLat/y.meanLat)
			p99 = append(p99, x.p99Lat/y.p99Lat)
		}
		res.rounds = len(iops)
		res.iops, res.perCPU, res.perHost = median(iops), median(perCPU), median(perHost)
		res.mean, res.p99 = median(mean), median(p99)
		out = append(out, res)
	}
	return out
}

func report(w io.Writer, dir string) error {
	all, err := load(dir)
	if err != nil {
		return err
	}
	if len(all) == 0 {
		return fmt.Errorf("no runs in %s", dir)
	}
	pairs, err := readPairs(dir)
	if err != nil {
		return err
	}
	host, err := cpuacct.Reader{}.Host()
	if err != nil {
		return err
	}
	res := analyse(all)
	fmt.Fprintf(w, "Machine: %s, Linux %s, %s, %d logical CPUs.\n\n", host.Hostname, host.Kernel, host.CPUModel, host.LogicalCPUs)
	fmt.Fprintln(w, "Ratios are ioprobe ÷ fio: the median of the per-round ratios of each tool's best candidate (most I/Os per process CPU-second). Above 1 is better for ioprobe, except latency, where below 1 is.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| workload | ioprobe | fio | rounds | IOPS | I/Os per CPU-s | I/Os per host CPU-s | mean latency | p99 latency | other load (cores) |")
	fmt.Fprintln(w, "| --- | --- | --- | --: | --: | --: | --: | --: | --: | --: |")
	for _, r := range res {
		fmt.Fprintf(w, "| %s | %s | %s | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f / %.2f |\n",
			r.name, r.ioprobe.name, r.fio.name, r.rounds, r.iops, r.perCPU, r.perHost, r.mean, r.p99, r.ioprobe.others, r.fio.others)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Other load: the host's busy CPU, less the measured tool's own, during the runs (median; ioprobe's runs / fio's). Above a few tenths of a core the machine was shared while it ran, and the host-CPU column means little.")
	reportPairs(w, pairRatios(all, pairs))
	for _, r := range res {
		fmt.Fprintf(w, "\n#### %s\n\n", r.name)
		fmt.Fprintln(w, "| candidate | runs | IOPS | process CPU s | host busy s | I/Os per CPU-s | I/Os per host CPU-s | mean µs | p99 µs | other load |")
		fmt.Fprintln(w, "| --- | --: | --: | --: | --: | --: | --: | --: | --: | --: |")
		for _, c := range r.candidates {
			mark := ""
			if c.name != "" && (c.name == r.ioprobe.name || c.name == r.fio.name) {
				mark = " **(best)**"
			}
			fmt.Fprintf(w, "| %s%s | %d | %.0f | %.2f | %.2f | %.0f | %.0f | %s | %s | %.2f |\n",
				c.name, mark, c.runs, c.iops, c.cpu, c.hostBusy, c.perCPU, c.perHost, orDash(c.mean*1e6, 2), orDash(c.p99*1e6, 1), c.others)
		}
	}
	return nil
}

// orDash formats v with prec decimals, or "–" when a tool does not report it.
func orDash(v float64, prec int) string {
	if math.IsNaN(v) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}
