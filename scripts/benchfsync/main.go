// Command benchfsync runs ioprobe and fio side by side on one file with a
// flush after every write (etcd's WAL pattern), interleaved, and compares
// their 99th-percentile fdatasync latency. scripts/bench-fsync.sh builds and
// runs it.
//
//	benchfsync -ioprobe BIN [-fio fio] [-dir /tmp] [-rounds 5] [-duration 10s] [-size 64MiB] [-engine sync] [-fio-engine E] [-bs 4k]
//
// The file is created and filled by ioprobe in a new directory under -dir
// (removed at the end); fio then writes the same file. Each round runs both
// tools once, in turn (the order flips every round, so neither always comes
// second): ioprobe run --fdatasync 1 --qd 1 --read-pct 0 --random-pct 0 and
// fio --rw=write --fdatasync=1 --ioengine=E --direct=1, where E is the
// engine that does what ioprobe's does (psync for sync: pwrite then
// fdatasync; io_uring for uring: IORING_OP_WRITE then IORING_OP_FSYNC,
// each flush submitted alone once the writes before it completed), unless
// -fio-engine says otherwise. Around each run
// it reads the kernel's flush count of the file's device
// (/sys/class/block/DEV/stat field 16), to show how many flushes each
// fdatasync cost. The report (Markdown) goes to standard output.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

type options struct {
	ioprobe, fio, dir, size, engine, bs string
	fioEngine                           string
	rounds                              int
	duration                            time.Duration
}

// sample is one run of one tool.
type sample struct {
	tool      string
	round     int
	syncs     uint64  // flush calls the tool reports
	p99, mean float64 // their latency, seconds
	kernel    uint64  // flush requests the device completed meanwhile
}

func main() {
	var o options
	flag.StringVar(&o.ioprobe, "ioprobe", "bin/ioprobe", "the ioprobe binary")
	flag.StringVar(&o.fio, "fio", "fio", "the fio binary")
	flag.StringVar(&o.dir, "dir", "/tmp", "directory (on the storage to measure) for the test file")
	flag.StringVar(&o.size, "size", "64MiB", "size of the test file")
	flag.StringVar(&o.engine, "engine", "sync", "ioprobe's engine (sync is fio's psync; uring)")
	flag.StringVar(&o.fioEngine, "fio-engine", "", "fio's ioengine (default: the one like ioprobe's engine: psync for sync, io_uring for uring)")
	flag.StringVar(&o.bs, "bs", "4k", "transfer size")
	flag.IntVar(&o.rounds, "rounds", 5, "rounds (each runs both tools once)")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "run time of each run")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "benchfsync:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.rounds < 1 {
		return errors.New("-rounds must be at least 1")
	}
	if o.fioEngine == "" {
		o.fioEngine = map[workload.EngineName]string{workload.EngineSync: "psync", workload.EngineURing: "io_uring"}[workload.EngineName(o.engine)]
		if o.fioEngine == "" {
			return fmt.Errorf("-engine %q: give -fio-engine too", o.engine)
		}
	}
	size, err := workload.ParseSize(o.size)
	if err != nil {
		return fmt.Errorf("-size: %w", err)
	}
	bs, err := workload.ParseSize(o.bs)
	if err != nil {
		return fmt.Errorf("-bs: %w", err)
	}
	dir, err := os.MkdirTemp(o.dir, "bench-fsync-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "probe.dat")

	// ioprobe creates and fills the file (so no write allocates blocks)
	// and names the device under it.
	prep, err := ioprobeRun(o, file, "--duration", "100ms")
	if err != nil {
		return fmt.Errorf("preparing %s: %w", file, err)
	}
	dev := prep.Targets[0].Device
	if dev == "" {
		return fmt.Errorf("%s: ioprobe could not name the device under it", file)
	}
	fmt.Fprintf(os.Stderr, "benchfsync: %s on %s, %d rounds of %s\n", file, dev, o.rounds, o.duration)

	var samples []sample
	for r := 1; r <= o.rounds; r++ {
		tools := []string{"ioprobe", "fio"}
		if r%2 == 0 {
			tools[0], tools[1] = tools[1], tools[0]
		}
		for _, tool := range tools {
			before, err := deviceFlushes(dev)
			if err != nil {
				return err
			}
			var s sample
			if tool == "ioprobe" {
				s, err = ioprobeSample(o, file)
			} else {
				s, err = fioSample(o, file, size, bs)
			}
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", r, tool, err)
			}
			after, err := deviceFlushes(dev)
			if err != nil {
				return err
			}
			s.tool, s.round, s.kernel = tool, r, after-before
			fmt.Fprintf(os.Stderr, "benchfsync: round %d %-7s %7d fdatasyncs  p99 %.3f ms  kernel flushes %d\n", r, tool, s.syncs, s.p99*1e3, s.kernel)
			samples = append(samples, s)
		}
	}
	report(o, file, dev, samples)
	return nil
}

