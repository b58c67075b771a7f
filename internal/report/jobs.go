package report

import (
	"math"
	"slices"
	"strconv"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// jobsRun returns the jobs of a point that ran several at once (nil for
// one job: its figures are the run's).
func jobsRun(r *result.Result) []result.Job {
	if len(r.Summary.Jobs) < 2 {
		return nil
	}
	return r.Summary.Jobs
}

// jobsWorkloadTable is the header's workload of a point that ran several
// jobs at once: a line for each job.
func jobsWorkloadTable(jobs []result.Job) *table {
	t := &table{align: "l"}
	for _, j := range jobs {
		t.add(workloadLine(j.Workload))
	}
	return t
}

// jobsTable is a row per job of a point run at once and the point's
// total (result.ViewJobs).
func jobsTable(r *result.Result) *table {
	t := &table{}
	head := []string{"Per job"}
	for _, id := range result.ViewJobs {
		f := id.Figure()
		h := f.Short
		if f.Unit == result.UnitLatency {
			h = f.Stat.Short() + " " + f.Unit.Symbol()
		}
		head = append(head, h)
	}
	// When a job ended on its own (its budget, its runtime), each row's
	// rates are over its own time: a column says that time.
	own := false
	for _, j := range r.Summary.Jobs {
		own = own || j.EndedAfterSeconds > 0
	}
	if own {
		head = append(head, "own s")
	}
	t.add(head...)
	row := func(name string, s *result.Summary) {
		cells := []string{name}
		for _, id := range result.ViewJobs {
			cells = append(cells, figureCell(id.Figure(), s))
		}
		if own {
			cells = append(cells, strconv.FormatFloat(result.Value(result.FigElapsed, s), 'f', 2, 64))
		}
		t.add(cells...)
	}
	for i := range r.Summary.Jobs {
		j := &r.Summary.Jobs[i]
		row("  "+j.Name, &j.Summary)
	}
	row("  total", &r.Summary)
	return t
}

// csvRows are the CSV rows of a result: for a point that ran several jobs
// at once, a row per job (its workload and figures, the point's other
// columns) before the point's total; else the result alone.
func csvRows(r *result.Result) []*result.Result {
	jobs := jobsRun(r)
	if jobs == nil {
		return []*result.Result{r}
	}
	out := make([]*result.Result, 0, len(jobs)+1)
	for i := range jobs {
		j := jobs[i]
		jr := *r
		jr.Workload = j.Workload
		jr.Summary = j.Summary
		jr.Summary.Jobs = nil
		jr.Histogram = j.Histogram
		out = append(out, &jr)
	}
	total := *r
	total.Workload = measuredMix(r.Workload, jobs)
	return append(out, &total)
}

// measuredMix is the workload columns of a point's total row: the mix its
// jobs measured together, not its first job's. read_pct is the share of
// reads in the I/Os measured; random_pct each job's in proportion to its
// I/Os; block_sizes every job's sizes, each weighted by the I/Os measured
// in it (a job's I/Os shared over its sizes by its own weights: exact
// for a job of one size).
func measuredMix(w result.Workload, jobs []result.Job) result.Workload {
	var ops, reads, random float64
	weights := map[int64]float64{}
	var order []int64
	for _, j := range jobs {
		n := float64(j.Ops)
		ops += n
		reads += float64(j.ReadOps)
		random += n * float64(j.Workload.RandomPct)
		var sum float64
		for _, b := range j.Workload.BlockSizes {
			sum += float64(b.Weight)
		}
		for _, b := range j.Workload.BlockSizes {
			if _, ok := weights[b.Bytes]; !ok {
				order = append(order, b.Bytes)
			}
			if sum > 0 {
				weights[b.Bytes] += n * float64(b.Weight) / sum
			}
		}
	}
	if ops == 0 {
		return w
	}
	w.ReadPct = int(math.Round(100 * reads / ops))
	w.RandomPct = int(math.Round(random / ops))
	slices.Sort(order)
	w.BlockSizes = nil
	for _, b := range order {
		if n := int(math.Round(weights[b])); n > 0 {
			w.BlockSizes = append(w.BlockSizes, result.BlockSize{Bytes: b, Weight: n})
		}
	}
	return w
}
