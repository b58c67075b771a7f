package workload

import (
	"fmt"
	"sort"
	"strings"
)

// Preset is a named access specification from the reference reports. A
// preset fixes the pattern (sizes, % read, % random) and, where the report
// does, the outstanding I/Os; the command line overrides any field.
type Preset struct {
	Name        string
	Description string
	Source      string // report and section it comes from
	Spec        Spec
}

func one(bs int64) []BlockSize { return []BlockSize{{Bytes: bs, Weight: 1}} }

// presets, in the order `ioprobe profiles` lists them.
var presets = []Preset{
	{"random-read", "4KiB 100% read, 100% random", "esx2 Table 1 (Random Read)",
		Spec{BlockSizes: one(4 * KiB), ReadPct: 100, RandomPct: 100}},
	{"random-write", "4KiB 100% write, 100% random", "esx2 Table 1 (Random Write)",
		Spec{BlockSizes: one(4 * KiB), ReadPct: 0, RandomPct: 100}},
	{"sequential-read", "64KiB 100% read, 100% sequential", "esx2 Table 1 (Sequential Read)",
		Spec{BlockSizes: one(64 * KiB), ReadPct: 100, RandomPct: 0}},
	{"sequential-write", "64KiB 100% write, 100% sequential", "esx2 Table 1 (Sequential Write)",
		Spec{BlockSizes: one(64 * KiB), ReadPct: 0, RandomPct: 0}},
	{"file-server", "8KiB, 90% read, 75% random", "esg appendix: File Server workload",
		Spec{BlockSizes: one(8 * KiB), ReadPct: 90, RandomPct: 75}},
	{"oltp", "8KiB, 67% read, 100% random", "esg appendix: OLTP workload",
		Spec{BlockSizes: one(8 * KiB), ReadPct: 67, RandomPct: 100}},
	{"exchange-db", "4KiB, 67% read, 100% random", "esg appendix: Exchange Database workload",
		Spec{BlockSizes: one(4 * KiB), ReadPct: 67, RandomPct: 100}},
	{"log", "64KiB, 100% write, 100% sequential", "esg appendix: Log workload",
		Spec{BlockSizes: one(64 * KiB), ReadPct: 0, RandomPct: 0}},
	{"video-on-demand", "512KiB, 100% read, 100% sequential", "esg appendix: Video on Demand workload",
		Spec{BlockSizes: one(512 * KiB), ReadPct: 100, RandomPct: 0}},
	{"cpu-cost", "8KiB, 50% read, 50% random", "esx35: CPU cost per I/O experiment",
		Spec{BlockSizes: one(8 * KiB), ReadPct: 50, RandomPct: 50}},
	{"canary", "4KiB random read, 1 outstanding, 20 IOPS: a latency watch that costs nothing", "ioprobe: exporter canary",
		Spec{BlockSizes: one(4 * KiB), ReadPct: 100, RandomPct: 100, QueueDepth: 1, RateIOPS: 20}},
	{"all-in-one", "Iometer's \"All in one\": 29 lines, 512B-256KiB at 100/75/50/25/0% read", "Iometer 1.1.0 default specs (src/AccessSpecList.cpp, Windows build)",
		Spec{Lines: allInOne()}},
	// The write canary: what a database's log waits for (a small write,
	// then fdatasync), at a rate that costs the device nothing: 5 × 4 KiB
	// a second is 1.77 GB a day (0.5% of the endurance of a 1 TB SSD
	// rated 600 TBW over 5 years), rewriting the same 1 MiB. The sync
	// engine flushes as etcd and PostgreSQL do, with fdatasync(2) in the
	// writing thread: io_uring's IORING_OP_FSYNC goes through a kernel
	// worker thread, one more wake-up per flush that the databases do not
	// pay. See docs/configuration.md, "The write canary".
	{"canary-write", "4KiB sequential write + fdatasync each, 1 outstanding, 5 IOPS, 1MiB region: a durable-write watch", "ioprobe: exporter canary (etcd's WAL pattern)",
		Spec{BlockSizes: one(4 * KiB), ReadPct: 0, RandomPct: 0, QueueDepth: 1, RateIOPS: CanaryWriteIOPS,
			RegionBytes: CanaryWriteRegion, Fdatasync: 1, Engine: EngineSync}},
}

// allInOne is Iometer's "All in one" access specification as Iometer
// 1.1.0 ships it (iometer-org/iometer, src/AccessSpecList.cpp,
// InsertDefaultSpecs, with IOMTR_SETTING_USE_NEW_ACCESS_SPEC as its
// Windows project files define it; the manager is a Windows program):
// every default specification as one line, the 100% shared as evenly as
// Iometer does it (the first 100 mod n lines one more). Iometer's
// alignment 0 is the sector: here 0 is the smallest size, 512 bytes.
func allInOne() []Line {
	type row struct {
		size          int64
		reads         []int
		random, align int64
	}
	rows := []row{
		{512, []int{100, 75, 50, 25, 0}, 0, 0},
		{4 * KiB, []int{100, 75, 50, 25, 0}, 0, 0},
		{4 * KiB, []int{100, 50, 0}, 100, 4 * KiB},
		{16 * KiB, []int{100, 75, 50, 25, 0}, 0, 0},
		{32 * KiB, []int{100, 75, 50, 25, 0}, 0, 0},
		{64 * KiB, []int{100, 50, 0}, 0, 0},
		{256 * KiB, []int{100, 50, 0}, 0, 0},
	}
	var out []Line
	for _, r := range rows {
		for _, rd := range r.reads {
			out = append(out, Line{Bytes: r.size, ReadPct: rd, RandomPct: int(r.random), Align: r.align}) // burst 1
		}
	}
	n := len(out)
	for i := range out {
		out[i].Share = TotalShare / n
		if i < TotalShare%n {
			out[i].Share++
		}
	}
	return out
}

// The write canary's rate and region (canary-write).
const (
	CanaryWriteIOPS   = 5
	CanaryWriteRegion = 1 * MiB
)

// RegionWithin is the access region of s on a target of size bytes: the
// spec's own region when it is set and smaller (a profile such as
// canary-write keeps its writes on the same few blocks), else the whole
// target. The daemon sizes its targets and runs jobs over them.
func (s *Spec) RegionWithin(size int64) int64 {
	if s.RegionBytes > 0 && s.RegionBytes < size {
		return s.RegionBytes
	}
	return size
}

// Presets returns every preset in listing order.
func Presets() []Preset {
	out := make([]Preset, len(presets))
	copy(out, presets)
	return out
}

// LookupPreset finds a preset by name (case-insensitive; "_" and "-" are the
// same). The error lists the known names.
func LookupPreset(name string) (Preset, error) {
	key := normalizeName(name)
	for _, p := range presets {
		if normalizeName(p.Name) == key {
			p.Spec.BlockSizes = append([]BlockSize(nil), p.Spec.BlockSizes...)
			p.Spec.Lines = append([]Line(nil), p.Spec.Lines...)
			p.Spec.Name = p.Name
			return p, nil
		}
	}
	names := make([]string, len(presets))
	for i, p := range presets {
		names[i] = p.Name
	}
	sort.Strings(names)
	return Preset{}, fieldErr("--profile", name, "unknown profile (known: %s)", strings.Join(names, ", "))
}

func normalizeName(s string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "_", "-")
}

// String renders a preset as one listing line.
func (p Preset) String() string {
	return fmt.Sprintf("%-17s %s", p.Name, p.Description)
}