func ioprobeRun(o options, file string, extra ...string) (*result.Result, error) {
	args := append([]string{"run", "--target", file, "--allow-destructive", "--size", o.size, "--bs", o.bs,
		"--read-pct", "0", "--random-pct", "0", "--qd", "1", "--engine", o.engine, "--ramp", "0s", "--output", "json"}, extra...)
	out, err := output(o.ioprobe, args...)
	if err != nil {
		return nil, err
	}
	var r result.Result
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("ioprobe's JSON: %w", err)
	}
	return &r, nil
}

func ioprobeSample(o options, file string) (sample, error) {
	r, err := ioprobeRun(o, file, "--fdatasync", "1", "--duration", o.duration.String())
	if err != nil {
		return sample{}, err
	}
	if r.Summary.Sync == nil {
		return sample{}, errors.New("ioprobe's result has no sync section")
	}
	l := r.Summary.Sync.Latency
	return sample{syncs: r.Summary.Sync.Ops, p99: l.Percentiles["99"], mean: l.MeanSeconds}, nil
}

// fioJSON is the part of fio's JSON output read here.
type fioJSON struct {
	Jobs []struct {
		Sync struct {
			LatNs struct {
				N          uint64             `json:"N"`
				Mean       float64            `json:"mean"`
				Percentile map[string]float64 `json:"percentile"`
			} `json:"lat_ns"`
		} `json:"sync"`
	} `json:"jobs"`
}

func fioSample(o options, file string, size, bs int64) (sample, error) {
	out, err := output(o.fio, "--name=fdatasync", "--filename="+file, "--size="+strconv.FormatInt(size, 10),
		"--bs="+strconv.FormatInt(bs, 10), "--rw=write", "--fdatasync=1", "--ioengine="+o.fioEngine, "--direct=1",
		"--time_based", "--runtime="+strconv.FormatFloat(o.duration.Seconds(), 'f', -1, 64), "--output-format=json")
	if err != nil {
		return sample{}, err
	}
	// fio may print notes before its JSON.
	if i := bytes.IndexByte(out, '{'); i > 0 {
		out = out[i:]
	}
	var j fioJSON
	if err := json.Unmarshal(out, &j); err != nil {
		return sample{}, fmt.Errorf("fio's JSON: %w", err)
	}
	if len(j.Jobs) != 1 {
		return sample{}, fmt.Errorf("fio reported %d jobs, want 1", len(j.Jobs))
	}
	l := j.Jobs[0].Sync.LatNs
	p99, ok := l.Percentile["99.000000"]
	if !ok || l.N == 0 {
		return sample{}, errors.New("fio's JSON has no sync latency percentiles (fio older than 3.5?)")
	}
	return sample{syncs: l.N, p99: p99 / 1e9, mean: l.Mean / 1e9}, nil
}

func output(bin string, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %v: %s", bin, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// deviceFlushes reads field 16 of the device's stat (kernels 5.5 and later).
func deviceFlushes(dev string) (uint64, error) {
	b, err := os.ReadFile(filepath.Join("/sys/class/block", dev, "stat"))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 17 {
		return 0, fmt.Errorf("%s: no flush count in its stat (kernel before 5.5)", dev)
	}
	return strconv.ParseUint(f[15], 10, 64)
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func report(o options, file, dev string, samples []sample) {
	fmt.Printf("# fdatasync latency: ioprobe and fio side by side\n\n")
	fmt.Printf("%s on %s, %s sequential writes, one fdatasync after each, QD 1, ioprobe engine %s, fio ioengine %s; %d rounds of %s, interleaved.\n\n",
		file, dev, o.bs, o.engine, o.fioEngine, o.rounds, o.duration)
	fmt.Printf("| round | tool | fdatasyncs | mean (ms) | p99 (ms) | kernel flushes | flushes per fdatasync |\n")
	fmt.Printf("|---|---|---:|---:|---:|---:|---:|\n")
	p99 := map[string][]float64{}
	var ratios []float64
	byRound := map[int]map[string]float64{}
	for _, s := range samples {
		per := 0.0
		if s.syncs > 0 {
			per = float64(s.kernel) / float64(s.syncs)
		}
		fmt.Printf("| %d | %s | %d | %.3f | %.3f | %d | %.3f |\n", s.round, s.tool, s.syncs, s.mean*1e3, s.p99*1e3, s.kernel, per)
		p99[s.tool] = append(p99[s.tool], s.p99)
		if byRound[s.round] == nil {
			byRound[s.round] = map[string]float64{}
		}
		byRound[s.round][s.tool] = s.p99
	}
	for _, m := range byRound {
		if m["fio"] > 0 {
			ratios = append(ratios, m["ioprobe"]/m["fio"])
		}
	}
	mi, mf := median(p99["ioprobe"]), median(p99["fio"])
	fmt.Printf("\nMedian p99: ioprobe %.3f ms, fio %.3f ms: ioprobe/fio %.3f (median of the per-round ratios %.3f).\n",
		mi*1e3, mf*1e3, mi/mf, median(ratios))
}
