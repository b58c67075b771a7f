package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// jobsResult: a fio job file's point of two jobs at once, [rr] (4 KiB
// random reads, numjobs=2) and [sw] (64 KiB writes), their options as
// written, group_reporting as given.
func jobsResult(groupReporting bool) *result.Result {
	r := mixedResult()
	r.Workload.Name = "rr+sw"
	global := []result.FioOption{{Key: "filename", Value: "/dev/nvme0n1"}, {Key: "direct", Value: "1"}, {Key: "time_based", Bare: true},
		{Key: "runtime", Value: "60"}, {Key: "kb_base", Value: "1024"}, {Key: "name", Value: "everyone"}}
	if groupReporting {
		global = append(global, result.FioOption{Key: "group_reporting", Bare: true})
	}
	rr := result.Job{Name: "rr", Workload: result.Workload{Name: "rr", BlockSizes: []result.BlockSize{{Bytes: 4096, Weight: 1}}, ReadPct: 100, RandomPct: 100, QueueDepth: 8, Workers: 2},
		Fio: &result.FioOptions{Job: []result.FioOption{{Key: "readwrite", Value: "randread"}, {Key: "blocksize", Value: "4k"}, {Key: "iodepth", Value: "8"}, {Key: "numjobs", Value: "2"}}, Global: global}}
	sw := result.Job{Name: "sw", Workload: result.Workload{Name: "sw", BlockSizes: []result.BlockSize{{Bytes: 65536, Weight: 1}}, QueueDepth: 4, Workers: 1},
		Fio: &result.FioOptions{Job: []result.FioOption{{Key: "rw", Value: "write"}, {Key: "bs", Value: "64k"}, {Key: "iodepth", Value: "4"}}, Global: global}}
	clone := func(w int, reads, writes int, bs uint64) result.Clone {
		c := result.Clone{Worker: w, Histogram: result.Histograms{
			Read:  histogram(reads, func(i int) int64 { return 90_000 + int64(i%5000) }),
			Write: histogram(writes, func(i int) int64 { return 200_000 + int64(i%7000) })}}
		c.ReadBytes, c.WriteBytes = uint64(reads)*bs, uint64(writes)*bs
		c.SetFromHistograms(c.Histogram)
		return c
	}
	rr.Clones = append(rr.Clones, clone(0, 300_000, 0, 4096), clone(1, 196_300, 0, 4096))
	sw.Clones = []result.Clone{clone(2, 0, 244_450, 65536)}
	for _, j := range []*result.Job{&rr, &sw} {
		j.Histogram = result.Histograms{Read: result.NewHistogram(), Write: result.NewHistogram()}
		for _, c := range j.Clones {
			j.Histogram.Add(c.Histogram)
			j.ReadBytes += c.ReadBytes
			j.WriteBytes += c.WriteBytes
		}
		j.SetFromHistograms(j.Histogram)
	}
	r.Groups = []result.Workload{rr.Workload, sw.Workload}
	r.Summary.Jobs = []result.Job{rr, sw}
	r.Summary.SetJobFigures()
	return r
}

// The text of a point of two jobs at once names both in its workload and
// has a row per job and the total; CSV has a row per job before the
// point's; a single job's outputs have neither (the goldens).
func TestJobsInTextAndCSV(t *testing.T) {
	r := jobsResult(false)
	var b bytes.Buffer
	require.NoError(t, WriteText(&b, r))
	text := b.String()
	require.Regexp(t, `(?m)^Workload +rr: 4 KiB, 100% read, 100% random, QD 8, 2 workers$`, text)
	require.Regexp(t, `(?m)^ +sw: 64 KiB, 0% read, 0% random, QD 4, 1 worker$`, text)
	require.Regexp(t, `(?m)^Per job +I/Os +reads +writes +IOPS +MB/s +mean ms +p99 ms$`, text)
	require.Regexp(t, `(?m)^  rr +496,300 +496,300 +0 `, text)
	require.Regexp(t, `(?m)^  sw +244,450 +0 +244,450 `, text)
	require.Regexp(t, `(?m)^  total +740,750 +496,300 +244,450 `, text)

	b.Reset()
	require.NoError(t, WriteCSV(&b, []*result.Result{r}, true))
	rows, err := csv.NewReader(&b).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 4, "header, a row per job, the total")
	col := func(name string) int {
		for i, h := range rows[0] {
			if h == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return 0
	}
	w, ops, reads := col("workload"), col("ops"), col("read_ops")
	require.Equal(t, []string{"rr", "496300", "496300"}, []string{rows[1][w], rows[1][ops], rows[1][reads]})
	require.Equal(t, []string{"sw", "244450", "0"}, []string{rows[2][w], rows[2][ops], rows[2][reads]})
	require.Equal(t, []string{"rr+sw", "740750", "496300"}, []string{rows[3][w], rows[3][ops], rows[3][reads]})
	// The total row's mix is the one measured (issue 33 item 8): not the
	// first job's 100% read of 4 KiB.
	rp, rnd, sizes := col("read_pct"), col("random_pct"), col("block_sizes")
	require.Equal(t, []string{"100", "100", "4096:1"}, []string{rows[1][rp], rows[1][rnd], rows[1][sizes]})
	require.Equal(t, []string{"0", "0", "65536:1"}, []string{rows[2][rp], rows[2][rnd], rows[2][sizes]})
	require.Equal(t, []string{"67", "67", "4096:496300;65536:244450"}, []string{rows[3][rp], rows[3][rnd], rows[3][sizes]})
}

