package report

import (
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
	t.add(head...)
	row := func(name string, s *result.Summary) {
		cells := []string{name}
		for _, id := range result.ViewJobs {
			cells = append(cells, figureCell(id.Figure(), s))
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
	return append(out, r)
}
