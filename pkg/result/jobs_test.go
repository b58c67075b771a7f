package result

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// jobOf makes a job of r with the given reads and writes (8 KiB each), in
// clones of the given sizes.
func jobOf(name string, reads, writes []int64, clones ...int) Job {
	j := Job{Name: name, Workload: Workload{Name: name, QueueDepth: 4, Workers: len(clones)},
		Histogram: Histograms{Read: NewHistogram(), Write: NewHistogram()}}
	at := 0
	for w, n := range clones {
		c := Clone{Worker: w, Histogram: Histograms{Read: NewHistogram(), Write: NewHistogram()}}
		for i := at; i < at+n; i++ {
			if i < len(reads) {
				c.Histogram.Read.Record(reads[i])
				c.ReadBytes += 8192
			} else {
				c.Histogram.Write.Record(writes[i-len(reads)])
				c.WriteBytes += 8192
			}
		}
		at += n
		c.SetFromHistograms(c.Histogram)
		j.Histogram.Add(c.Histogram)
		j.ReadBytes += c.ReadBytes
		j.WriteBytes += c.WriteBytes
		j.Clones = append(j.Clones, c)
	}
	j.SetFromHistograms(j.Histogram)
	return j
}

// Jobs merge job by job and clone by clone: counts and latencies exact,
// rates and CPU the merged run's in proportion to each job's I/Os, so
// that the jobs add up to the run; the inputs are left alone.
func TestMergeJobs(t *testing.T) {
	a := run("h1", 8, latencies(3000, 100_000, 50_000, 1), latencies(1000, 300_000, 90_000, 2), 4, 30)
	b := run("h2", 8, latencies(2000, 120_000, 40_000, 3), latencies(500, 250_000, 70_000, 4), 4, 10)
	for _, r := range []*Result{a, b} {
		reads, writes := r.Histogram.Read.Count(), r.Histogram.Write.Count()
		rl, wl := latencies(int(reads), 100_000, 50_000, 7), latencies(int(writes), 300_000, 90_000, 8)
		r.Summary.Jobs = []Job{jobOf("rr", rl, nil, int(reads)/2, int(reads)-int(reads)/2), jobOf("sw", nil, wl, int(writes))}
		r.Summary.SetJobFigures()
	}
	m, err := Merge(a, b)
	require.NoError(t, err)
	require.Len(t, m.Summary.Jobs, 2)
	rr, sw := m.Summary.Jobs[0], m.Summary.Jobs[1]
	require.Equal(t, uint64(5000), rr.ReadOps)
	require.Zero(t, rr.WriteOps)
	require.Equal(t, uint64(1500), sw.WriteOps)
	require.Equal(t, a.Summary.Jobs[0].ReadBytes+b.Summary.Jobs[0].ReadBytes, rr.ReadBytes)
	require.Len(t, rr.Clones, 2)
	require.Equal(t, a.Summary.Jobs[0].Clones[1].ReadOps+b.Summary.Jobs[0].Clones[1].ReadOps, rr.Clones[1].ReadOps)
	h := NewHistogram()
	h.Merge(a.Summary.Jobs[0].Histogram.Read)
	h.Merge(b.Summary.Jobs[0].Histogram.Read)
	require.Equal(t, LatencyOf(h), rr.ReadLatency)
	require.InEpsilon(t, m.Summary.IOPS, rr.IOPS+sw.IOPS, 1e-12, "jobs add up to the run")
	require.InEpsilon(t, m.Summary.IOPS*5000/6500, rr.IOPS, 1e-12)
	require.InEpsilon(t, m.Summary.CPU.ProcessUserSeconds, rr.CPU.ProcessUserSeconds+sw.CPU.ProcessUserSeconds, 1e-12)
	require.InEpsilon(t, m.Summary.CPU.ProcessCPUSecondsPerIO, rr.CPU.ProcessCPUSecondsPerIO, 1e-9, "a job's CPU per I/O is the run's")
	require.Equal(t, uint64(3000), a.Summary.Jobs[0].ReadOps, "merging leaves its inputs alone")
	require.Equal(t, uint64(3000), a.Summary.Jobs[0].Histogram.Read.Count())

	// A job's JSON is its name, workload and figures, flat.
	data, err := json.Marshal(rr)
	require.NoError(t, err)
	var flat map[string]any
	require.NoError(t, json.Unmarshal(data, &flat))
	for _, k := range []string{"name", "workload", "ops", "read_ops", "iops", "latency", "read_latency", "cpu", "histogram", "clones"} {
		require.Contains(t, flat, k)
	}
	require.NotContains(t, flat, "jobs")
	require.NotContains(t, flat, "device")
}
