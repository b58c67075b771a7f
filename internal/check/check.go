// Package check holds ioprobe's verdicts: a named workload that answers
// one question about a storage ("is it fast enough for etcd?"), and the
// rule that judges its result against a published threshold. `ioprobe
// check NAME` runs one; a new check is one more entry in All.
package check

import (
	"fmt"
	"time"

	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// Check is one question and how to answer it.
type Check struct {
	Name string // the subcommand: ioprobe check NAME
	// Short says what it answers; Source where its workload and threshold
	// come from.
	Short, Source string
	// Spec is the workload, run for duration.
	Spec func(duration time.Duration) workload.Spec
	// DefaultDuration is long enough for a stable verdict on storage that
	// passes (see each check).
	DefaultDuration time.Duration
	// Judge reads the verdict from a clean run's result.
	Judge func(r *result.Result) Verdict
}

// Verdict is a check's answer with the figure behind it.
type Verdict struct {
	Check     string  `json:"check"`
	Pass      bool    `json:"pass"`
	Figure    string  `json:"figure"`    // what was compared, e.g. "fdatasync p99"
	Measured  float64 `json:"measured"`  // its value (seconds for a latency)
	Threshold float64 `json:"threshold"` // the published limit, same unit
	Samples   uint64  `json:"samples"`   // how many operations the figure comes from
	Reason    string  `json:"reason"`    // one sentence: the verdict and why
}

// All lists the checks, by name.
func All() []Check { return []Check{etcd()} }

// Lookup finds a check by name.
func Lookup(name string) (Check, bool) {
	for _, c := range All() {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

// EtcdThreshold is etcd's guidance: the 99th percentile of WAL fdatasync
// (wal_fsync_duration_seconds) under 10 ms.
const EtcdThreshold = 10 * time.Millisecond

// etcd is etcd's documented storage test, fio --rw=write --ioengine=sync
// --fdatasync=1 --size=22m --bs=2300: sequential small writes, each
// followed by fdatasync, one outstanding. ioprobe writes with O_DIRECT, so
// the 2300-byte buffered write becomes the 4 KiB page that the kernel's
// writeback would send (what the device sees either way); the region is
// etcd's 22 MiB, rewritten in turn.
func etcd() Check {
	return Check{
		Name:   "etcd",
		Short:  "is this storage fast enough for etcd's write-ahead log? (p99 fdatasync under 10 ms)",
		Source: "etcd's hardware guidance and its fio test (fio --rw=write --ioengine=sync --fdatasync=1 --size=22m --bs=2300)",
		Spec: func(d time.Duration) workload.Spec {
			return workload.Spec{
				Name:        "etcd-wal",
				BlockSizes:  []workload.BlockSize{{Bytes: 4 * workload.KiB, Weight: 1}},
				ReadPct:     0,
				RandomPct:   0,
				QueueDepth:  1,
				Workers:     1,
				RegionBytes: 22 * workload.MiB,
				Duration:    d,
				Engine:      workload.EngineSync,
				Fdatasync:   1,
			}.WithDefaults()
		},
		// 30 s gives storage that passes (under 10 ms p99, so some
		// hundreds of fdatasyncs a second at least) thousands of samples:
		// the p99 is then set by tens of the slowest, not one.
		DefaultDuration: 30 * time.Second,
		Judge: func(r *result.Result) Verdict {
			v := Verdict{Check: "etcd", Figure: "fdatasync p99", Threshold: EtcdThreshold.Seconds()}
			if r.Summary.Sync == nil || r.Summary.Sync.Ops == 0 {
				v.Reason = "no fdatasync completed: nothing to judge"
				return v
			}
			v.Samples = r.Summary.Sync.Ops
			v.Measured = r.Summary.Sync.Latency.Percentiles["99"]
			v.Pass = v.Measured < v.Threshold
			verdict := "PASS"
			rel := "under"
			if !v.Pass {
				verdict, rel = "FAIL", "not under"
			}
			v.Reason = fmt.Sprintf("%s: 99th percentile of %d fdatasyncs is %.3f ms, %s etcd's %.0f ms", verdict, v.Samples, v.Measured*1e3, rel, v.Threshold*1e3)
			return v
		},
	}
}