// A job that ended on its own (issue 33 item 2) has its figures over its
// own time, in every output: its IOPS, the text's column of each job's
// time, the CSV's elapsed_seconds, fio-json's runtime and iops.
func TestJobsWithTheirOwnEnd(t *testing.T) {
	r := jobsResult(false)
	window := r.Summary.ElapsedSeconds
	sw := &r.Summary.Jobs[1]
	sw.EndedAfterSeconds = window / 4
	sw.Clones[0].EndedAfterSeconds = window / 4
	r.Summary.SetJobFigures()
	require.InEpsilon(t, 244_450/(window/4), sw.IOPS, 1e-9, "its I/Os over its own time")
	require.InEpsilon(t, window/4, sw.ElapsedSeconds, 1e-12)
	rr := r.Summary.Jobs[0]
	require.InEpsilon(t, window, rr.ElapsedSeconds, 1e-12, "a job that ran to the end has the window")
	require.InEpsilon(t, r.Summary.IOPS*496_300/740_750, rr.IOPS, 1e-9)

	var b bytes.Buffer
	require.NoError(t, WriteText(&b, r))
	require.Regexp(t, `(?m)^Per job +I/Os +reads +writes +IOPS +MB/s +mean ms +p99 ms +own s$`, b.String())

	b.Reset()
	require.NoError(t, WriteCSV(&b, []*result.Result{r}, true))
	rows, err := csv.NewReader(&b).ReadAll()
	require.NoError(t, err)
	e := slices.Index(rows[0], "elapsed_seconds")
	require.Equal(t, result.Float(window/4), rows[2][e])
	require.Equal(t, result.Float(window), rows[3][e])

	doc := fioJobsDoc(t, r)
	require.Len(t, doc.Jobs, 3)
	require.Equal(t, int64(math.Round(window/4*1000)), doc.Jobs[2].Runtime, "job_runtime: sw's own")
	require.Equal(t, int64(math.Round(window*1000)), doc.Jobs[0].Runtime)
}

type fioJobsTestDoc struct {
	Global json.RawMessage `json:"global options"`
	Jobs   []struct {
		Name    string          `json:"jobname"`
		Group   int             `json:"groupid"`
		Options json.RawMessage `json:"job options"`
		Runtime int64           `json:"job_runtime"`
		Usr     float64         `json:"usr_cpu"`
		Depth   int             `json:"latency_depth"`
		Read    struct {
			IOs uint64 `json:"total_ios"`
		} `json:"read"`
		Write struct {
			IOs uint64 `json:"total_ios"`
		} `json:"write"`
	} `json:"jobs"`
}

func fioJobsDoc(t *testing.T, rs ...*result.Result) fioJobsTestDoc {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, WriteFioJSON(&b, rs))
	var c bytes.Buffer
	require.NoError(t, json.Compact(&c, b.Bytes()))
	var doc fioJobsTestDoc
	require.NoError(t, json.Unmarshal(c.Bytes(), &doc))
	return doc
}

// fio-json reports a fio job file's jobs as fio does: a job per clone,
// options as written under fio's names (blocksize is bs, readwrite rw) in
// fio's order (kb_base first, filename last), without bare options, and
// [global]'s in global options; usr_cpu by each member's runtime.
func TestFioJSONJobsPerClone(t *testing.T) {
	r := jobsResult(false)
	doc := fioJobsDoc(t, r)
	require.JSONEq(t, `{"kb_base":"1024","direct":"1","runtime":"60","name":"everyone","filename":"/dev/nvme0n1:/data/probe.dat"}`, string(doc.Global))
	require.Equal(t, `{"kb_base":"1024","direct":"1","runtime":"60","name":"everyone","filename":"/dev/nvme0n1:/data/probe.dat"}`, string(doc.Global), "fio's order")
	require.Len(t, doc.Jobs, 3)
	for i, want := range []struct {
		name        string
		reads, wrs  uint64
		options     string
		depth       int
		runtimeRuns int64
	}{
		{"rr", 300_000, 0, `{"rw":"randread","bs":"4k","iodepth":"8","numjobs":"2"}`, 8, 1},
		{"rr", 196_300, 0, `{"rw":"randread","bs":"4k","iodepth":"8","numjobs":"2"}`, 8, 1},
		{"sw", 0, 244_450, `{"rw":"write","bs":"64k","iodepth":"4"}`, 4, 1},
	} {
		j := doc.Jobs[i]
		require.Equal(t, want.name, j.Name)
		require.Zero(t, j.Group)
		require.Equal(t, want.reads, j.Read.IOs)
		require.Equal(t, want.wrs, j.Write.IOs)
		require.Equal(t, want.options, string(j.Options))
		require.Equal(t, want.depth, j.Depth)
		require.EqualValues(t, 60003*want.runtimeRuns, j.Runtime)
	}
	// Each clone's CPU is the process's by its share of the I/Os, ÷ its
	// own runtime: they add up to the process's ÷ the run's time.
	var usr float64
	for _, j := range doc.Jobs {
		usr += j.Usr
	}
	require.InDelta(t, 100*r.Summary.CPU.ProcessUserSeconds/r.Summary.ElapsedSeconds, usr, 1e-3)
}

// With group_reporting fio sums a reporting group into one entry: the
// first member's name, the last member's options and latency_depth, the
// members' runtimes summed, so that usr_cpu is their CPU ÷ that sum;
// new_group starts another group.
func TestFioJSONGroupReporting(t *testing.T) {
	r := jobsResult(true)
	doc := fioJobsDoc(t, r)
	require.Len(t, doc.Jobs, 1)
	j := doc.Jobs[0]
	require.Equal(t, "rr", j.Name)
	require.Equal(t, `{"rw":"write","bs":"64k","iodepth":"4"}`, string(j.Options))
	require.Equal(t, 4, j.Depth)
	require.Equal(t, uint64(496_300), j.Read.IOs)
	require.Equal(t, uint64(244_450), j.Write.IOs)
	require.EqualValues(t, 3*60003, j.Runtime)
	require.InDelta(t, 100*r.Summary.CPU.ProcessUserSeconds/(3*r.Summary.ElapsedSeconds), j.Usr, 1e-3)

	r = jobsResult(true)
	r.Summary.Jobs[1].Fio.Job = append(r.Summary.Jobs[1].Fio.Job, result.FioOption{Key: "new_group", Bare: true})
	doc = fioJobsDoc(t, r, jobsResult(true))
	var got []string
	for _, j := range doc.Jobs {
		got = append(got, j.Name+"/"+strings.Repeat("g", j.Group))
	}
	require.Equal(t, []string{"rr/", "sw/g", "rr/gg"}, got, "new_group: a group of its own; the next point (stonewall) the next group")
	require.EqualValues(t, 2*60003, doc.Jobs[0].Runtime, "rr's two clones summed")
}

// A point of several jobs of ioprobe's own (the business suite's mixed
// run) is a job per job, its options described from its workload.
func TestFioJSONOwnJobs(t *testing.T) {
	r := jobsResult(false)
	for i := range r.Summary.Jobs {
		r.Summary.Jobs[i].Fio, r.Summary.Jobs[i].Clones = nil, nil
	}
	doc := fioJobsDoc(t, r)
	require.JSONEq(t, `{"direct":"1"}`, string(doc.Global))
	require.Len(t, doc.Jobs, 2)
	require.Equal(t, "rr", doc.Jobs[0].Name)
	require.Contains(t, string(doc.Jobs[0].Options), `"numjobs":"2"`)
	require.EqualValues(t, 2*60003, doc.Jobs[0].Runtime, "two workers: fio's two runtimes")
}
